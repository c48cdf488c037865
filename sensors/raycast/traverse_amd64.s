#include "textflag.h"

// Constants broadcast to four lanes, for memory operands.
DATA inf4<>+0(SB)/8, $0x7ff0000000000000
DATA inf4<>+8(SB)/8, $0x7ff0000000000000
DATA inf4<>+16(SB)/8, $0x7ff0000000000000
DATA inf4<>+24(SB)/8, $0x7ff0000000000000
GLOBL inf4<>(SB), RODATA|NOPTR, $32
DATA robust4<>+0(SB)/8, $0x3ff0000000000003
DATA robust4<>+8(SB)/8, $0x3ff0000000000003
DATA robust4<>+16(SB)/8, $0x3ff0000000000003
DATA robust4<>+24(SB)/8, $0x3ff0000000000003
GLOBL robust4<>(SB), RODATA|NOPTR, $32
DATA sign4<>+0(SB)/8, $0x8000000000000000
DATA sign4<>+8(SB)/8, $0x8000000000000000
DATA sign4<>+16(SB)/8, $0x8000000000000000
DATA sign4<>+24(SB)/8, $0x8000000000000000
GLOBL sign4<>(SB), RODATA|NOPTR, $32
// lowbits<>[n] = 1<<n - 1: the children in use.
DATA lowbits<>+0(SB)/1, $0
DATA lowbits<>+1(SB)/1, $1
DATA lowbits<>+2(SB)/1, $3
DATA lowbits<>+3(SB)/1, $7
DATA lowbits<>+4(SB)/1, $15
GLOBL lowbits<>(SB), RODATA|NOPTR, $8

// func intersectAVX2(nodes *node4, packs *triPack, r *ray, tmax float64, stack *stackEntry, depth int) (t float64, tri int32, ok bool)
//
// Geometry.intersectGo's loop: visitAVX2's node test and hitPackAVX2's
// triangle test (see them for the arithmetic, which is the scalar one),
// the entered children sorted nearest first as sortEntered sorts them, a
// stack of stackEntry. ok is false where the stack of depth entries would
// overflow: the caller then runs the Go loop, whose stack grows.
//
// Registers: AX ray, BX nodes, SI packs, DI stack, DX entries on it, CX
// the node (>= 0) or leaf (< 0) at hand, R13 the best triangle; Y0-Y2
// the origin and Y3-Y5 the inverse direction in all lanes, Y13 tmax.
// Everything is VEX-encoded (VMOVSD, VUCOMISD): a legacy SSE instruction
// with the upper halves dirty would stall. Frame: entry distances or
// triangle distances at 0(SP), the sorted distances at 32(SP), the sorted
// children at 64(SP), the node's children at 80(SP).
TEXT ·intersectAVX2(SB), NOSPLIT, $96-61
	MOVQ nodes+0(FP), BX
	MOVQ packs+8(FP), SI
	MOVQ r+16(FP), AX
	MOVQ stack+32(FP), DI
	VBROADCASTSD tmax+24(FP), Y13
	VBROADCASTSD 0(AX), Y0
	VBROADCASTSD 8(AX), Y1
	VBROADCASTSD 16(AX), Y2
	VBROADCASTSD 48(AX), Y3
	VBROADCASTSD 56(AX), Y4
	VBROADCASTSD 64(AX), Y5
	XORQ DX, DX
	XORQ CX, CX
	MOVQ $-1, R13

loop:
	TESTQ CX, CX
	JS leaf

	// Node test (visitAVX2).
	IMUL3Q $216, CX, R8
	ADDQ BX, R8
	VXORPD Y6, Y6, Y6
	MOVQ 80(AX), R9
	VMOVUPD (R8)(R9*1), Y7
	VSUBPD Y0, Y7, Y7
	VMULPD Y3, Y7, Y7
	VMAXPD Y6, Y7, Y6
	MOVQ 88(AX), R9
	VMOVUPD (R8)(R9*1), Y7
	VSUBPD Y1, Y7, Y7
	VMULPD Y4, Y7, Y7
	VMAXPD Y6, Y7, Y6
	MOVQ 96(AX), R9
	VMOVUPD (R8)(R9*1), Y7
	VSUBPD Y2, Y7, Y7
	VMULPD Y5, Y7, Y7
	VMAXPD Y6, Y7, Y6
	VMOVUPD inf4<>(SB), Y8
	MOVQ 104(AX), R9
	VMOVUPD (R8)(R9*1), Y7
	VSUBPD Y0, Y7, Y7
	VMULPD Y3, Y7, Y7
	VMINPD Y8, Y7, Y8
	MOVQ 112(AX), R9
	VMOVUPD (R8)(R9*1), Y7
	VSUBPD Y1, Y7, Y7
	VMULPD Y4, Y7, Y7
	VMINPD Y8, Y7, Y8
	MOVQ 120(AX), R9
	VMOVUPD (R8)(R9*1), Y7
	VSUBPD Y2, Y7, Y7
	VMULPD Y5, Y7, Y7
	VMINPD Y8, Y7, Y8
	VMULPD robust4<>(SB), Y8, Y8
	VMINPD Y13, Y8, Y8
	VCMPPD $2, Y8, Y6, Y7
	VMOVMSKPD Y7, R9
	MOVL 208(R8), R10
	LEAQ lowbits<>(SB), R11
	MOVBLZX (R11)(R10*1), R10
	ANDL R10, R9
	JZ pop
	POPCNTL R9, R10
	CMPL R10, $1
	JNE several
	BSFL R9, R10
	MOVLQSX 192(R8)(R10*4), CX
	JMP loop

several:
	// Insertion sort of the entered children by entry distance, the
	// earlier child first among equals.
	VMOVUPD Y6, 0(SP)
	VMOVDQU 192(R8), X9
	VMOVDQU X9, 80(SP)
	XORL R10, R10
	XORL R11, R11

sortk:
	BTL R10, R9
	JCC sortnext
	VMOVSD 0(SP)(R10*8), X7
	MOVL R11, R8

sortshift:
	TESTL R8, R8
	JZ sortput
	VMOVSD 24(SP)(R8*8), X8
	VUCOMISD X7, X8
	JLS sortput
	VMOVSD X8, 32(SP)(R8*8)
	MOVL 60(SP)(R8*4), R12
	MOVL R12, 64(SP)(R8*4)
	DECL R8
	JMP sortshift

sortput:
	VMOVSD X7, 32(SP)(R8*8)
	MOVL 80(SP)(R10*4), R12
	MOVL R12, 64(SP)(R8*4)
	INCL R11

sortnext:
	INCL R10
	CMPL R10, $4
	JLT sortk

	// Push all but the nearest, farthest first; go on with the nearest.
	DECL R11

pushk:
	TESTL R11, R11
	JZ pushed
	CMPQ DX, depth+40(FP)
	JAE overflow
	MOVQ DX, R8
	SHLQ $4, R8
	MOVL 64(SP)(R11*4), R12
	MOVL R12, 0(DI)(R8*1)
	VMOVSD 32(SP)(R11*8), X7
	VMOVSD X7, 8(DI)(R8*1)
	INCQ DX
	DECL R11
	JMP pushk

pushed:
	MOVLQSX 64(SP), CX
	JMP loop

leaf:
	// Packet ^cur>>3: triangle.hit on its four lanes, with d broadcast as
	// needed and the origin kept in Y0-Y2. The packet is v0 (bytes 0-95),
	// e1 (96-191), e2 (192-287), each x, y, z rows of four.
	NOTQ CX
	SHRQ $3, CX
	IMUL3Q $288, CX, R8
	ADDQ SI, R8
	VBROADCASTSD 24(AX), Y6
	VBROADCASTSD 32(AX), Y7
	VBROADCASTSD 40(AX), Y8

	// p = d x e2
	VMULPD 256(R8), Y7, Y9
	VMULPD 224(R8), Y8, Y10
	VSUBPD Y10, Y9, Y9
	VMULPD 192(R8), Y8, Y10
	VMULPD 256(R8), Y6, Y11
	VSUBPD Y11, Y10, Y10
	VMULPD 224(R8), Y6, Y11
	VMULPD 192(R8), Y7, Y12
	VSUBPD Y12, Y11, Y11

	// det = e1 . p
	VMULPD 96(R8), Y9, Y12
	VMULPD 128(R8), Y10, Y14
	VADDPD Y14, Y12, Y12
	VMULPD 160(R8), Y11, Y14
	VADDPD Y14, Y12, Y12

	// s = o - v0
	VSUBPD 0(R8), Y0, Y6
	VSUBPD 32(R8), Y1, Y7
	VSUBPD 64(R8), Y2, Y8

	// un = s . p
	VMULPD Y6, Y9, Y9
	VMULPD Y7, Y10, Y10
	VADDPD Y10, Y9, Y9
	VMULPD Y8, Y11, Y11
	VADDPD Y11, Y9, Y9

	// q = s x e1
	VMULPD 160(R8), Y7, Y10
	VMULPD 128(R8), Y8, Y11
	VSUBPD Y11, Y10, Y10
	VMULPD 96(R8), Y8, Y11
	VMULPD 160(R8), Y6, Y14
	VSUBPD Y14, Y11, Y11
	VMULPD 128(R8), Y6, Y14
	VMULPD 96(R8), Y7, Y6
	VSUBPD Y6, Y14, Y14

	// d . q
	VBROADCASTSD 24(AX), Y6
	VMULPD Y10, Y6, Y6
	VBROADCASTSD 32(AX), Y7
	VMULPD Y11, Y7, Y7
	VADDPD Y7, Y6, Y6
	VBROADCASTSD 40(AX), Y7
	VMULPD Y14, Y7, Y7
	VADDPD Y7, Y6, Y6

	// t = e2 . q / det
	VMULPD 192(R8), Y10, Y7
	VMULPD 224(R8), Y11, Y8
	VADDPD Y8, Y7, Y7
	VMULPD 256(R8), Y14, Y8
	VADDPD Y8, Y7, Y7
	VDIVPD Y12, Y7, Y7

	// The determinant's sign on un and vn; adet = |det|.
	VMOVUPD sign4<>(SB), Y8
	VANDPD Y8, Y12, Y10
	VANDNPD Y12, Y8, Y11
	VXORPD Y10, Y9, Y9
	VXORPD Y10, Y6, Y6

	VXORPD Y14, Y14, Y14
	VCMPPD $0x0c, Y14, Y12, Y8     // det != 0
	VCMPPD $0x1d, Y14, Y9, Y10     // un >= 0
	VANDPD Y10, Y8, Y8
	VCMPPD $0x12, Y11, Y9, Y10     // un <= adet
	VANDPD Y10, Y8, Y8
	VCMPPD $0x1d, Y14, Y6, Y10     // vn >= 0
	VANDPD Y10, Y8, Y8
	VADDPD Y6, Y9, Y9
	VCMPPD $0x12, Y11, Y9, Y10     // un+vn <= adet
	VANDPD Y10, Y8, Y8
	VCMPPD $0x1e, Y14, Y7, Y10     // t > 0
	VANDPD Y10, Y8, Y8
	VCMPPD $0x11, Y13, Y7, Y10     // t < tmax
	VANDPD Y10, Y8, Y8
	VMOVMSKPD Y8, R9
	TESTL R9, R9
	JZ pop

	// The nearest lane hit, the lower one among equals.
	VMOVUPD Y7, 0(SP)
	XORL R10, R10

leafk:
	BTL R10, R9
	JCC leafnext
	VMOVSD 0(SP)(R10*8), X7
	VUCOMISD X13, X7
	JCC leafnext
	VBROADCASTSD X7, Y13
	MOVQ CX, R13
	SHLQ $2, R13
	ADDQ R10, R13

leafnext:
	INCL R10
	CMPL R10, $4
	JLT leafk

pop:
	TESTQ DX, DX
	JZ done
	DECQ DX
	MOVQ DX, R8
	SHLQ $4, R8
	VMOVSD 8(DI)(R8*1), X7
	VUCOMISD X13, X7
	JHI pop
	MOVLQSX 0(DI)(R8*1), CX
	JMP loop

done:
	VZEROUPPER
	VMOVSD X13, t+48(FP)
	MOVL R13, tri+56(FP)
	MOVB $1, ok+60(FP)
	RET

overflow:
	VZEROUPPER
	MOVB $0, ok+60(FP)
	RET
