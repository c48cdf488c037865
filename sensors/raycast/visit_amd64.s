#include "textflag.h"

// +Inf and robust (bvh.go) as float64 bits.
DATA inf64<>+0(SB)/8, $0x7ff0000000000000
GLOBL inf64<>(SB), RODATA|NOPTR, $8
DATA robust64<>+0(SB)/8, $0x3ff0000000000003
GLOBL robust64<>(SB), RODATA|NOPTR, $8

// func visitAVX2(r *ray, nd *node4, tmax float64, ts *[4]float64) uint64
//
// Go's operand order is Intel's reversed: VMAXPD A, B, C is Intel's
// VMAXPD C, B, A, which returns A (the second source) where either is NaN.
// So "VMAXPD T0, X, T0" is the scalar "if x > t0 { t0 = x }": a NaN plane
// distance leaves the interval as it is.
TEXT ·visitAVX2(SB), NOSPLIT, $0-40
	MOVQ r+0(FP), AX
	MOVQ nd+8(FP), BX
	MOVQ ts+24(FP), DI
	VBROADCASTSD 0(AX), Y0         // origin
	VBROADCASTSD 8(AX), Y1
	VBROADCASTSD 16(AX), Y2
	VBROADCASTSD 48(AX), Y3        // inverse direction
	VBROADCASTSD 56(AX), Y4
	VBROADCASTSD 64(AX), Y5

	// Entry: t0 = 0, then the near planes.
	VXORPD Y6, Y6, Y6
	MOVQ 80(AX), CX
	VMOVUPD (BX)(CX*1), Y7
	VSUBPD Y0, Y7, Y7
	VMULPD Y3, Y7, Y7
	VMAXPD Y6, Y7, Y6
	MOVQ 88(AX), CX
	VMOVUPD (BX)(CX*1), Y7
	VSUBPD Y1, Y7, Y7
	VMULPD Y4, Y7, Y7
	VMAXPD Y6, Y7, Y6
	MOVQ 96(AX), CX
	VMOVUPD (BX)(CX*1), Y7
	VSUBPD Y2, Y7, Y7
	VMULPD Y5, Y7, Y7
	VMAXPD Y6, Y7, Y6

	// Exit: t1 = +Inf, then the far planes.
	VBROADCASTSD inf64<>(SB), Y8
	MOVQ 104(AX), CX
	VMOVUPD (BX)(CX*1), Y7
	VSUBPD Y0, Y7, Y7
	VMULPD Y3, Y7, Y7
	VMINPD Y8, Y7, Y8
	MOVQ 112(AX), CX
	VMOVUPD (BX)(CX*1), Y7
	VSUBPD Y1, Y7, Y7
	VMULPD Y4, Y7, Y7
	VMINPD Y8, Y7, Y8
	MOVQ 120(AX), CX
	VMOVUPD (BX)(CX*1), Y7
	VSUBPD Y2, Y7, Y7
	VMULPD Y5, Y7, Y7
	VMINPD Y8, Y7, Y8

	// t1 = min(t1 * robust, tmax); entered where t0 <= t1.
	VBROADCASTSD robust64<>(SB), Y9
	VMULPD Y9, Y8, Y8
	VBROADCASTSD tmax+16(FP), Y9
	VMINPD Y9, Y8, Y8
	VCMPPD $2, Y8, Y6, Y7
	VMOVMSKPD Y7, AX
	VMOVUPD Y6, (DI)
	// Back to scalar code: clear the upper halves, or every SSE
	// instruction after this one pays for them.
	VZEROUPPER

	// Only the children in use: mask &= 1<<n - 1.
	MOVL 208(BX), CX
	MOVL $1, DX
	SHLL CX, DX
	DECL DX
	ANDL DX, AX
	MOVQ AX, ret+32(FP)
	RET
