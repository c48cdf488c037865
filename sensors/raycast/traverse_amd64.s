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

// The 8-wide packet traversal (intersectPacket8AVX2) tests a lane
// against a node8f's eight children in one 8-lane float32 register. The
// test is conservative: every child that visitScalar's float64 test
// would enter for a lane, this one enters for it too, and the entry it
// keeps is at most that test's, so a packet finds the nearest of all
// hits, to the bit, as before (more boxes entered cost time, never a
// hit). How:
//   - Boxes are the float64 ones rounded outward (collapse8). The origin
//     o is bracketed by float32 o_lo <= o <= o_hi (o rounded, then moved
//     by 2^-22 of itself and 2^-120): lo planes take o_hi and hi planes
//     o_lo, so that b - o rounds from a box at least as large.
//   - A distance is (b - o') * inv in float32: at most three roundings,
//     each within 2^-24 of its result. Exits use inv rounded and widened
//     by 1 + 2^-19 (and no smaller than 2^-126), and the lane's tmax
//     rounded up and widened alike; 2^-120 is added to the smallest exit
//     for results in the subnormal range. Entries use inv rounded, no
//     larger than the largest float32 (an infinite inverse, from a zero
//     direction, gives 0 * inf = NaN in exits only, where NaN leaves the
//     interval as it is), and 0 under 2^-126.
//   - Entered where entry <= exit; the entries kept for the order and for
//     the skip when popped are lowered by 1 - 2^-19 and 2^-120, and kept
//     finite.
//   32 units of rounding against the 3 or 4 a distance takes leave the
//   float64 test's own rounding (its exits widened by 1 + 2 gamma(3))
//   far inside the margin; TestVisitPacket8Conservative checks it on
//   random and edge cases, child by child.
//
// Frame (from SP): 0 the children's entries (8 float32) and 32 their
// lanes (8 int32); 64, 96 and 160 the entered children sorted: entries,
// refs and lanes (in a leaf, 0 the lanes' tmax, as intersectPacketAVX2's);
// 192-383 the origin by plane: o_hi (x, y, z) for the lo planes at 192,
// 224, 256 and o_lo for the hi planes at 288, 320, 352, each in eight
// lanes (a plane at byte k of a node8f has its origin at 192 + k); 384
// the four lanes' entry inverses (x, y, z rows of four float32), 432
// their exit inverses, 480 their widened tmax, 496 the same for the
// lanes at hand and -1 for the others (LANES8); 496-527 scratch in PREP8.

// Constants of the 8-wide test, in eight lanes (a 16-byte operand reads
// the first four).
#define C32x8(name, v) \
	DATA name+0(SB)/4, v; \
	DATA name+4(SB)/4, v; \
	DATA name+8(SB)/4, v; \
	DATA name+12(SB)/4, v; \
	DATA name+16(SB)/4, v; \
	DATA name+20(SB)/4, v; \
	DATA name+24(SB)/4, v; \
	DATA name+28(SB)/4, v; \
	GLOBL name(SB), RODATA|NOPTR, $32

C32x8(abs32<>, $0x7fffffff)
C32x8(sign32<>, $0x80000000)
C32x8(inf32<>, $0x7f800000)
// The largest float32, and the least normal one (2^-126).
C32x8(fmax32<>, $0x7f7fffff)
C32x8(fmin32<>, $0x00800000)
// 2^-22: the origin's bracket, relative to itself.
C32x8(rel32<>, $0x34800000)
// 2^-120: above every rounding error of a subnormal result (2^-150).
C32x8(tiny32<>, $0x03800000)
// 1 + 2^-19 widens exits, 1 - 2^-19 lowers entries.
C32x8(robust32<>, $0x3f800010)
C32x8(shrink32<>, $0x3f7fffe0)
// -1, a tmax that no box is entered before.
C32x8(negone32<>, $0xbf800000)
// Lane l's bit in lane l, for four lanes.
DATA lanes4x32<>+0(SB)/4, $1
DATA lanes4x32<>+4(SB)/4, $2
DATA lanes4x32<>+8(SB)/4, $4
DATA lanes4x32<>+12(SB)/4, $8
GLOBL lanes4x32<>(SB), RODATA|NOPTR, $16
// Lane l's bit, in row l.
DATA lanebit8<>+0(SB)/4, $1
DATA lanebit8<>+4(SB)/4, $1
DATA lanebit8<>+8(SB)/4, $1
DATA lanebit8<>+12(SB)/4, $1
DATA lanebit8<>+16(SB)/4, $1
DATA lanebit8<>+20(SB)/4, $1
DATA lanebit8<>+24(SB)/4, $1
DATA lanebit8<>+28(SB)/4, $1
DATA lanebit8<>+32(SB)/4, $2
DATA lanebit8<>+36(SB)/4, $2
DATA lanebit8<>+40(SB)/4, $2
DATA lanebit8<>+44(SB)/4, $2
DATA lanebit8<>+48(SB)/4, $2
DATA lanebit8<>+52(SB)/4, $2
DATA lanebit8<>+56(SB)/4, $2
DATA lanebit8<>+60(SB)/4, $2
DATA lanebit8<>+64(SB)/4, $4
DATA lanebit8<>+68(SB)/4, $4
DATA lanebit8<>+72(SB)/4, $4
DATA lanebit8<>+76(SB)/4, $4
DATA lanebit8<>+80(SB)/4, $4
DATA lanebit8<>+84(SB)/4, $4
DATA lanebit8<>+88(SB)/4, $4
DATA lanebit8<>+92(SB)/4, $4
DATA lanebit8<>+96(SB)/4, $8
DATA lanebit8<>+100(SB)/4, $8
DATA lanebit8<>+104(SB)/4, $8
DATA lanebit8<>+108(SB)/4, $8
DATA lanebit8<>+112(SB)/4, $8
DATA lanebit8<>+116(SB)/4, $8
DATA lanebit8<>+120(SB)/4, $8
DATA lanebit8<>+124(SB)/4, $8
GLOBL lanebit8<>(SB), RODATA|NOPTR, $128
// 1 + 2^-23 in float64: tmax times it rounds to a float32 at least tmax.
DATA up23<>+0(SB)/8, $0x3ff0000020000000
DATA up23<>+8(SB)/8, $0x3ff0000020000000
DATA up23<>+16(SB)/8, $0x3ff0000020000000
DATA up23<>+24(SB)/8, $0x3ff0000020000000
GLOBL up23<>(SB), RODATA|NOPTR, $32

// INV8(row, n, f) sets the four lanes' entry and exit inverses of the
// axis whose float64 inverses are at row(AX), at n(SP) and f(SP).
#define INV8(row, n, f) \
	VCVTPD2PSY row(AX), X14; \
	VANDPS sign32<>(SB), X14, X15; \
	VANDPS abs32<>(SB), X14, X14; \
	VCMPPS $0x1d, fmin32<>(SB), X14, X12; \
	VMINPS fmax32<>(SB), X14, X11; \
	VANDPS X12, X11, X11; \
	VORPS X15, X11, X11; \
	VMOVUPS X11, n(SP); \
	VMAXPS fmin32<>(SB), X14, X14; \
	VMULPS robust32<>(SB), X14, X14; \
	VORPS X15, X14, X14; \
	VMOVUPS X14, f(SP)

// TMAX8 sets the lanes' widened tmax from their tmax in Y13 (Y14
// scratch).
#define TMAX8 \
	VMULPD up23<>(SB), Y13, Y14; \
	VCVTPD2PSY Y14, X14; \
	VMULPS robust32<>(SB), X14, X14; \
	VMOVUPS X14, 480(SP)

// LANES8 sets the node tests' tmax at 496(SP): the widened tmax of the
// lanes at hand (R12), -1 for the others, which then enter no child and
// leave the children's entries alone: a packet split among the nodes
// orders them, and skips them when popped, by its own lanes' entries
// (X14, X15 scratch).
#define LANES8 \
	VMOVQ R12, X15; \
	VPBROADCASTD X15, X15; \
	VPAND lanes4x32<>(SB), X15, X15; \
	VPCMPEQD lanes4x32<>(SB), X15, X15; \
	VMOVUPS negone32<>(SB), X14; \
	VBLENDVPS X15, 480(SP), X14, X14; \
	VMOVUPS X14, 496(SP)

// ORIGIN8(src, dst) broadcasts the float32 at src(SP) to dst(SP).
#define ORIGIN8(src, dst) \
	VBROADCASTSS src(SP), Y12; \
	VMOVUPS Y12, dst(SP)

// PREP8 fills the frame for the packet at AX, its tmax in Y13 (scratch:
// Y11, Y12, Y14, Y15).
#define PREP8 \
	VCVTPD2PSY 0(AX), X14; \
	VANDPS abs32<>(SB), X14, X15; \
	VMULPS rel32<>(SB), X15, X15; \
	VADDPS tiny32<>(SB), X15, X15; \
	VADDPS X15, X14, X12; \
	VSUBPS X15, X14, X11; \
	VMOVUPS X12, 496(SP); \
	VMOVUPS X11, 512(SP); \
	ORIGIN8(496, 192); \
	ORIGIN8(500, 224); \
	ORIGIN8(504, 256); \
	ORIGIN8(512, 288); \
	ORIGIN8(516, 320); \
	ORIGIN8(520, 352); \
	INV8(128, 384, 432); \
	INV8(160, 400, 448); \
	INV8(192, 416, 464); \
	TMAX8

// ENTER8(l) ends lane l's test (entry t0 in Y11, exit t1 in Y12): its
// entries lower the children's least entries Y9 where it enters, and its
// bit is set in their lanes Y10 (Y15 scratch).
#define ENTER8(l) \
	VADDPS tiny32<>(SB), Y12, Y12; \
	VCMPPS $0x1e, Y12, Y11, Y15; \
	VBLENDVPS Y15, inf32<>(SB), Y11, Y12; \
	VMINPS Y12, Y9, Y9; \
	VANDNPS lanebit8<>+(32*l)(SB), Y15, Y15; \
	VORPS Y15, Y10, Y10

// TEST8_UNIFORM(nx, ny, nz, tm, fx, fy, fz) tests one lane, whose entry
// inverses are at memory operands nx-nz, its widened tmax at tm and its
// exit inverses at fx-fz, against the near planes less the origin in
// Y3-Y5 and the far ones in Y6-Y8: its entries in Y11, exits in Y12.
// VMAXPS T0, X, T0 keeps t0 where x is NaN, as in PACKET_LANE; likewise
// VMINPS.
#define TEST8_UNIFORM(nx, ny, nz, tm, fx, fy, fz) \
	VXORPS Y11, Y11, Y11; \
	VBROADCASTSS nx, Y15; \
	VMULPS Y15, Y3, Y15; \
	VMAXPS Y11, Y15, Y11; \
	VBROADCASTSS ny, Y15; \
	VMULPS Y15, Y4, Y15; \
	VMAXPS Y11, Y15, Y11; \
	VBROADCASTSS nz, Y15; \
	VMULPS Y15, Y5, Y15; \
	VMAXPS Y11, Y15, Y11; \
	VBROADCASTSS tm, Y12; \
	VBROADCASTSS fx, Y15; \
	VMULPS Y15, Y6, Y15; \
	VMINPS Y12, Y15, Y12; \
	VBROADCASTSS fy, Y15; \
	VMULPS Y15, Y7, Y15; \
	VMINPS Y12, Y15, Y12; \
	VBROADCASTSS fz, Y15; \
	VMULPS Y15, Y8, Y15; \
	VMINPS Y12, Y15, Y12

// LANE8_UNIFORM(l) tests lane l (TEST8_UNIFORM) and ends its test.
#define LANE8_UNIFORM(l) \
	TEST8_UNIFORM((384+4*l)(SP), (400+4*l)(SP), (416+4*l)(SP), (496+4*l)(SP), (432+4*l)(SP), (448+4*l)(SP), (464+4*l)(SP)); \
	ENTER8(l)

// AXIS8_MIXED(lo, hi, n, f) is one axis of LANE8_MIXED: the lane picks
// its far and near planes by the sign of its exit inverse at memory
// operand f (its entry inverse at n).
#define AXIS8_MIXED(lo, hi, n, f) \
	VBROADCASTSS f, Y14; \
	VBLENDVPS Y14, lo, hi, Y15; \
	VMULPS Y14, Y15, Y15; \
	VMINPS Y12, Y15, Y12; \
	VBLENDVPS Y14, hi, lo, Y15; \
	VBROADCASTSS n, Y14; \
	VMULPS Y14, Y15, Y15; \
	VMAXPS Y11, Y15, Y11

// LANE8_MIXED(l) is LANE8_UNIFORM where lanes differ in sign: the lo
// planes less the origin in Y3-Y5, the hi ones in Y6-Y8.
#define LANE8_MIXED(l) \
	VXORPS Y11, Y11, Y11; \
	VBROADCASTSS (496+4*l)(SP), Y12; \
	AXIS8_MIXED(Y3, Y6, (384+4*l)(SP), (432+4*l)(SP)); \
	AXIS8_MIXED(Y4, Y7, (400+4*l)(SP), (448+4*l)(SP)); \
	AXIS8_MIXED(Y5, Y8, (416+4*l)(SP), (464+4*l)(SP)); \
	ENTER8(l)

// PLANE8(k, y) loads the eight children's plane at byte k of the node8f
// at R8 into y, less its origin.
#define PLANE8(k, y) \
	VMOVUPS k(R8), y; \
	VSUBPS (192+k)(SP), y, y

// UPLANE8(off, y) is PLANE8 for the plane whose offset is at off(AX)
// (the packet's near and far offsets, node4's and node8f's alike).
#define UPLANE8(off, y) \
	MOVQ off(AX), R9; \
	VMOVUPS (R8)(R9*1), y; \
	VSUBPS 192(SP)(R9*1), y, y

// NODE8_MIXED and NODE8_UNIFORM test the four lanes of the packet at AX
// (frame by PREP8) against the node8f at R8: the children's least entries
// in Y9 (+Inf where none enters), their lanes' bits in Y10.
#define NODE8_MIXED \
	PLANE8(0, Y3); \
	PLANE8(32, Y4); \
	PLANE8(64, Y5); \
	PLANE8(96, Y6); \
	PLANE8(128, Y7); \
	PLANE8(160, Y8); \
	VMOVUPS inf32<>(SB), Y9; \
	VXORPS Y10, Y10, Y10; \
	LANE8_MIXED(0); \
	LANE8_MIXED(1); \
	LANE8_MIXED(2); \
	LANE8_MIXED(3)

#define NODE8_UNIFORM \
	UPLANE8(296, Y3); \
	UPLANE8(304, Y4); \
	UPLANE8(312, Y5); \
	UPLANE8(320, Y6); \
	UPLANE8(328, Y7); \
	UPLANE8(336, Y8); \
	VMOVUPS inf32<>(SB), Y9; \
	VXORPS Y10, Y10, Y10; \
	LANE8_UNIFORM(0); \
	LANE8_UNIFORM(1); \
	LANE8_UNIFORM(2); \
	LANE8_UNIFORM(3)

// ONE8_UNIFORM and ONE8_MIXED are NODE8_UNIFORM and NODE8_MIXED for a
// packet with one lane at hand, lane R13 (its bit in R12): only its test
// is run. A scan's packet is mostly down to one lane deep in a large
// mesh's hierarchy (its beams part there), where the other three lanes'
// tests, against a tmax of -1, entered nothing. The same Y10 as the
// four-lane test's, and the same Y9 where a child is entered: a lane not
// at hand leaves both as they were.
#define ONE8_UNIFORM \
	UPLANE8(296, Y3); \
	UPLANE8(304, Y4); \
	UPLANE8(312, Y5); \
	UPLANE8(320, Y6); \
	UPLANE8(328, Y7); \
	UPLANE8(336, Y8); \
	TEST8_UNIFORM(384(SP)(R13*4), 400(SP)(R13*4), 416(SP)(R13*4), 480(SP)(R13*4), 432(SP)(R13*4), 448(SP)(R13*4), 464(SP)(R13*4)); \
	ONE8_ENTER

#define ONE8_MIXED \
	PLANE8(0, Y3); \
	PLANE8(32, Y4); \
	PLANE8(64, Y5); \
	PLANE8(96, Y6); \
	PLANE8(128, Y7); \
	PLANE8(160, Y8); \
	VXORPS Y11, Y11, Y11; \
	VBROADCASTSS 480(SP)(R13*4), Y12; \
	AXIS8_MIXED(Y3, Y6, 384(SP)(R13*4), 432(SP)(R13*4)); \
	AXIS8_MIXED(Y4, Y7, 400(SP)(R13*4), 448(SP)(R13*4)); \
	AXIS8_MIXED(Y5, Y8, 416(SP)(R13*4), 464(SP)(R13*4)); \
	ONE8_ENTER

// ONE8_ENTER is ENTER8 for lane R13 alone: its entries in Y9 (those of
// the children it does not enter are never read), its bit (R12) where it
// enters in Y10.
#define ONE8_ENTER \
	VADDPS tiny32<>(SB), Y12, Y12; \
	VCMPPS $0x1e, Y12, Y11, Y15; \
	VMOVUPS Y11, Y9; \
	VMOVD R12, X10; \
	VPBROADCASTD X10, Y10; \
	VANDNPS Y10, Y15, Y10

// LOWER8 lowers the entries Y9 to the bounds kept (finite).
#define LOWER8 \
	VMULPS shrink32<>(SB), Y9, Y9; \
	VSUBPS tiny32<>(SB), Y9, Y9; \
	VMINPS fmax32<>(SB), Y9, Y9

// PACKET_LEAF(lane, lanenext, hook) is the leaf of the packet traversals
// (intersectPacketAVX2, intersectPacket8AVX2), entered with the leaf's
// ref in CX (< 0): lane by lane of those at hand (R12), intersectAVX2's
// leaf test of one ray against the pack's four triangles at once (the
// pack's empty lanes have a zero determinant), with triangle.hit's
// operations in its order (so the same bits), dividing only where a
// triangle passes the barycentric tests; the nearest hit before the
// lane's tmax, the lower triangle first among equals, lowers the lane's
// tmax in Y13 and sets its p.tri, then runs hook(0). Falls through when
// the leaf is done. The labels are the caller's. A leaf is mostly
// reached by one or two lanes of a scan's packet (its beams part on a
// large mesh), where testing triangle by triangle against four lanes
// wasted most of each test; where four lanes reach it, the two ways cost
// the same. The lanes' tmax as the leaf began are at 0(SP), the node's
// scratch; Y3-Y12 and Y14 scratch, R8-R11 and R13 too.
#define PACKET_LEAF(lane, lanenext, hook) \
	NOTQ CX; \
	SHRQ $3, CX; \
	IMUL3Q $288, CX, R8; \
	ADDQ SI, R8; \
	VMOVUPD Y13, 0(SP); \
	MOVL R12, R9; \
lane: \
	BSFL R9, R10; \
	VBROADCASTSD 32(AX)(R10*8), Y6; \
	VBROADCASTSD 64(AX)(R10*8), Y7; \
	VBROADCASTSD 96(AX)(R10*8), Y8; \
	VMULPD 256(R8), Y7, Y9; \
	VMULPD 224(R8), Y8, Y10; \
	VSUBPD Y10, Y9, Y9; \
	VMULPD 192(R8), Y8, Y10; \
	VMULPD 256(R8), Y6, Y11; \
	VSUBPD Y11, Y10, Y10; \
	VMULPD 224(R8), Y6, Y11; \
	VMULPD 192(R8), Y7, Y12; \
	VSUBPD Y12, Y11, Y11; \
	VMULPD 96(R8), Y9, Y12; \
	VMULPD 128(R8), Y10, Y14; \
	VADDPD Y14, Y12, Y12; \
	VMULPD 160(R8), Y11, Y14; \
	VADDPD Y14, Y12, Y12; \
	VSUBPD 0(R8), Y0, Y6; \
	VSUBPD 32(R8), Y1, Y7; \
	VSUBPD 64(R8), Y2, Y8; \
	VMULPD Y6, Y9, Y9; \
	VMULPD Y7, Y10, Y10; \
	VADDPD Y10, Y9, Y9; \
	VMULPD Y8, Y11, Y11; \
	VADDPD Y11, Y9, Y9; \
	VMULPD 160(R8), Y7, Y10; \
	VMULPD 128(R8), Y8, Y11; \
	VSUBPD Y11, Y10, Y10; \
	VMULPD 96(R8), Y8, Y11; \
	VMULPD 160(R8), Y6, Y14; \
	VSUBPD Y14, Y11, Y11; \
	VMULPD 128(R8), Y6, Y14; \
	VMULPD 96(R8), Y7, Y6; \
	VSUBPD Y6, Y14, Y14; \
	VBROADCASTSD 32(AX)(R10*8), Y6; \
	VMULPD Y10, Y6, Y6; \
	VBROADCASTSD 64(AX)(R10*8), Y7; \
	VMULPD Y11, Y7, Y7; \
	VADDPD Y7, Y6, Y6; \
	VBROADCASTSD 96(AX)(R10*8), Y7; \
	VMULPD Y14, Y7, Y7; \
	VADDPD Y7, Y6, Y6; \
	VMOVUPD sign4<>(SB), Y8; \
	VANDPD Y8, Y12, Y3; \
	VANDNPD Y12, Y8, Y4; \
	VXORPD Y3, Y9, Y9; \
	VXORPD Y3, Y6, Y6; \
	VXORPD Y5, Y5, Y5; \
	VCMPPD $0x0c, Y5, Y12, Y8; \
	VCMPPD $0x1d, Y5, Y9, Y3; \
	VANDPD Y3, Y8, Y8; \
	VCMPPD $0x12, Y4, Y9, Y3; \
	VANDPD Y3, Y8, Y8; \
	VCMPPD $0x1d, Y5, Y6, Y3; \
	VANDPD Y3, Y8, Y8; \
	VADDPD Y6, Y9, Y9; \
	VCMPPD $0x12, Y4, Y9, Y3; \
	VANDPD Y3, Y8, Y8; \
	VMOVMSKPD Y8, R11; \
	TESTL R11, R11; \
	JZ lanenext; \
	VMULPD 192(R8), Y10, Y7; \
	VMULPD 224(R8), Y11, Y6; \
	VADDPD Y6, Y7, Y7; \
	VMULPD 256(R8), Y14, Y6; \
	VADDPD Y6, Y7, Y7; \
	VDIVPD Y12, Y7, Y7; \
	VCMPPD $0x1e, Y5, Y7, Y3; \
	VANDPD Y3, Y8, Y8; \
	VBROADCASTSD 0(SP)(R10*8), Y4; \
	VCMPPD $0x11, Y4, Y7, Y3; \
	VANDPD Y3, Y8, Y8; \
	VMOVMSKPD Y8, R11; \
	TESTL R11, R11; \
	JZ lanenext; \
	VMOVUPD inf4<>(SB), Y10; \
	VBLENDVPD Y8, Y7, Y10, Y10; \
	VPERM2F128 $1, Y10, Y10, Y11; \
	VMINPD Y11, Y10, Y11; \
	VPERMILPD $5, Y11, Y12; \
	VMINPD Y12, Y11, Y11; \
	VCMPPD $0, Y11, Y10, Y12; \
	VMOVMSKPD Y12, R11; \
	BSFL R11, R11; \
	MOVQ CX, R13; \
	SHLQ $2, R13; \
	ADDQ R11, R13; \
	MOVQ R13, 256(AX)(R10*8); \
	VMOVQ R10, X12; \
	VPBROADCASTQ X12, Y12; \
	VPCMPEQQ laneidx<>(SB), Y12, Y12; \
	VBLENDVPD Y12, Y11, Y13, Y13; \
	hook(0); \
lanenext: \
	LEAL -1(R9), R11; \
	ANDL R11, R9; \
	JNZ lane

// PACKET_POP(pop, done, overflow, loop) ends the packet traversals:
// pop takes the nearest entry left on the stack (DI, DX entries) and goes
// on at loop with the lanes whose tmax is at or beyond its entry, skipping
// those behind every such lane's hit; done writes the lanes' tmax back and
// returns true; overflow returns false, tmax as it was.
#define PACKET_POP(pop, done, overflow, loop) \
pop: \
	TESTQ DX, DX; \
	JZ done; \
	DECQ DX; \
	MOVQ DX, R8; \
	SHLQ $4, R8; \
	VBROADCASTSD 8(DI)(R8*1), Y6; \
	VCMPPD $2, Y13, Y6, Y7; \
	VMOVMSKPD Y7, R9; \
	ANDL 4(DI)(R8*1), R9; \
	JZ pop; \
	MOVL R9, R12; \
	MOVLQSX 0(DI)(R8*1), CX; \
	JMP loop; \
done: \
	VMOVUPD Y13, 224(AX); \
	VZEROUPPER; \
	MOVB $1, ok+48(FP); \
	RET; \
overflow: \
	VZEROUPPER; \
	MOVB $0, ok+48(FP); \
	RET

// PACKET4_NODE tests the packet at AX against the four children of the
// node4 at R8 (intersectPacketAVX2, walkTopAVX2), lane by lane
// (PACKET_LANE): where the lanes differ in sign (R14 not 0) each axis' lo
// and hi planes less the origin, the lanes picking theirs; where they
// share their signs, the near planes less the origin in Y3-Y5 and the far
// ones in Y6-Y8, at the packet's offsets. Leaves each child's least entry
// distance over the lanes that enter it in Y9, and those lanes as bits in
// Y10. Its labels are its own (labels are a function's).
#define PACKET4_NODE \
	TESTL R14, R14; \
	JZ n4uniform; \
	VMOVUPD 0(R8), Y3; \
	VSUBPD Y0, Y3, Y3; \
	VMOVUPD 32(R8), Y4; \
	VSUBPD Y1, Y4, Y4; \
	VMOVUPD 64(R8), Y5; \
	VSUBPD Y2, Y5, Y5; \
	VMOVUPD 96(R8), Y6; \
	VSUBPD Y0, Y6, Y6; \
	VMOVUPD 128(R8), Y7; \
	VSUBPD Y1, Y7, Y7; \
	VMOVUPD 160(R8), Y8; \
	VSUBPD Y2, Y8, Y8; \
	VMOVUPD inf4<>(SB), Y9; \
	VXORPD Y10, Y10, Y10; \
	PACKET_LANE(0, PACKET_MIXED); \
	PACKET_LANE(1, PACKET_MIXED); \
	PACKET_LANE(2, PACKET_MIXED); \
	PACKET_LANE(3, PACKET_MIXED); \
	JMP n4tested; \
n4uniform: \
	MOVQ 296(AX), R9; \
	VMOVUPD (R8)(R9*1), Y3; \
	VSUBPD Y0, Y3, Y3; \
	MOVQ 304(AX), R9; \
	VMOVUPD (R8)(R9*1), Y4; \
	VSUBPD Y1, Y4, Y4; \
	MOVQ 312(AX), R9; \
	VMOVUPD (R8)(R9*1), Y5; \
	VSUBPD Y2, Y5, Y5; \
	MOVQ 320(AX), R9; \
	VMOVUPD (R8)(R9*1), Y6; \
	VSUBPD Y0, Y6, Y6; \
	MOVQ 328(AX), R9; \
	VMOVUPD (R8)(R9*1), Y7; \
	VSUBPD Y1, Y7, Y7; \
	MOVQ 336(AX), R9; \
	VMOVUPD (R8)(R9*1), Y8; \
	VSUBPD Y2, Y8, Y8; \
	VMOVUPD inf4<>(SB), Y9; \
	VXORPD Y10, Y10, Y10; \
	PACKET_LANE(0, PACKET_UNIFORM); \
	PACKET_LANE(1, PACKET_UNIFORM); \
	PACKET_LANE(2, PACKET_UNIFORM); \
	PACKET_LANE(3, PACKET_UNIFORM); \
n4tested:

// PACKET4_CHILDREN(next, pop, overflow, depth) goes on from PACKET4_NODE:
// a child is entered by the lanes at hand (R12) that enter it, if it is in
// use. None: to pop. One: gone on with at next (CX the child, R12 its
// lanes), found by predicted branches rather than by its bit's index, so
// that the next node's loads start before this node's test is done. Two:
// ordered by one comparison, the farther pushed. More: an insertion sort
// by entry distance, the earlier child first among equals (distances at
// 64(SP), refs at 96(SP), lanes at 112(SP)), all but the nearest pushed,
// farthest first. Where the stack of depth entries would not hold what is
// to be pushed: to overflow, nothing pushed.
#define PACKET4_CHILDREN(next, pop, overflow, depth) \
	VMOVQ R12, X15; \
	VPBROADCASTQ X15, Y15; \
	VPAND Y15, Y10, Y10; \
	VPXOR Y15, Y15, Y15; \
	VPCMPEQQ Y15, Y10, Y15; \
	VMOVMSKPD Y15, R9; \
	XORL $15, R9; \
	MOVL 208(R8), R10; \
	LEAQ lowbits<>(SB), R11; \
	MOVBLZX (R11)(R10*1), R10; \
	ANDL R10, R9; \
	JZ pop; \
	VMOVDQU Y10, 32(SP); \
	POPCNTL R9, R10; \
	CMPL R10, $1; \
	JNE c4two; \
	TESTL $1, R9; \
	JNZ c4one0; \
	TESTL $2, R9; \
	JNZ c4one1; \
	TESTL $4, R9; \
	JNZ c4one2; \
	MOVL 56(SP), R12; \
	MOVLQSX 204(R8), CX; \
	JMP next; \
c4one0: \
	MOVL 32(SP), R12; \
	MOVLQSX 192(R8), CX; \
	JMP next; \
c4one1: \
	MOVL 40(SP), R12; \
	MOVLQSX 196(R8), CX; \
	JMP next; \
c4one2: \
	MOVL 48(SP), R12; \
	MOVLQSX 200(R8), CX; \
	JMP next; \
c4two: \
	CMPL R10, $2; \
	JNE c4sort; \
	CMPQ DX, depth; \
	JAE overflow; \
	BSFL R9, R10; \
	BSRL R9, R11; \
	VMOVUPD Y9, 0(SP); \
	VMOVSD 0(SP)(R10*8), X7; \
	VMOVSD 0(SP)(R11*8), X8; \
	MOVQ DX, R13; \
	SHLQ $4, R13; \
	INCQ DX; \
	VUCOMISD X8, X7; \
	JHI c4twoswap; \
	MOVL 192(R8)(R11*4), CX; \
	MOVL CX, 0(DI)(R13*1); \
	MOVL 32(SP)(R11*8), CX; \
	MOVL CX, 4(DI)(R13*1); \
	VMOVSD X8, 8(DI)(R13*1); \
	MOVL 32(SP)(R10*8), R12; \
	MOVLQSX 192(R8)(R10*4), CX; \
	JMP next; \
c4twoswap: \
	MOVL 192(R8)(R10*4), CX; \
	MOVL CX, 0(DI)(R13*1); \
	MOVL 32(SP)(R10*8), CX; \
	MOVL CX, 4(DI)(R13*1); \
	VMOVSD X7, 8(DI)(R13*1); \
	MOVL 32(SP)(R11*8), R12; \
	MOVLQSX 192(R8)(R11*4), CX; \
	JMP next; \
c4sort: \
	LEAQ -1(DX)(R10*1), R11; \
	CMPQ R11, depth; \
	JA overflow; \
	VMOVUPD Y9, 0(SP); \
	XORL R10, R10; \
	XORL R11, R11; \
c4sortk: \
	BTL R10, R9; \
	JCC c4sortnext; \
	VMOVSD 0(SP)(R10*8), X7; \
	MOVL R11, R13; \
c4ins: \
	TESTL R13, R13; \
	JZ c4put; \
	VMOVSD 56(SP)(R13*8), X8; \
	VUCOMISD X7, X8; \
	JLS c4put; \
	VMOVSD X8, 64(SP)(R13*8); \
	MOVL 92(SP)(R13*4), CX; \
	MOVL CX, 96(SP)(R13*4); \
	MOVL 108(SP)(R13*4), CX; \
	MOVL CX, 112(SP)(R13*4); \
	DECL R13; \
	JMP c4ins; \
c4put: \
	VMOVSD X7, 64(SP)(R13*8); \
	MOVL 192(R8)(R10*4), CX; \
	MOVL CX, 96(SP)(R13*4); \
	MOVL 32(SP)(R10*8), CX; \
	MOVL CX, 112(SP)(R13*4); \
	INCL R11; \
c4sortnext: \
	INCL R10; \
	CMPL R10, $4; \
	JLT c4sortk; \
	DECL R11; \
c4push: \
	TESTL R11, R11; \
	JZ c4pushed; \
	MOVQ DX, R13; \
	SHLQ $4, R13; \
	MOVL 96(SP)(R11*4), CX; \
	MOVL CX, 0(DI)(R13*1); \
	MOVL 112(SP)(R11*4), CX; \
	MOVL CX, 4(DI)(R13*1); \
	VMOVSD 64(SP)(R11*8), X7; \
	VMOVSD X7, 8(DI)(R13*1); \
	INCQ DX; \
	DECL R11; \
	JMP c4push; \
c4pushed: \
	MOVLQSX 96(SP), CX; \
	MOVL 112(SP), R12; \
	JMP next

// NOHOOK is PACKET_LEAF's hook where a hit needs nothing more; TMAX8HOOK
// keeps intersectPacket8AVX2's float32 tmax up to date.
#define NOHOOK(x)
#define TMAX8HOOK(x) TMAX8

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

// laneidx<> is each lane's number.
DATA laneidx<>+0(SB)/8, $0
DATA laneidx<>+8(SB)/8, $1
DATA laneidx<>+16(SB)/8, $2
DATA laneidx<>+24(SB)/8, $3
GLOBL laneidx<>(SB), RODATA|NOPTR, $32

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
// reads the sign bit), and each lane against a leaf's four triangles at
// once with triangle.hit's (PACKET_LEAF). A node's four children are
// tested lane by lane (PACKET_LANE), four children to a register: the
// planes less the shared origin once per node, no branch per child, and
// where the lanes share their signs (PACKET_SIGNS) no per-lane choice of
// planes either; a lone child to go on with is then found by predicted
// branches, so that the next node's loads need not wait for this node's
// test, and two are ordered without the general insertion sort. A child
// is entered by the lanes at hand that enter its box; it is ordered, and
// skipped when popped, by the least entry distance of the lanes that
// enter it (at hand or not, as this traversal always took it). Hits
// lower p.tmax and set p.tri lane by lane, the lower triangle first among
// equals. ok is false where the stack would overflow: p.tri may then hold
// lanes already hit, p.tmax does not.
//
// Registers: AX packet, BX nodes, SI packs, DI stack, DX entries, CX node
// or leaf, R12 the lanes at hand, R14 0 where the lanes share their signs;
// Y0-Y2 the origin, Y13 tmax; in a node Y3-Y8 its planes less the origin,
// Y9 and Y10 the children's least entries and lanes. Packet: o at 0, d at
// 32 (x, y, z rows of four), inv at 128, tmax at 224, tri at 256, mixed
// at 288, near and far at 296 and 320. Frame:
// the children's entries at 0(SP) and lanes at 32(SP); the entered
// children sorted by entry distance at 64(SP), their refs at 96(SP) and
// lanes at 112(SP); in a leaf, the lanes' tmax at 0(SP).
TEXT ·intersectPacketAVX2(SB), NOSPLIT, $128-49
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
	PACKET4_NODE
	PACKET4_CHILDREN(ploop, ppop, poverflow, depth+40(FP))

pleaf:
	PACKET_LEAF(plane, planenext, NOHOOK)

	PACKET_POP(ppop, pdone, poverflow, ploop)

// func intersectPacket8AVX2(nodes *node8f, packs *triPack, p *packet, mask uint64, stack *packetEntry, depth int) (ok bool)
//
// intersectPacketAVX2 on a large geometry's 8-wide float32 hierarchy: a
// node's eight children tested lane by lane with the conservative float32
// test above (NODE8_*), eight children to a register; a lone child
// entered is gone on with, two are ordered by one comparison, more by an
// insertion sort; the leaves, the stack and the pops are
// intersectPacketAVX2's, the entries pushed as float64. The same hits at
// the very same distances: every box the float64 test enters is entered.
//
// Registers as intersectPacketAVX2's; frame above (INV8 and the rest).
TEXT ·intersectPacket8AVX2(SB), $528-49
	MOVQ nodes+0(FP), BX
	MOVQ packs+8(FP), SI
	MOVQ p+16(FP), AX
	MOVQ mask+24(FP), R12
	MOVQ stack+32(FP), DI
	LOAD_PACKET
	PREP8
	XORQ DX, DX
	XORQ CX, CX
	MOVQ 288(AX), R14

qloop:
	TESTQ CX, CX
	JS qleaf
	MOVQ CX, R8
	SHLQ $8, R8
	ADDQ BX, R8
	POPCNTL R12, R13
	CMPL R13, $1
	JNE qlanes
	BSFL R12, R13
	TESTL R14, R14
	JZ qoneuniform
	ONE8_MIXED
	JMP qtested

qoneuniform:
	ONE8_UNIFORM
	JMP qtested

qlanes:
	LANES8
	TESTL R14, R14
	JZ quniform
	NODE8_MIXED
	JMP qtested

quniform:
	NODE8_UNIFORM

qtested:
	// The children entered (by lanes at hand only, LANES8; those not in
	// use have empty boxes, never entered).
	VPXOR Y15, Y15, Y15
	VPCMPEQD Y15, Y10, Y15
	VMOVMSKPS Y15, R9
	XORL $0xff, R9
	JZ qpop
	VMOVDQU Y10, 32(SP)
	POPCNTL R9, R10
	CMPL R10, $1
	JNE qtwo
	BSFL R9, R10
	MOVL 32(SP)(R10*4), R12
	MOVLQSX 192(R8)(R10*4), CX
	JMP qloop

qtwo:
	LOWER8
	VMOVUPS Y9, 0(SP)
	CMPL R10, $2
	JNE qsort
	// Two children, a before b: b first where it is nearer; the other
	// pushed.
	CMPQ DX, depth+40(FP)
	JAE qoverflow
	BSFL R9, R10
	BSRL R9, R11
	VMOVSS 0(SP)(R10*4), X7
	VMOVSS 0(SP)(R11*4), X8
	MOVQ DX, R13
	SHLQ $4, R13
	INCQ DX
	VUCOMISS X8, X7
	JHI qtwoswap
	MOVL 192(R8)(R11*4), CX
	MOVL CX, 0(DI)(R13*1)
	MOVL 32(SP)(R11*4), CX
	MOVL CX, 4(DI)(R13*1)
	VCVTSS2SD X8, X8, X8
	VMOVSD X8, 8(DI)(R13*1)
	MOVL 32(SP)(R10*4), R12
	MOVLQSX 192(R8)(R10*4), CX
	JMP qloop

qtwoswap:
	MOVL 192(R8)(R10*4), CX
	MOVL CX, 0(DI)(R13*1)
	MOVL 32(SP)(R10*4), CX
	MOVL CX, 4(DI)(R13*1)
	VCVTSS2SD X7, X7, X7
	VMOVSD X7, 8(DI)(R13*1)
	MOVL 32(SP)(R11*4), R12
	MOVLQSX 192(R8)(R11*4), CX
	JMP qloop

qsort:
	// Insertion sort of the entered children by entry, the earlier child
	// first among equals: entries at 64(SP), refs at 96(SP), lanes at
	// 160(SP).
	XORL R10, R10                      // child
	XORL R11, R11                      // children sorted

qsortk:
	BTL R10, R9
	JCC qsortnext
	VMOVSS 0(SP)(R10*4), X7
	MOVL R11, R13

qins:
	TESTL R13, R13
	JZ qput
	VMOVSS 60(SP)(R13*4), X8
	VUCOMISS X7, X8
	JLS qput
	VMOVSS X8, 64(SP)(R13*4)
	MOVL 92(SP)(R13*4), CX
	MOVL CX, 96(SP)(R13*4)
	MOVL 156(SP)(R13*4), CX
	MOVL CX, 160(SP)(R13*4)
	DECL R13
	JMP qins

qput:
	VMOVSS X7, 64(SP)(R13*4)
	MOVL 192(R8)(R10*4), CX
	MOVL CX, 96(SP)(R13*4)
	MOVL 32(SP)(R10*4), CX
	MOVL CX, 160(SP)(R13*4)
	INCL R11

qsortnext:
	INCL R10
	CMPL R10, $8
	JLT qsortk

	// Push all but the nearest, farthest first; go on with the nearest.
	DECL R11

qpush:
	TESTL R11, R11
	JZ qpushed
	CMPQ DX, depth+40(FP)
	JAE qoverflow
	MOVQ DX, R13
	SHLQ $4, R13
	MOVL 96(SP)(R11*4), CX
	MOVL CX, 0(DI)(R13*1)
	MOVL 160(SP)(R11*4), CX
	MOVL CX, 4(DI)(R13*1)
	VMOVSS 64(SP)(R11*4), X7
	VCVTSS2SD X7, X7, X7
	VMOVSD X7, 8(DI)(R13*1)
	INCQ DX
	DECL R11
	JMP qpush

qpushed:
	MOVLQSX 96(SP), CX
	MOVL 160(SP), R12
	JMP qloop

qleaf:
	PACKET_LEAF(qlane, qlanenext, TMAX8HOOK)

	PACKET_POP(qpop, qdone, qoverflow, qloop)

// func visitPacket8AVX2(nd *node8f, p *packet, mask uint64, lanes *[8]uint32, entry *[8]float32)
//
// intersectPacket8AVX2's node test on its own, for tests: lanes[k] is the
// set of the lanes in mask (the lanes at hand) that enter child k before
// their p.tmax (children not in use included), entry[k] the lowered entry
// kept for it (read only where lanes[k] is not 0). A mask of one lane
// takes the one-lane test (ONE8_*), as the traversal does.
TEXT ·visitPacket8AVX2(SB), $528-40
	MOVQ nd+0(FP), R8
	MOVQ p+8(FP), AX
	MOVQ mask+16(FP), R12
	MOVQ lanes+24(FP), SI
	MOVQ entry+32(FP), DI
	VMOVUPD 224(AX), Y13
	PREP8
	MOVQ 288(AX), R14
	POPCNTL R12, R13
	CMPL R13, $1
	JNE v8lanes
	BSFL R12, R13
	TESTL R14, R14
	JZ v8oneuniform
	ONE8_MIXED
	JMP v8done

v8oneuniform:
	ONE8_UNIFORM
	JMP v8done

v8lanes:
	LANES8
	TESTL R14, R14
	JZ v8uniform
	NODE8_MIXED
	JMP v8done

v8uniform:
	NODE8_UNIFORM

v8done:
	LOWER8
	VMOVDQU Y10, (SI)
	VMOVUPS Y9, (DI)
	VZEROUPPER
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
	PACKET4_NODE
	PACKET4_CHILDREN(tnext, tpop, toverflow, depth+24(FP))

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

// MAP_ORIGIN(row) sets coordinate row of dst's origin (CX) to src's
// origin (BX) mapped by the affine at AX: affine.point's sum, in its
// order (X6-X9 scratch).
#define MAP_ORIGIN(row) \
	VMOVSD (32*row)(AX), X6; \
	VMULSD 0(BX), X6, X6; \
	VMOVSD (32*row+8)(AX), X7; \
	VMULSD 8(BX), X7, X7; \
	VADDSD X7, X6, X6; \
	VMOVSD (32*row+16)(AX), X8; \
	VMULSD 16(BX), X8, X8; \
	VADDSD X8, X6, X6; \
	VADDSD (32*row+24)(AX), X6, X6; \
	VMOVSD X6, (8*row)(CX)

// func mapPacketAVX2(a *affine, src, dst *packet)
TEXT ·mapPacketAVX2(SB), NOSPLIT, $0-24
	MOVQ    a+0(FP), AX
	MOVQ    src+8(FP), BX
	MOVQ    dst+16(FP), CX
	MAP_ORIGIN(0)
	MAP_ORIGIN(1)
	MAP_ORIGIN(2)
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

// func worldPacketAVX2(p *packet, dirs *mgl64.Vec3)
TEXT ·worldPacketAVX2(SB), NOSPLIT, $0-16
	MOVQ    p+0(FP), CX
	MOVQ    dirs+8(FP), BX
	VMOVUPD one4<>(SB), Y5
	VMOVSD       0(BX), X0
	VMOVHPD      24(BX), X0, X0
	VMOVSD       48(BX), X6
	VMOVHPD      72(BX), X6, X6
	VINSERTF128  $1, X6, Y0, Y0
	VMOVSD       8(BX), X1
	VMOVHPD      32(BX), X1, X1
	VMOVSD       56(BX), X6
	VMOVHPD      80(BX), X6, X6
	VINSERTF128  $1, X6, Y1, Y1
	VMOVSD       16(BX), X2
	VMOVHPD      40(BX), X2, X2
	VMOVSD       64(BX), X6
	VMOVHPD      88(BX), X6, X6
	VINSERTF128  $1, X6, Y2, Y2
	VMOVUPD Y0, 32(CX)
	VMOVUPD Y1, 64(CX)
	VMOVUPD Y2, 96(CX)
	VDIVPD  Y0, Y5, Y0
	VDIVPD  Y1, Y5, Y1
	VDIVPD  Y2, Y5, Y2
	VMOVUPD Y0, 128(CX)
	VMOVUPD Y1, 160(CX)
	VMOVUPD Y2, 192(CX)
	SET_SIGNS(CX)
	VZEROUPPER
	RET
