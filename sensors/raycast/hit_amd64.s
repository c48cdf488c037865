#include "textflag.h"

DATA sign64<>+0(SB)/8, $0x8000000000000000
GLOBL sign64<>(SB), RODATA|NOPTR, $8

// func hitPackAVX2(r *ray, p *triPack, tmax float64, ts *[4]float64) uint64
//
// triangle.hit (caster.go) lane by lane; see it for the test. The packet
// is v0 (bytes 0-95), e1 (96-191), e2 (192-287), each x, y, z rows of four.
// Go's operand order is Intel's reversed: VSUBPD A, B, C is C = B - A.
// Multiplying by the sign (+1 or -1) is flipping the sign bit, which is
// what the XORs with the determinant's sign bit do.
TEXT ·hitPackAVX2(SB), NOSPLIT, $0-40
	MOVQ r+0(FP), AX
	MOVQ p+8(FP), BX
	MOVQ ts+24(FP), DI
	VBROADCASTSD 24(AX), Y0        // d
	VBROADCASTSD 32(AX), Y1
	VBROADCASTSD 40(AX), Y2
	VMOVUPD 192(BX), Y3            // e2
	VMOVUPD 224(BX), Y4
	VMOVUPD 256(BX), Y5

	// p = d x e2
	VMULPD Y5, Y1, Y6
	VMULPD Y4, Y2, Y7
	VSUBPD Y7, Y6, Y6              // px = dy*e2z - dz*e2y
	VMULPD Y3, Y2, Y7
	VMULPD Y5, Y0, Y8
	VSUBPD Y8, Y7, Y7              // py = dz*e2x - dx*e2z
	VMULPD Y4, Y0, Y8
	VMULPD Y3, Y1, Y9
	VSUBPD Y9, Y8, Y8              // pz = dx*e2y - dy*e2x

	// det = e1 . p
	VMULPD 96(BX), Y6, Y9
	VMULPD 128(BX), Y7, Y10
	VADDPD Y10, Y9, Y9
	VMULPD 160(BX), Y8, Y10
	VADDPD Y10, Y9, Y9

	// s = o - v0
	VBROADCASTSD 0(AX), Y10
	VSUBPD 0(BX), Y10, Y10
	VBROADCASTSD 8(AX), Y11
	VSUBPD 32(BX), Y11, Y11
	VBROADCASTSD 16(AX), Y12
	VSUBPD 64(BX), Y12, Y12

	// un = s . p
	VMULPD Y10, Y6, Y6
	VMULPD Y11, Y7, Y7
	VADDPD Y7, Y6, Y6
	VMULPD Y12, Y8, Y8
	VADDPD Y8, Y6, Y6

	// q = s x e1
	VMULPD 160(BX), Y11, Y7
	VMULPD 128(BX), Y12, Y8
	VSUBPD Y8, Y7, Y7              // qx = sy*e1z - sz*e1y
	VMULPD 96(BX), Y12, Y8
	VMULPD 160(BX), Y10, Y13
	VSUBPD Y13, Y8, Y8             // qy = sz*e1x - sx*e1z
	VMULPD 128(BX), Y10, Y13
	VMULPD 96(BX), Y11, Y14
	VSUBPD Y14, Y13, Y13           // qz = sx*e1y - sy*e1x

	// d . q and e2 . q
	VMULPD Y7, Y0, Y0
	VMULPD Y8, Y1, Y1
	VADDPD Y1, Y0, Y0
	VMULPD Y13, Y2, Y2
	VADDPD Y2, Y0, Y0
	VMULPD Y7, Y3, Y3
	VMULPD Y8, Y4, Y4
	VADDPD Y4, Y3, Y3
	VMULPD Y13, Y5, Y5
	VADDPD Y5, Y3, Y3
	VDIVPD Y9, Y3, Y3              // t = e2.q / det

	// The determinant's sign: adet = |det|, un and vn with its sign.
	VBROADCASTSD sign64<>(SB), Y10
	VANDPD Y10, Y9, Y11
	VANDNPD Y9, Y10, Y12           // adet = det &^ sign
	VXORPD Y11, Y6, Y6             // un
	VXORPD Y11, Y0, Y0             // vn

	// Hit where det != 0, 0 <= un <= adet, vn >= 0, un+vn <= adet and
	// 0 < t < tmax (ordered, quiet comparisons).
	VXORPD Y13, Y13, Y13
	VCMPPD $0x0c, Y13, Y9, Y14     // det != 0
	VCMPPD $0x1d, Y13, Y6, Y1      // un >= 0
	VANDPD Y1, Y14, Y14
	VCMPPD $0x12, Y12, Y6, Y1      // un <= adet
	VANDPD Y1, Y14, Y14
	VCMPPD $0x1d, Y13, Y0, Y1      // vn >= 0
	VANDPD Y1, Y14, Y14
	VADDPD Y0, Y6, Y2
	VCMPPD $0x12, Y12, Y2, Y1      // un+vn <= adet
	VANDPD Y1, Y14, Y14
	VCMPPD $0x1e, Y13, Y3, Y1      // t > 0
	VANDPD Y1, Y14, Y14
	VBROADCASTSD tmax+16(FP), Y2
	VCMPPD $0x11, Y2, Y3, Y1       // t < tmax
	VANDPD Y1, Y14, Y14
	VMOVMSKPD Y14, AX
	VMOVUPD Y3, (DI)
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET
