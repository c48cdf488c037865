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

// The macros below are the tests, written once for every function here.
// Go's operand order is Intel's reversed: VSUBPD A, B, C is C = B - A, and
// VMAXPD A, B, C is Intel's VMAXPD C, B, A, which returns A (the second
// source) where either is NaN: so "VMAXPD T0, X, T0" is the scalar "if x >
// t0 { t0 = x }", and a NaN plane distance (a ray along a slab, its
// origin on the plane) leaves the interval as it is. VBLENDVPD M, A, B, C
// is C = A where M's sign bit is set, else B. Everything is VEX-encoded
// (VMOVSD, VUCOMISD): a legacy SSE instruction with the upper halves dirty
// stalls for hundreds of cycles on this machine.

// LOAD_RAY broadcasts the ray at AX: its origin to Y0-Y2, its inverse
// direction to Y3-Y5.
#define LOAD_RAY \
	VBROADCASTSD 0(AX), Y0; \
	VBROADCASTSD 8(AX), Y1; \
	VBROADCASTSD 16(AX), Y2; \
	VBROADCASTSD 48(AX), Y3; \
	VBROADCASTSD 56(AX), Y4; \
	VBROADCASTSD 64(AX), Y5

// SLAB_NEAR(off, o, inv) raises the entry distances Y6 of the four
// children of the node at R8 to those of one axis' near planes, whose
// offset in the node the ray at AX holds at off.
#define SLAB_NEAR(off, o, inv) \
	MOVQ off(AX), R9; \
	VMOVUPD (R8)(R9*1), Y7; \
	VSUBPD o, Y7, Y7; \
	VMULPD inv, Y7, Y7; \
	VMAXPD Y6, Y7, Y6

// SLAB_FAR(off, o, inv) lowers the exit distances Y8 likewise.
#define SLAB_FAR(off, o, inv) \
	MOVQ off(AX), R9; \
	VMOVUPD (R8)(R9*1), Y7; \
	VSUBPD o, Y7, Y7; \
	VMULPD inv, Y7, Y7; \
	VMINPD Y8, Y7, Y8

// NODE_TEST is visitScalar's test of one ray (AX; Y0-Y5 from LOAD_RAY)
// against the four children of the node at R8, before tmax (all lanes of
// tmaxv): entry distances in Y6, the children entered in R9's low bits
// (only those in use).
#define NODE_TEST(tmaxv) \
	VXORPD Y6, Y6, Y6; \
	SLAB_NEAR(80, Y0, Y3); \
	SLAB_NEAR(88, Y1, Y4); \
	SLAB_NEAR(96, Y2, Y5); \
	VMOVUPD inf4<>(SB), Y8; \
	SLAB_FAR(104, Y0, Y3); \
	SLAB_FAR(112, Y1, Y4); \
	SLAB_FAR(120, Y2, Y5); \
	VMULPD robust4<>(SB), Y8, Y8; \
	VMINPD tmaxv, Y8, Y8; \
	VCMPPD $2, Y8, Y6, Y7; \
	VMOVMSKPD Y7, R9; \
	MOVL 208(R8), R10; \
	LEAQ lowbits<>(SB), R11; \
	MOVBLZX (R11)(R10*1), R10; \
	ANDL R10, R9

// LOAD_PACKET loads the packet at AX: its origin to Y0-Y2, its inverse
// directions to Y3-Y5, its tmax to Y13.
#define LOAD_PACKET \
	VBROADCASTSD 0(AX), Y0; \
	VBROADCASTSD 8(AX), Y1; \
	VBROADCASTSD 16(AX), Y2; \
	VMOVUPD 128(AX), Y3; \
	VMOVUPD 160(AX), Y4; \
	VMOVUPD 192(AX), Y5; \
	VMOVUPD 224(AX), Y13

// func intersectAVX2(nodes *node4, packs *triPack, r *ray, tmax float64, stack *stackEntry, depth int) (t float64, tri int32, ok bool)
//
// Geometry.intersectGo's loop: NODE_TEST for the four children of a node,
// triangle.hit for the four lanes of a leaf's packet (the same operations
// in the same order, no fused multiply-adds, so the same hits at the very
// same distances), the entered children sorted nearest first as
// sortEntered sorts them, a stack of stackEntry. ok is false where the
// stack of depth entries would overflow: the caller then runs the Go loop,
// whose stack grows.
//
// Registers: AX ray, BX nodes, SI packs, DI stack, DX entries on it, CX
// the node (>= 0) or leaf (< 0) at hand, R13 the best triangle; Y0-Y2
// the origin and Y3-Y5 the inverse direction in all lanes, Y13 tmax.
// Frame: entry distances or
// triangle distances at 0(SP), the sorted distances at 32(SP), the sorted
// children at 64(SP), the node's children at 80(SP).
TEXT ·intersectAVX2(SB), NOSPLIT, $96-61
	MOVQ nodes+0(FP), BX
	MOVQ packs+8(FP), SI
	MOVQ r+16(FP), AX
	MOVQ stack+32(FP), DI
	VBROADCASTSD tmax+24(FP), Y13
	LOAD_RAY
	XORQ DX, DX
	XORQ CX, CX
	MOVQ $-1, R13

loop:
	TESTQ CX, CX
	JS leaf

	// Node test (visitAVX2).
	IMUL3Q $216, CX, R8
	ADDQ BX, R8
	NODE_TEST(Y13)
	TESTL R9, R9
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

// lanebits<> is each lane's bit, for turning a bit set of lanes into a
// mask of lanes.
DATA lanebits<>+0(SB)/8, $1
DATA lanebits<>+8(SB)/8, $2
DATA lanebits<>+16(SB)/8, $4
DATA lanebits<>+24(SB)/8, $8
GLOBL lanebits<>(SB), RODATA|NOPTR, $32

// lanebit4<> is lane l's bit in all four children, row by row.
DATA lanebit4<>+0(SB)/8, $1
DATA lanebit4<>+8(SB)/8, $1
DATA lanebit4<>+16(SB)/8, $1
DATA lanebit4<>+24(SB)/8, $1
DATA lanebit4<>+32(SB)/8, $2
DATA lanebit4<>+40(SB)/8, $2
DATA lanebit4<>+48(SB)/8, $2
DATA lanebit4<>+56(SB)/8, $2
DATA lanebit4<>+64(SB)/8, $4
DATA lanebit4<>+72(SB)/8, $4
DATA lanebit4<>+80(SB)/8, $4
DATA lanebit4<>+88(SB)/8, $4
DATA lanebit4<>+96(SB)/8, $8
DATA lanebit4<>+104(SB)/8, $8
DATA lanebit4<>+112(SB)/8, $8
DATA lanebit4<>+120(SB)/8, $8
GLOBL lanebit4<>(SB), RODATA|NOPTR, $128

// PACKET_SIGNS(inv, lo, near, far, p) ORs into R14 a value that is 0
// where the four lanes of inv share their sign, and puts the offsets of
// the axis' near and far planes (lo: its lo row in a node4) at near(p)
// and far(p), as lane 0's sign picks them (VBLENDVPD reads the same bit):
// packet.setSigns.
#define PACKET_SIGNS(inv, lo, near, far, p) \
	VMOVMSKPD inv, R9; \
	LEAL 1(R9), R10; \
	ANDL $14, R10; \
	ORL R10, R14; \
	ANDL $1, R9; \
	NEGL R9; \
	ANDL $96, R9; \
	LEAQ lo(R9), R10; \
	MOVQ R10, near(p); \
	XORL $96, R9; \
	LEAQ lo(R9), R10; \
	MOVQ R10, far(p)

// SET_SIGNS sets the packet at p's mixed, near and far from its inverse
// directions (Y3, R9, R10 and R14 are scratch).
#define SET_SIGNS(p) \
	XORL R14, R14; \
	VMOVUPD 128(p), Y3; \
	PACKET_SIGNS(Y3, 0, 296, 320, p); \
	VMOVUPD 160(p), Y3; \
	PACKET_SIGNS(Y3, 32, 304, 328, p); \
	VMOVUPD 192(p), Y3; \
	PACKET_SIGNS(Y3, 64, 312, 336, p); \
	MOVQ R14, 288(p)

// PACKET_MIXED(lo, hi, inv) is one axis of PACKET_LANE where lanes differ
// in sign: lo and hi hold the four children's planes less the origin, the
// lane's inverse direction at inv(AX) picks the near one by its sign.
#define PACKET_MIXED(lo, hi, inv) \
	VBROADCASTSD inv(AX), Y14; \
	VBLENDVPD Y14, hi, lo, Y15; \
	VMULPD Y14, Y15, Y15; \
	VMAXPD Y11, Y15, Y11; \
	VBLENDVPD Y14, lo, hi, Y15; \
	VMULPD Y14, Y15, Y15; \
	VMINPD Y12, Y15, Y12

// PACKET_UNIFORM(near, far, inv) is PACKET_MIXED where the planes are
// picked already.
#define PACKET_UNIFORM(near, far, inv) \
	VBROADCASTSD inv(AX), Y14; \
	VMULPD Y14, near, Y15; \
	VMAXPD Y11, Y15, Y11; \
	VMULPD Y14, far, Y15; \
	VMINPD Y12, Y15, Y12

// PACKET_LANE(l, axis) tests lane l of the packet at AX against the four
// children (planes less the origin in Y3-Y8) with visitScalar's
// arithmetic, operation for operation: entry t0 from 0 raised by each
// axis' near distance (VMAXPD keeps t0 where one is NaN), exit t1 from
// +Inf lowered by each far one, widened by robust and clipped to the
// lane's tmax; entered where t0 <= t1. Its entry distances lower the
// children's least entries Y9 where it enters (whether or not the lane is
// at hand: this traversal has always ordered children so), and its bit is
// set in the lanes Y10 of the children it enters.
#define PACKET_LANE(l, axis) \
	VXORPD Y11, Y11, Y11; \
	VMOVUPD inf4<>(SB), Y12; \
	axis(Y3, Y6, (128+8*l)); \
	axis(Y4, Y7, (160+8*l)); \
	axis(Y5, Y8, (192+8*l)); \
	VMULPD robust4<>(SB), Y12, Y12; \
	VPERMPD $(0x55*l), Y13, Y14; \
	VMINPD Y14, Y12, Y12; \
	VCMPPD $2, Y12, Y11, Y15; \
	VMOVUPD inf4<>(SB), Y14; \
	VBLENDVPD Y15, Y11, Y14, Y14; \
	VMINPD Y14, Y9, Y9; \
	VANDPD lanebit4<>+(32*l)(SB), Y15, Y15; \
	VORPD Y15, Y10, Y10

// func intersectPacketAVX2(nodes *node4, packs *triPack, p *packet, mask uint64, stack *packetEntry, depth int) (ok bool)
//
// Geometry.intersect for the lanes in mask of a packet of four rays from
// one origin, the lanes side by side (SIMD across rays, where
// intersectAVX2 goes across a node's children): each child box is tested
// against every lane with visitScalar's arithmetic, the near and far
// planes picked per lane by the sign of its inverse direction (VBLENDVPD
// reads the sign bit), and each triangle of a leaf against every lane with
// triangle.hit's. A node's four children are tested lane by lane
// (PACKET_LANE), four children to a register: the planes less the shared
// origin once per node, no branch per child, and where the lanes share
// their signs (PACKET_SIGNS) no per-lane choice of planes either; a
// lone child to go on with is then found by predicted branches, so that
// the next node's loads need not wait for this node's test, and two are
// ordered without the general insertion sort. A child is
// entered by the lanes at hand that enter its box; it is ordered, and
// skipped when popped, by the least entry distance of the lanes that
// enter it (at hand or not, as this traversal always took it). A leaf's
// triangles in use are tested, not its empty lanes. Hits lower p.tmax and
// set p.tri lane by lane, the lower triangle first among equals. ok is
// false where the stack would overflow: p.tri may then hold lanes already
// hit, p.tmax does not.
//
// Registers: AX packet, BX nodes, SI packs, DI stack, DX entries, CX node
// or leaf, R12 the lanes at hand, R14 0 where the lanes share their signs;
// Y0-Y2 the origin, Y13 tmax; in a node Y3-Y8 its planes less the origin,
// Y9 and Y10 the children's least entries and lanes. Packet: o at 0, d at
// 32 (x, y, z rows of four), inv at 128, tmax at 224, tri at 256, mixed
// at 288, near and far at 296 and 320. Frame:
// the children's entries at 0(SP) and lanes at 32(SP); the entered
// children sorted by entry distance at 64(SP), their refs at 96(SP) and
// lanes at 112(SP); the mask of the lanes at hand in a leaf at 128(SP).
TEXT ·intersectPacketAVX2(SB), NOSPLIT, $160-49
	MOVQ nodes+0(FP), BX
	MOVQ packs+8(FP), SI
	MOVQ p+16(FP), AX
	MOVQ mask+24(FP), R12
	MOVQ stack+32(FP), DI
	LOAD_PACKET
	XORQ DX, DX
	XORQ CX, CX
	// R14 is 0 where every lane's inverse direction has the same sign on
	// each axis (neighbouring beams mostly do): the near and far planes of
	// an axis are then the same for all lanes, at the packet's offsets.
	MOVQ 288(AX), R14

ploop:
	TESTQ CX, CX
	JS pleaf
	IMUL3Q $216, CX, R8
	ADDQ BX, R8
	TESTL R14, R14
	JZ puniform
	// Mixed signs: each axis' lo and hi planes less the origin, the
	// lanes pick theirs.
	VMOVUPD 0(R8), Y3
	VSUBPD Y0, Y3, Y3
	VMOVUPD 32(R8), Y4
	VSUBPD Y1, Y4, Y4
	VMOVUPD 64(R8), Y5
	VSUBPD Y2, Y5, Y5
	VMOVUPD 96(R8), Y6
	VSUBPD Y0, Y6, Y6
	VMOVUPD 128(R8), Y7
	VSUBPD Y1, Y7, Y7
	VMOVUPD 160(R8), Y8
	VSUBPD Y2, Y8, Y8
	VMOVUPD inf4<>(SB), Y9
	VXORPD Y10, Y10, Y10
	PACKET_LANE(0, PACKET_MIXED)
	PACKET_LANE(1, PACKET_MIXED)
	PACKET_LANE(2, PACKET_MIXED)
	PACKET_LANE(3, PACKET_MIXED)
	JMP ptested

puniform:
	// The same signs: near planes less the origin in Y3-Y5, far in Y6-Y8.
	MOVQ 296(AX), R9
	VMOVUPD (R8)(R9*1), Y3
	VSUBPD Y0, Y3, Y3
	MOVQ 304(AX), R9
	VMOVUPD (R8)(R9*1), Y4
	VSUBPD Y1, Y4, Y4
	MOVQ 312(AX), R9
	VMOVUPD (R8)(R9*1), Y5
	VSUBPD Y2, Y5, Y5
	MOVQ 320(AX), R9
	VMOVUPD (R8)(R9*1), Y6
	VSUBPD Y0, Y6, Y6
	MOVQ 328(AX), R9
	VMOVUPD (R8)(R9*1), Y7
	VSUBPD Y1, Y7, Y7
	MOVQ 336(AX), R9
	VMOVUPD (R8)(R9*1), Y8
	VSUBPD Y2, Y8, Y8
	VMOVUPD inf4<>(SB), Y9
	VXORPD Y10, Y10, Y10
	PACKET_LANE(0, PACKET_UNIFORM)
	PACKET_LANE(1, PACKET_UNIFORM)
	PACKET_LANE(2, PACKET_UNIFORM)
	PACKET_LANE(3, PACKET_UNIFORM)

ptested:
	// Y9: each child's least entry distance over the lanes that enter it;
	// Y10: those lanes, as bits. A child is entered by the lanes at hand
	// (R12) among them, if it is in use.
	VMOVQ R12, X15
	VPBROADCASTQ X15, Y15
	VPAND Y15, Y10, Y10
	VPXOR Y15, Y15, Y15
	VPCMPEQQ Y15, Y10, Y15
	VMOVMSKPD Y15, R9
	XORL $15, R9
	MOVL 208(R8), R10
	LEAQ lowbits<>(SB), R11
	MOVBLZX (R11)(R10*1), R10
	ANDL R10, R9
	JZ ppop
	VMOVDQU Y10, 32(SP)
	POPCNTL R9, R10
	CMPL R10, $1
	JNE ptwo
	// One child: found by branches rather than by its bit's index, so
	// that a predicted branch lets the next node's loads start before
	// this node's test is done.
	TESTL $1, R9
	JNZ pone0
	TESTL $2, R9
	JNZ pone1
	TESTL $4, R9
	JNZ pone2
	MOVL 56(SP), R12
	MOVLQSX 204(R8), CX
	JMP ploop

pone0:
	MOVL 32(SP), R12
	MOVLQSX 192(R8), CX
	JMP ploop

pone1:
	MOVL 40(SP), R12
	MOVLQSX 196(R8), CX
	JMP ploop

pone2:
	MOVL 48(SP), R12
	MOVLQSX 200(R8), CX
	JMP ploop

ptwo:
	// Two children, a before b: b first where it is nearer, as the
	// insertion sort orders them; the other pushed.
	CMPL R10, $2
	JNE psort
	CMPQ DX, depth+40(FP)
	JAE poverflow
	BSFL R9, R10
	BSRL R9, R11
	VMOVUPD Y9, 0(SP)
	VMOVSD 0(SP)(R10*8), X7
	VMOVSD 0(SP)(R11*8), X8
	MOVQ DX, R13
	SHLQ $4, R13
	INCQ DX
	VUCOMISD X8, X7
	JHI ptwoswap
	MOVL 192(R8)(R11*4), CX
	MOVL CX, 0(DI)(R13*1)
	MOVL 32(SP)(R11*8), CX
	MOVL CX, 4(DI)(R13*1)
	VMOVSD X8, 8(DI)(R13*1)
	MOVL 32(SP)(R10*8), R12
	MOVLQSX 192(R8)(R10*4), CX
	JMP ploop

ptwoswap:
	MOVL 192(R8)(R10*4), CX
	MOVL CX, 0(DI)(R13*1)
	MOVL 32(SP)(R10*8), CX
	MOVL CX, 4(DI)(R13*1)
	VMOVSD X7, 8(DI)(R13*1)
	MOVL 32(SP)(R11*8), R12
	MOVLQSX 192(R8)(R11*4), CX
	JMP ploop

psort:
	// Insertion sort of the entered children by entry distance, the
	// earlier child first among equals: distances at 64(SP), refs at
	// 96(SP), lanes at 112(SP).
	VMOVUPD Y9, 0(SP)
	XORL R10, R10                      // child
	XORL R11, R11                      // children sorted

psortk:
	BTL R10, R9
	JCC psortnext
	VMOVSD 0(SP)(R10*8), X7
	MOVL R11, R13

pins:
	TESTL R13, R13
	JZ pput
	VMOVSD 56(SP)(R13*8), X8
	VUCOMISD X7, X8
	JLS pput
	VMOVSD X8, 64(SP)(R13*8)
	MOVL 92(SP)(R13*4), CX
	MOVL CX, 96(SP)(R13*4)
	MOVL 108(SP)(R13*4), CX
	MOVL CX, 112(SP)(R13*4)
	DECL R13
	JMP pins

pput:
	VMOVSD X7, 64(SP)(R13*8)
	MOVL 192(R8)(R10*4), CX
	MOVL CX, 96(SP)(R13*4)
	MOVL 32(SP)(R10*8), CX
	MOVL CX, 112(SP)(R13*4)
	INCL R11

psortnext:
	INCL R10
	CMPL R10, $4
	JLT psortk

	// Push all but the nearest, farthest first; go on with the nearest.
	DECL R11

ppush:
	TESTL R11, R11
	JZ ppushed
	CMPQ DX, depth+40(FP)
	JAE poverflow
	MOVQ DX, R13
	SHLQ $4, R13
	MOVL 96(SP)(R11*4), CX
	MOVL CX, 0(DI)(R13*1)
	MOVL 112(SP)(R11*4), CX
	MOVL CX, 4(DI)(R13*1)
	VMOVSD 64(SP)(R11*8), X7
	VMOVSD X7, 8(DI)(R13*1)
	INCQ DX
	DECL R11
	JMP ppush

ppushed:
	MOVLQSX 96(SP), CX
	MOVL 112(SP), R12
	JMP ploop

pleaf:
	NOTQ CX
	MOVL CX, R9
	ANDL $7, R9                        // triangles in the leaf
	SHRQ $3, CX
	IMUL3Q $288, CX, R8
	ADDQ SI, R8
	// The lanes at hand as a mask, in the frame.
	VMOVQ R12, X6
	VPBROADCASTQ X6, Y6
	VPAND lanebits<>(SB), Y6, Y6
	VPCMPEQQ lanebits<>(SB), Y6, Y6
	VMOVDQU Y6, 128(SP)
	XORL R10, R10                      // triangle (lane of the packet)

ptri:
	// p = d x e2, d per ray lane, e2 of this triangle in every lane.
	VBROADCASTSD 192(R8)(R10*8), Y6
	VBROADCASTSD 224(R8)(R10*8), Y7
	VBROADCASTSD 256(R8)(R10*8), Y8
	VMULPD 64(AX), Y8, Y9
	VMULPD 96(AX), Y7, Y10
	VSUBPD Y10, Y9, Y9                 // px = dy*e2z - dz*e2y
	VMULPD 96(AX), Y6, Y10
	VMULPD 32(AX), Y8, Y11
	VSUBPD Y11, Y10, Y10               // py = dz*e2x - dx*e2z
	VMULPD 32(AX), Y7, Y11
	VMULPD 64(AX), Y6, Y14
	VSUBPD Y14, Y11, Y11               // pz = dx*e2y - dy*e2x

	// det = e1 . p
	VBROADCASTSD 96(R8)(R10*8), Y12
	VMULPD Y9, Y12, Y12
	VBROADCASTSD 128(R8)(R10*8), Y14
	VMULPD Y10, Y14, Y14
	VADDPD Y14, Y12, Y12
	VBROADCASTSD 160(R8)(R10*8), Y14
	VMULPD Y11, Y14, Y14
	VADDPD Y14, Y12, Y12

	// s = o - v0
	VBROADCASTSD 0(R8)(R10*8), Y6
	VSUBPD Y6, Y0, Y6
	VBROADCASTSD 32(R8)(R10*8), Y7
	VSUBPD Y7, Y1, Y7
	VBROADCASTSD 64(R8)(R10*8), Y8
	VSUBPD Y8, Y2, Y8

	// un = s . p
	VMULPD Y6, Y9, Y9
	VMULPD Y7, Y10, Y10
	VADDPD Y10, Y9, Y9
	VMULPD Y8, Y11, Y11
	VADDPD Y11, Y9, Y9

	// q = s x e1
	VBROADCASTSD 160(R8)(R10*8), Y3    // e1z
	VMULPD Y3, Y7, Y10                 // sy*e1z
	VBROADCASTSD 128(R8)(R10*8), Y4    // e1y
	VMULPD Y4, Y8, Y11                 // sz*e1y
	VSUBPD Y11, Y10, Y10               // qx
	VBROADCASTSD 96(R8)(R10*8), Y5     // e1x
	VMULPD Y5, Y8, Y11                 // sz*e1x
	VMULPD Y3, Y6, Y14                 // sx*e1z
	VSUBPD Y14, Y11, Y11               // qy
	VMULPD Y4, Y6, Y14                 // sx*e1y
	VMULPD Y5, Y7, Y3                  // sy*e1x
	VSUBPD Y3, Y14, Y14                // qz

	// d . q
	VMULPD 32(AX), Y10, Y3
	VMULPD 64(AX), Y11, Y4
	VADDPD Y4, Y3, Y3
	VMULPD 96(AX), Y14, Y4
	VADDPD Y4, Y3, Y3

	// The barycentric tests first: most triangles tested are missed
	// there, and then neither t nor its division is needed. A lane that
	// passes them gets t = e2 . q / det as before, the same bits.
	VMOVUPD sign4<>(SB), Y5
	VANDPD Y5, Y12, Y6                 // det's sign
	VANDNPD Y12, Y5, Y7                // adet
	VXORPD Y6, Y9, Y9                  // un
	VXORPD Y6, Y3, Y3                  // vn

	VXORPD Y15, Y15, Y15
	VCMPPD $0x0c, Y15, Y12, Y8         // det != 0
	VCMPPD $0x1d, Y15, Y9, Y6          // un >= 0
	VANDPD Y6, Y8, Y8
	VCMPPD $0x12, Y7, Y9, Y6           // un <= adet
	VANDPD Y6, Y8, Y8
	VCMPPD $0x1d, Y15, Y3, Y6          // vn >= 0
	VANDPD Y6, Y8, Y8
	VADDPD Y3, Y9, Y9
	VCMPPD $0x12, Y7, Y9, Y6           // un+vn <= adet
	VANDPD Y6, Y8, Y8
	VANDPD 128(SP), Y8, Y8             // lanes at hand
	VMOVMSKPD Y8, R11
	TESTL R11, R11
	JZ ptrinext

	// t = e2 . q / det
	VBROADCASTSD 192(R8)(R10*8), Y4
	VMULPD Y10, Y4, Y4
	VBROADCASTSD 224(R8)(R10*8), Y5
	VMULPD Y11, Y5, Y5
	VADDPD Y5, Y4, Y4
	VBROADCASTSD 256(R8)(R10*8), Y5
	VMULPD Y14, Y5, Y5
	VADDPD Y5, Y4, Y4
	VDIVPD Y12, Y4, Y4

	VCMPPD $0x1e, Y15, Y4, Y6          // t > 0
	VANDPD Y6, Y8, Y8
	VCMPPD $0x11, Y13, Y4, Y6          // t < tmax
	VANDPD Y6, Y8, Y8
	VMOVMSKPD Y8, R11
	TESTL R11, R11
	JZ ptrinext
	VBLENDVPD Y8, Y4, Y13, Y13         // tmax = t where hit
	MOVQ CX, R13
	SHLQ $2, R13
	ADDQ R10, R13
	BTL $0, R11
	JCC plane1
	MOVQ R13, 256(AX)

plane1:
	BTL $1, R11
	JCC plane2
	MOVQ R13, 264(AX)

plane2:
	BTL $2, R11
	JCC plane3
	MOVQ R13, 272(AX)

plane3:
	BTL $3, R11
	JCC ptrinext
	MOVQ R13, 280(AX)

ptrinext:
	INCL R10
	CMPL R10, R9
	JLT ptri

ppop:
	TESTQ DX, DX
	JZ pdone
	DECQ DX
	MOVQ DX, R8
	SHLQ $4, R8
	VBROADCASTSD 8(DI)(R8*1), Y6
	VCMPPD $2, Y13, Y6, Y7             // entry <= tmax, lane by lane
	VMOVMSKPD Y7, R9
	ANDL 4(DI)(R8*1), R9
	JZ ppop
	MOVL R9, R12
	MOVLQSX 0(DI)(R8*1), CX
	JMP ploop

pdone:
	VMOVUPD Y13, 224(AX)
	VZEROUPPER
	MOVB $1, ok+48(FP)
	RET

poverflow:
	VZEROUPPER
	MOVB $0, ok+48(FP)
	RET

// lowmask<> row n (32 bytes) has the children in use of a node of n.
DATA lowmask<>+32(SB)/8, $-1
DATA lowmask<>+64(SB)/8, $-1
DATA lowmask<>+72(SB)/8, $-1
DATA lowmask<>+96(SB)/8, $-1
DATA lowmask<>+104(SB)/8, $-1
DATA lowmask<>+112(SB)/8, $-1
DATA lowmask<>+128(SB)/8, $-1
DATA lowmask<>+136(SB)/8, $-1
DATA lowmask<>+144(SB)/8, $-1
DATA lowmask<>+152(SB)/8, $-1
GLOBL lowmask<>(SB), RODATA|NOPTR, $160

// func visitPacketAVX2(nd *node4, p *packet, mask uint64, lanes *[4]int32, entry *[4]float64)
//
// intersectPacketAVX2's node test on its own, for the hierarchy over
// instances: lanes[k] is the set of the lanes in mask that enter child k
// before their p.tmax (0 for none), entry[k] the least entry distance of
// the lanes that enter it (at hand or not; read only where lanes[k] is
// not 0). Lane by lane as intersectPacketAVX2 tests a node, the lanes'
// own planes picked per lane.
TEXT ·visitPacketAVX2(SB), NOSPLIT, $0-40
	MOVQ nd+0(FP), R8
	MOVQ p+8(FP), AX
	MOVQ mask+16(FP), R12
	MOVQ lanes+24(FP), SI
	MOVQ entry+32(FP), DI
	VBROADCASTSD 0(AX), Y0
	VBROADCASTSD 8(AX), Y1
	VBROADCASTSD 16(AX), Y2
	VMOVUPD 224(AX), Y13
	VMOVUPD 0(R8), Y3
	VSUBPD Y0, Y3, Y3
	VMOVUPD 32(R8), Y4
	VSUBPD Y1, Y4, Y4
	VMOVUPD 64(R8), Y5
	VSUBPD Y2, Y5, Y5
	VMOVUPD 96(R8), Y6
	VSUBPD Y0, Y6, Y6
	VMOVUPD 128(R8), Y7
	VSUBPD Y1, Y7, Y7
	VMOVUPD 160(R8), Y8
	VSUBPD Y2, Y8, Y8
	VMOVUPD inf4<>(SB), Y9
	VXORPD Y10, Y10, Y10
	PACKET_LANE(0, PACKET_MIXED)
	PACKET_LANE(1, PACKET_MIXED)
	PACKET_LANE(2, PACKET_MIXED)
	PACKET_LANE(3, PACKET_MIXED)
	// The lanes in mask, of the children in use, as four int32.
	VMOVQ R12, X15
	VPBROADCASTQ X15, Y15
	VPAND Y15, Y10, Y10
	MOVLQSX 208(R8), R10
	SHLQ $5, R10
	LEAQ lowmask<>(SB), R11
	VPAND (R11)(R10*1), Y10, Y10
	VPSHUFD $0x08, Y10, Y10
	VPERMQ $0x08, Y10, Y10
	VMOVDQU X10, (SI)
	VMOVUPD Y9, (DI)
	VZEROUPPER
	RET

// topWalk is walkTopAVX2's state between calls (topWalk in packet.go).

// func walkTopAVX2(nodes *node4, p *packet, stack *packetEntry, depth int, wk *topWalk) (status int)
//
// castPacket's traversal of the hierarchy over instances, from wk.cur
// (a node to test; a leaf: the one Go has just cast, so pop first) with
// the lanes wk.mask and wk.sp entries on the stack, until the next leaf
// (status 1: its ref and lanes in wk), the end (0), or a node whose
// entered children would not fit on the stack of depth entries (2: wk
// holds that node, untested, for Go's loop, whose stack grows). The node
// tests, their order and the pops are intersectPacketAVX2's; tmax is
// p.tmax as Go leaves it.
TEXT ·walkTopAVX2(SB), NOSPLIT, $160-48
	MOVQ nodes+0(FP), BX
	MOVQ p+8(FP), AX
	MOVQ stack+16(FP), DI
	MOVQ wk+32(FP), SI
	VBROADCASTSD 0(AX), Y0
	VBROADCASTSD 8(AX), Y1
	VBROADCASTSD 16(AX), Y2
	VMOVUPD 224(AX), Y13
	MOVLQSX 0(SI), CX
	MOVL 4(SI), R12
	MOVQ 8(SI), DX
	MOVQ 288(AX), R14
	TESTQ CX, CX
	JS tpop

tnode:
	IMUL3Q $216, CX, R8
	ADDQ BX, R8
	TESTL R14, R14
	JZ tuniform
	VMOVUPD 0(R8), Y3
	VSUBPD Y0, Y3, Y3
	VMOVUPD 32(R8), Y4
	VSUBPD Y1, Y4, Y4
	VMOVUPD 64(R8), Y5
	VSUBPD Y2, Y5, Y5
	VMOVUPD 96(R8), Y6
	VSUBPD Y0, Y6, Y6
	VMOVUPD 128(R8), Y7
	VSUBPD Y1, Y7, Y7
	VMOVUPD 160(R8), Y8
	VSUBPD Y2, Y8, Y8
	VMOVUPD inf4<>(SB), Y9
	VXORPD Y10, Y10, Y10
	PACKET_LANE(0, PACKET_MIXED)
	PACKET_LANE(1, PACKET_MIXED)
	PACKET_LANE(2, PACKET_MIXED)
	PACKET_LANE(3, PACKET_MIXED)
	JMP ttested

tuniform:
	MOVQ 296(AX), R9
	VMOVUPD (R8)(R9*1), Y3
	VSUBPD Y0, Y3, Y3
	MOVQ 304(AX), R9
	VMOVUPD (R8)(R9*1), Y4
	VSUBPD Y1, Y4, Y4
	MOVQ 312(AX), R9
	VMOVUPD (R8)(R9*1), Y5
	VSUBPD Y2, Y5, Y5
	MOVQ 320(AX), R9
	VMOVUPD (R8)(R9*1), Y6
	VSUBPD Y0, Y6, Y6
	MOVQ 328(AX), R9
	VMOVUPD (R8)(R9*1), Y7
	VSUBPD Y1, Y7, Y7
	MOVQ 336(AX), R9
	VMOVUPD (R8)(R9*1), Y8
	VSUBPD Y2, Y8, Y8
	VMOVUPD inf4<>(SB), Y9
	VXORPD Y10, Y10, Y10
	PACKET_LANE(0, PACKET_UNIFORM)
	PACKET_LANE(1, PACKET_UNIFORM)
	PACKET_LANE(2, PACKET_UNIFORM)
	PACKET_LANE(3, PACKET_UNIFORM)

ttested:
	// Y9: each child's least entry distance over the lanes that enter it;
	// Y10: those lanes, as bits. A child is entered by the lanes at hand
	// (R12) among them, if it is in use.
	VMOVQ R12, X15
	VPBROADCASTQ X15, Y15
	VPAND Y15, Y10, Y10
	VPXOR Y15, Y15, Y15
	VPCMPEQQ Y15, Y10, Y15
	VMOVMSKPD Y15, R9
	XORL $15, R9
	MOVL 208(R8), R10
	LEAQ lowbits<>(SB), R11
	MOVBLZX (R11)(R10*1), R10
	ANDL R10, R9
	JZ tpop
	VMOVDQU Y10, 32(SP)
	POPCNTL R9, R10
	CMPL R10, $1
	JNE ttwo
	// One child: found by branches rather than by its bit's index, so
	// that a predicted branch lets the next node's loads start before
	// this node's test is done.
	TESTL $1, R9
	JNZ tone0
	TESTL $2, R9
	JNZ tone1
	TESTL $4, R9
	JNZ tone2
	MOVL 56(SP), R12
	MOVLQSX 204(R8), CX
	JMP tnext

tone0:
	MOVL 32(SP), R12
	MOVLQSX 192(R8), CX
	JMP tnext

tone1:
	MOVL 40(SP), R12
	MOVLQSX 196(R8), CX
	JMP tnext

tone2:
	MOVL 48(SP), R12
	MOVLQSX 200(R8), CX
	JMP tnext

ttwo:
	CMPL R10, $2
	JNE tsort
	CMPQ DX, depth+24(FP)
	JAE toverflow
	BSFL R9, R10
	BSRL R9, R11
	VMOVUPD Y9, 0(SP)
	VMOVSD 0(SP)(R10*8), X7
	VMOVSD 0(SP)(R11*8), X8
	MOVQ DX, R13
	SHLQ $4, R13
	INCQ DX
	VUCOMISD X8, X7
	JHI ttwoswap
	MOVL 192(R8)(R11*4), CX
	MOVL CX, 0(DI)(R13*1)
	MOVL 32(SP)(R11*8), CX
	MOVL CX, 4(DI)(R13*1)
	VMOVSD X8, 8(DI)(R13*1)
	MOVL 32(SP)(R10*8), R12
	MOVLQSX 192(R8)(R10*4), CX
	JMP tnext

ttwoswap:
	MOVL 192(R8)(R10*4), CX
	MOVL CX, 0(DI)(R13*1)
	MOVL 32(SP)(R10*8), CX
	MOVL CX, 4(DI)(R13*1)
	VMOVSD X7, 8(DI)(R13*1)
	MOVL 32(SP)(R11*8), R12
	MOVLQSX 192(R8)(R11*4), CX
	JMP tnext

tsort:
	// Room for all but one on the stack, or Go takes this node.
	LEAQ -1(DX)(R10*1), R11
	CMPQ R11, depth+24(FP)
	JA toverflow
	// Insertion sort of the entered children by entry distance, the
	// earlier child first among equals: distances at 64(SP), refs at
	// 96(SP), lanes at 112(SP).
	VMOVUPD Y9, 0(SP)
	XORL R10, R10                      // child
	XORL R11, R11                      // children sorted

tsortk:
	BTL R10, R9
	JCC tsortnext
	VMOVSD 0(SP)(R10*8), X7
	MOVL R11, R13

tins:
	TESTL R13, R13
	JZ tput
	VMOVSD 56(SP)(R13*8), X8
	VUCOMISD X7, X8
	JLS tput
	VMOVSD X8, 64(SP)(R13*8)
	MOVL 92(SP)(R13*4), CX
	MOVL CX, 96(SP)(R13*4)
	MOVL 108(SP)(R13*4), CX
	MOVL CX, 112(SP)(R13*4)
	DECL R13
	JMP tins

tput:
	VMOVSD X7, 64(SP)(R13*8)
	MOVL 192(R8)(R10*4), CX
	MOVL CX, 96(SP)(R13*4)
	MOVL 32(SP)(R10*8), CX
	MOVL CX, 112(SP)(R13*4)
	INCL R11

tsortnext:
	INCL R10
	CMPL R10, $4
	JLT tsortk

	// Push all but the nearest, farthest first; go on with the nearest.
	DECL R11

tpush:
	TESTL R11, R11
	JZ tpushed
	MOVQ DX, R13
	SHLQ $4, R13
	MOVL 96(SP)(R11*4), CX
	MOVL CX, 0(DI)(R13*1)
	MOVL 112(SP)(R11*4), CX
	MOVL CX, 4(DI)(R13*1)
	VMOVSD 64(SP)(R11*8), X7
	VMOVSD X7, 8(DI)(R13*1)
	INCQ DX
	DECL R11
	JMP tpush

tpushed:
	MOVLQSX 96(SP), CX
	MOVL 112(SP), R12

tnext:
	TESTQ CX, CX
	JNS tnode
	MOVL CX, 0(SI)
	MOVL R12, 4(SI)
	MOVQ DX, 8(SI)
	MOVQ $1, status+40(FP)
	VZEROUPPER
	RET

tpop:
	TESTQ DX, DX
	JZ tdone
	DECQ DX
	MOVQ DX, R8
	SHLQ $4, R8
	VBROADCASTSD 8(DI)(R8*1), Y6
	VCMPPD $2, Y13, Y6, Y7             // entry <= tmax, lane by lane
	VMOVMSKPD Y7, R9
	ANDL 4(DI)(R8*1), R9
	JZ tpop
	MOVL R9, R12
	MOVLQSX 0(DI)(R8*1), CX
	JMP tnext

tdone:
	MOVQ $0, 8(SI)
	MOVQ $0, status+40(FP)
	VZEROUPPER
	RET

toverflow:
	MOVL CX, 0(SI)
	MOVL R12, 4(SI)
	MOVQ DX, 8(SI)
	MOVQ $2, status+40(FP)
	VZEROUPPER
	RET

// func visitAVX2(r *ray, nd *node4, tmax float64, ts *[4]float64) uint64
//
// visitScalar's box tests for the four children at once (NODE_TEST): each
// child's entry distance into ts, and the bit set of the children entered
// before tmax.
TEXT ·visitAVX2(SB), NOSPLIT, $0-40
	MOVQ r+0(FP), AX
	MOVQ nd+8(FP), R8
	MOVQ ts+24(FP), DI
	LOAD_RAY
	VBROADCASTSD tmax+16(FP), Y13
	NODE_TEST(Y13)
	VMOVUPD Y6, (DI)
	VZEROUPPER
	MOVQ R9, ret+32(FP)
	RET

DATA one4<>+0(SB)/8, $0x3ff0000000000000
DATA one4<>+8(SB)/8, $0x3ff0000000000000
DATA one4<>+16(SB)/8, $0x3ff0000000000000
DATA one4<>+24(SB)/8, $0x3ff0000000000000
GLOBL one4<>(SB), RODATA|NOPTR, $32

// MAP_ROW(row, doff, ioff) is one row of affine.vector for the four lanes
// of the directions in Y0-Y2 (x, y, z): (a[4row]*x + a[4row+1]*y) +
// a[4row+2]*z, the scalar sums in their order, into doff(CX), and its
// inverse 1/d (Y5 = ones) into ioff(CX). The affine is at AX.
#define MAP_ROW(row, doff, ioff) \
	VBROADCASTSD (32*row)(AX), Y3; \
	VMULPD       Y0, Y3, Y3; \
	VBROADCASTSD (32*row+8)(AX), Y4; \
	VMULPD       Y1, Y4, Y4; \
	VADDPD       Y4, Y3, Y3; \
	VBROADCASTSD (32*row+16)(AX), Y4; \
	VMULPD       Y2, Y4, Y4; \
	VADDPD       Y4, Y3, Y3; \
	VMOVUPD      Y3, doff(CX); \
	VDIVPD       Y3, Y5, Y4; \
	VMOVUPD      Y4, ioff(CX)

// func mapPacketAVX2(a *affine, src, dst *packet)
TEXT ·mapPacketAVX2(SB), NOSPLIT, $0-24
	MOVQ    a+0(FP), AX
	MOVQ    src+8(FP), BX
	MOVQ    dst+16(FP), CX
	VMOVUPD 32(BX), Y0
	VMOVUPD 64(BX), Y1
	VMOVUPD 96(BX), Y2
	VMOVUPD one4<>(SB), Y5
	MAP_ROW(0, 32, 128)
	MAP_ROW(1, 64, 160)
	MAP_ROW(2, 96, 192)
	SET_SIGNS(CX)
	VZEROUPPER
	RET

// func invPacketAVX2(p *packet)
TEXT ·invPacketAVX2(SB), NOSPLIT, $0-8
	MOVQ    p+0(FP), CX
	VMOVUPD one4<>(SB), Y5
	VMOVUPD 32(CX), Y0
	VDIVPD  Y0, Y5, Y0
	VMOVUPD Y0, 128(CX)
	VMOVUPD 64(CX), Y1
	VDIVPD  Y1, Y5, Y1
	VMOVUPD Y1, 160(CX)
	VMOVUPD 96(CX), Y2
	VDIVPD  Y2, Y5, Y2
	VMOVUPD Y2, 192(CX)
	SET_SIGNS(CX)
	VZEROUPPER
	RET
