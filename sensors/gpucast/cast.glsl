#version 430
// The exact caster's traversal (sensors/raycast: castHinted without its
// hint, Geometry.intersectGo, visitScalar, hitLeaf, triangle.hitBary), ray
// by ray, in float64 with the Go code's operations in its order. A node's
// four children and a leaf's four triangles are tested side by side
// (dvec4, component by component: the scalar operations, four at a time).
// Every value is precise: no fused multiply-add and no reassociation may
// change a bit.
layout(local_size_x = LOCAL_SIZE) in;

// A node is six dvec4 (lo x, y, z, hi x, y, z: the children's planes), its
// references an ivec4; a packet nine dvec4 (v0, e1, e2, by axis). The
// geometries' nodes come first, then the instance hierarchy's, from
// topRoot on (its inner references rebased onto it).
// They are read through buffer textures (two float64 per RGBA32UI texel):
// llvmpipe gathers texels for all lanes at once, where it loads storage
// buffers lane by lane.
layout(binding = 12) uniform usamplerBuffer nodeD;
layout(binding = 13) uniform isamplerBuffer nodeI;
layout(binding = 14) uniform usamplerBuffer instD; // ToLocal, 3 dvec4 per instance
layout(binding = 15) uniform usamplerBuffer packs;
layout(binding = 11) uniform isamplerBuffer instI; // Roots
layout(std430, binding = 5) readonly buffer RayD { dvec4 rayD[]; };   // per ray dx dy dz bound, then per set ox oy oz 0
layout(std430, binding = 6) readonly buffer RayI { int raySet[]; };
layout(std430, binding = 7) writeonly buffer Out { double outT[]; };
// Cut-outs (raycast.Flat): each instance's cut-out (-1: none), the
// cut-outs' records, their triangles' texture coordinates and their alpha
// planes (bytes, four to a word).
layout(std430, binding = 8) readonly buffer InstCut { int instCut[]; };
layout(std430, binding = 9) readonly buffer CutI { ivec4 cutI[]; };   // 2 a cut-out
layout(std430, binding = 10) readonly buffer CutD { double cutD[]; }; // 2 a cut-out
layout(std430, binding = 11) readonly buffer UVs { float uvs[]; };    // 6 a triangle
layout(std430, binding = 12) readonly buffer Alpha { uint alphaW[]; };

uniform int nRays;
uniform int topRoot;   // the instance hierarchy's root in nodeD
uniform int originsAt; // where the origins start in rayD

// One stack for both levels: a geometry's entries above the instance
// hierarchy's.
const int STACK = 64;
#define ROBUST ROBUST_VALUE
#define INF packDouble2x32(uvec2(0u, 0x7ff00000u))

// Division: DIV and DIV4 are the device's own where New found it rounds as
// Go does, else divRN (div.glsl, put in place of the line below).
DIVISION

int stackNode[STACK];
double stackT[STACK];

// entry is visitScalar's box test of four children at once: each one's
// entry distance, and which are entered before tmax. Plain comparisons
// (selects), as the Go code's: NaN compares false.
bvec4 entry(dvec4 lo[3], dvec4 hi[3], dvec3 o, dvec3 inv, bvec3 neg, double tmax, out dvec4 t0) {
	precise dvec4 n0 = neg.x ? hi[0] : lo[0];
	precise dvec4 f0 = neg.x ? lo[0] : hi[0];
	precise dvec4 n1 = neg.y ? hi[1] : lo[1];
	precise dvec4 f1 = neg.y ? lo[1] : hi[1];
	precise dvec4 n2 = neg.z ? hi[2] : lo[2];
	precise dvec4 f2 = neg.z ? lo[2] : hi[2];
	precise dvec4 a = (n0 - o.x) * inv.x;
	precise dvec4 t = dvec4(0.0LF);
	t = mix(t, a, greaterThan(a, t));
	a = (n1 - o.y) * inv.y;
	t = mix(t, a, greaterThan(a, t));
	a = (n2 - o.z) * inv.z;
	t = mix(t, a, greaterThan(a, t));
	precise dvec4 u = dvec4(INF);
	a = (f0 - o.x) * inv.x;
	u = mix(u, a, lessThan(a, u));
	a = (f1 - o.y) * inv.y;
	u = mix(u, a, lessThan(a, u));
	a = (f2 - o.z) * inv.z;
	u = mix(u, a, lessThan(a, u));
	u = u * ROBUST;
	u = mix(u, dvec4(tmax), greaterThan(u, dvec4(tmax)));
	t0 = t;
	return not(greaterThan(t, u));
}

// fetch4 reads dvec4 i of a buffer of float64.
dvec4 fetch4(usamplerBuffer b, int i) {
	uvec4 p = texelFetch(b, 2 * i);
	uvec4 q = texelFetch(b, 2 * i + 1);
	return dvec4(packDouble2x32(p.xy), packDouble2x32(p.zw), packDouble2x32(q.xy), packDouble2x32(q.zw));
}

bvec4 and4(bvec4 a, bvec4 b) { return bvec4(a.x && b.x, a.y && b.y, a.z && b.z, a.w && b.w); }

// rank is child k's place among the entered children, nearest first, the
// earlier child first among equals: the order of visitScalar's insertion.
int rank(dvec4 t, bvec4 in4, int k) {
	int r = 0;
	for (int j = 0; j < 4; j++) {
		if (j != k && in4[j] && (t[j] < t[k] || (t[j] == t[k] && j < k))) {
			r++;
		}
	}
	return r;
}

// fmodExact is math.Mod (C's fmod) for an integer x and a positive
// integer y: exact, as Go's loop of exact subtractions (Frexp, Ldexp) is;
// GLSL's mod (x - y*floor(x/y)) rounds.
double fmodExact(double x, double y) {
	if (abs(x) < 1073741824.0LF) { // 2^30: integers, exactly
		int r = abs(int(x)) % int(y);
		return double(x < 0.0LF ? -r : r);
	}
	precise double r = abs(x);
	int ye = expOf(y);
	// r at least halves a step: 2100 steps outlast any double.
	for (int it = 0; it < 2100 && r >= y; it++) {
		int e = expOf(r) - ye;
		precise double s = y * pow2(e);
		if (s > r) {
			s = y * pow2(e - 1);
		}
		r = r - s;
	}
	return x < 0.0LF ? -r : r;
}

// wrapIndex is models' wrapIndex: texel index i (an integer) into [0, n)
// by the wrap mode.
int wrapIndex(double i, int n, int mode) {
	precise double fn = double(n);
	if (mode == 33071) { // CLAMP_TO_EDGE
		return int(min(max(i, 0.0LF), fn - 1.0LF));
	}
	if (mode == 33648) { // MIRRORED_REPEAT
		precise double p = 2.0LF * fn;
		precise double k = fmodExact(i, p);
		if (k < 0.0LF) {
			k = k + p;
		}
		if (k >= fn) {
			k = p - 1.0LF - k;
		}
		return clamp(int(k), 0, n - 1);
	}
	precise double k = fmodExact(i, fn);
	if (k < 0.0LF) {
		k = k + fn;
	}
	return clamp(int(k), 0, n - 1);
}

// A cut-out's record (raycast.Flat's CutInts): size, filter, wrap modes,
// where its alpha plane starts.
struct Cut {
	int w, h, sWrap, tWrap, at;
	bool nearest;
};

// texel is Cutout.texel of the wrapped indices (x, y).
double texel(Cut c, int x, int y) {
	int at = c.at + y * c.w + x;
	uint a = (alphaW[at >> 2] >> (8 * (at & 3))) & 0xffu;
	precise double r = DIV(double(a), 255.0LF);
	return r;
}

// cutAlpha is Cutout.Alpha.
double cutAlpha(Cut c, double u, double v) {
	if (isnan(u) || isnan(v) || isinf(u) || isinf(v)) {
		return 0.0LF;
	}
	precise double x = u * double(c.w);
	precise double y = v * double(c.h);
	if (c.nearest) {
		return texel(c, wrapIndex(floor(x), c.w, c.sWrap), wrapIndex(floor(y), c.h, c.tWrap));
	}
	x = x - 0.5LF;
	y = y - 0.5LF;
	precise double x0 = floor(x);
	precise double y0 = floor(y);
	precise double fx = x - x0;
	precise double fy = y - y0;
	// Each index wrapped once (texel wraps the same ones twice).
	int i0 = wrapIndex(x0, c.w, c.sWrap), i1 = wrapIndex(x0 + 1.0LF, c.w, c.sWrap);
	int j0 = wrapIndex(y0, c.h, c.tWrap), j1 = wrapIndex(y0 + 1.0LF, c.h, c.tWrap);
	precise double a00 = texel(c, i0, j0);
	precise double a10 = texel(c, i1, j0);
	precise double a01 = texel(c, i0, j1);
	precise double a11 = texel(c, i1, j1);
	precise double top = a00 + fx * (a10 - a00);
	precise double bottom = a01 + fx * (a11 - a01);
	precise double r = top + fy * (bottom - top);
	return r;
}

// keeps is Geometry.keeps and Cutout.Keeps: whether triangle tri (over
// all packets) of a geometry with cut-out k stops the ray at barycentric
// (b1, b2). float32(factor*alpha) >= float32(cut) is compared in float64
// against the threshold the host worked out (raycast.KeptFrom), so that no
// double-to-float rounding of the GPU's enters it.
bool keeps(int k, int tri, double b1, double b2) {
	ivec4 r0 = cutI[2 * k], r1 = cutI[2 * k + 1];
	if (r0.x == 0) {
		return false; // cut away everywhere
	}
	Cut c = Cut(r0.x, r0.y, r0.w, r1.x, r1.y, r0.z != 0);
	int ui = (tri + r1.z) * 6;
	precise double b0 = 1.0LF - b1 - b2;
	precise double u = b0 * double(uvs[ui]) + b1 * double(uvs[ui + 2]) + b2 * double(uvs[ui + 4]);
	precise double v = b0 * double(uvs[ui + 1]) + b1 * double(uvs[ui + 3]) + b2 * double(uvs[ui + 5]);
	precise double x = cutD[k * 2] * cutAlpha(c, u, v);
	double mid = cutD[k * 2 + 1];
	return x > mid || (x == mid && r1.w != 0);
}

// hitPacket is hitLeaf: the nearest hit closer than tmax among the four
// triangles of packet p (lanes past the leaf's count are zero: det is 0),
// or tmax. Each lane is triangle.hitBary; the lanes are taken in order.
// On a geometry with cut-out cut (not -1), a hit cut away is no hit
// (Geometry.hitTri).
double hitPacket(int p, int cut, dvec3 o, dvec3 d, double tmax) {
	int b = p * 9;
	dvec4 v0x = fetch4(packs, b), v0y = fetch4(packs, b + 1), v0z = fetch4(packs, b + 2);
	dvec4 e1x = fetch4(packs, b + 3), e1y = fetch4(packs, b + 4), e1z = fetch4(packs, b + 5);
	dvec4 e2x = fetch4(packs, b + 6), e2y = fetch4(packs, b + 7), e2z = fetch4(packs, b + 8);
	// p = cross(d, e2)
	precise dvec4 px = d.y * e2z - d.z * e2y;
	precise dvec4 py = d.z * e2x - d.x * e2z;
	precise dvec4 pz = d.x * e2y - d.y * e2x;
	precise dvec4 det = e1x * px + e1y * py + e1z * pz;
	precise dvec4 sx = o.x - v0x;
	precise dvec4 sy = o.y - v0y;
	precise dvec4 sz = o.z - v0z;
	precise dvec4 un = sx * px + sy * py + sz * pz;
	bvec4 negd = lessThan(det, dvec4(0.0LF));
	precise dvec4 adet = mix(det, -det, negd);
	precise dvec4 sgn = mix(dvec4(1.0LF), dvec4(-1.0LF), negd);
	un = mix(un, -un, negd);
	// q = cross(s, e1)
	precise dvec4 qx = sy * e1z - sz * e1y;
	precise dvec4 qy = sz * e1x - sx * e1z;
	precise dvec4 qz = sx * e1y - sy * e1x;
	precise dvec4 dq = d.x * qx + d.y * qy + d.z * qz;
	precise dvec4 vn = sgn * dq;
	precise dvec4 uv = un + vn;
	precise dvec4 tn = e2x * qx + e2y * qy + e2z * qz;
	bvec4 ok = notEqual(det, dvec4(0.0LF));
	ok = and4(ok, and4(not(lessThan(un, dvec4(0.0LF))), not(greaterThan(un, adet))));
	ok = and4(ok, and4(not(lessThan(vn, dvec4(0.0LF))), not(greaterThan(uv, adet))));
	// Only the lanes that passed need their distance (the others' is not
	// used). Where division is corrected, the device's quotient first
	// sets aside the lanes whose distance is surely not positive (by the
	// signs) or surely not below tmax (it is off by far less than
	// DIV_SLACK): the correction's cost is paid for the few others. NaN
	// compares false and is set aside by neither, as tmax * DIV_SLACK
	// past the largest double is not.
#ifndef DIV_NATIVE
	precise double cap = tmax * DIV_SLACK;
	for (int l = 0; l < 4; l++) {
		precise double guess = DIV_GUESS(tn[l], det[l]);
		bool notPositive = tn[l] == 0.0LF || (tn[l] < 0.0LF && det[l] > 0.0LF) || (tn[l] > 0.0LF && det[l] < 0.0LF);
		bool beyond = tmax > 0.0LF && cap < INF && guess >= cap;
		ok[l] = ok[l] && !notPositive && !beyond;
	}
#endif
	precise dvec4 t = DIV4(tn, det, ok);
	ok = and4(ok, not(lessThanEqual(t, dvec4(0.0LF))));
	if (cut < 0) {
		for (int l = 0; l < 4; l++) {
			if (ok[l] && !(t[l] >= tmax)) {
				tmax = t[l];
			}
		}
		return tmax;
	}
	// With cut-outs, hitLeaf's lanes in order come to the nearest hit
	// that is kept: the candidates are tested nearest first, until one
	// is kept. One sampling a step (SIMD lanes run every branch, so four
	// in the lane loop would cost four for every leaf).
	bvec4 cand = ok;
	for (int l = 0; l < 4; l++) {
		cand[l] = ok[l] && !(t[l] >= tmax);
	}
	for (int it = 0; it < 4; it++) {
		int best = -1;
		for (int l = 0; l < 4; l++) {
			if (cand[l] && (best < 0 || t[l] < t[best])) {
				best = l;
			}
		}
		if (best < 0) {
			break;
		}
		precise double b1 = DIV(un[best], adet[best]);
		precise double b2 = DIV(vn[best], adet[best]);
		if (keeps(cut, p * 4 + best, b1, b2)) {
			tmax = t[best];
			break;
		}
		cand[best] = false;
	}
	return tmax;
}

// mapRay maps the world ray into instance i (affine.point and
// affine.vector, sums left to right) and prepares it (ray.set).
void mapRay(int i, dvec3 wo, dvec3 wd, out dvec3 o, out dvec3 d, out dvec3 inv, out bvec3 neg) {
	int a = 3 * i;
	dvec4 r0 = fetch4(instD, a), r1 = fetch4(instD, a + 1), r2 = fetch4(instD, a + 2);
	precise double ox = r0.x * wo.x + r0.y * wo.y + r0.z * wo.z + r0.w;
	precise double oy = r1.x * wo.x + r1.y * wo.y + r1.z * wo.z + r1.w;
	precise double oz = r2.x * wo.x + r2.y * wo.y + r2.z * wo.z + r2.w;
	precise double dx = r0.x * wd.x + r0.y * wd.y + r0.z * wd.z;
	precise double dy = r1.x * wd.x + r1.y * wd.y + r1.z * wd.z;
	precise double dz = r2.x * wd.x + r2.y * wd.y + r2.z * wd.z;
	o = dvec3(ox, oy, oz);
	d = dvec3(dx, dy, dz);
	precise dvec3 li = dvec3(DIV(1.0LF, dx), DIV(1.0LF, dy), DIV(1.0LF, dz));
	inv = li;
	for (int k = 0; k < 3; k++) {
		neg[k] = unpackDouble2x32(li[k]).y >= 0x80000000u;
	}
}

// The traversal's state: the ray of the level being traversed (the
// world's, or mapped into the instance whose geometry is), the stack
// (a geometry's entries lie above base), the node or leaf to take next.
dvec3 wo, wd, winv;
bvec3 wneg;
dvec3 o, d, inv;
bvec3 neg;
bool inGeom;
int inst, instEnd;
int cut; // the geometry's cut-out, -1 if none
int sp, base, cur;
double tmax;

// popNext is popNear within the level: it sets cur to the next node left
// for later that the ray enters no farther than tmax. A geometry done
// goes back to the instance hierarchy, to its leaf's next instance if it
// has one (cur is then a leaf of the instances left). It returns false
// when nothing is left.
bool popNext() {
	while (true) {
		while (sp > base) {
			sp--;
			if (stackT[sp] <= tmax) {
				cur = stackNode[sp];
				return true;
			}
		}
		if (!inGeom) {
			return false;
		}
		inGeom = false;
		base = 0;
		o = wo;
		d = wd;
		inv = winv;
		neg = wneg;
		inst++;
		if (inst < instEnd) {
			cur = ~(inst << 3 | (instEnd - inst));
			return true;
		}
	}
	return false;
}

// main is castHinted (without its hint) with Geometry.intersectGo run
// inside it. The loops are those of while-while traversal (Aila and
// Laine): nodes of either level until every lane holds a leaf, then one
// leaf test or instance entry. A SIMD machine (llvmpipe's lanes, a warp)
// runs every branch of a loop's body for all lanes, masked: a body
// holding only the node test keeps the triangle test and the ray mapping
// out of the many node steps.
void main() {
	int ri = int(gl_GlobalInvocationID.x);
	if (ri >= nRays) {
		return;
	}
	int set = raySet[ri];
	wo = rayD[originsAt + set].xyz;
	dvec4 rd4 = rayD[ri];
	wd = rd4.xyz;
	double bound = rd4.w;
	tmax = bound;
	precise dvec3 wi = dvec3(DIV(1.0LF, wd.x), DIV(1.0LF, wd.y), DIV(1.0LF, wd.z));
	winv = wi;
	for (int a = 0; a < 3; a++) {
		wneg[a] = unpackDouble2x32(winv[a]).y >= 0x80000000u;
	}
	o = wo;
	d = wd;
	inv = winv;
	neg = wneg;
	inGeom = false;
	inst = 0;
	instEnd = 0;
	cut = -1;
	sp = 0;
	base = 0;
	cur = topRoot;
	bool overflow = false;
	bool done = false;
	while (!done) {
		while (cur >= 0) {
			int b = cur * 6;
			dvec4 lo[3] = dvec4[3](fetch4(nodeD, b), fetch4(nodeD, b + 1), fetch4(nodeD, b + 2));
			dvec4 hi[3] = dvec4[3](fetch4(nodeD, b + 3), fetch4(nodeD, b + 4), fetch4(nodeD, b + 5));
			ivec4 refs = texelFetch(nodeI, cur);
			dvec4 t0;
			bvec4 in4 = and4(entry(lo, hi, o, inv, neg, tmax, t0), notEqual(refs, ivec4(0)));
			int m = int(in4.x) + int(in4.y) + int(in4.z) + int(in4.w);
			if (m == 0) {
				if (!popNext()) {
					done = true;
					break;
				}
				continue;
			}
			if (sp + m - 1 > STACK) {
				overflow = true;
				done = true;
				break;
			}
			// pushFar: the nearest is visited next, the others are left
			// for later farthest first.
			for (int k = 0; k < 4; k++) {
				if (in4[k]) {
					int r = rank(t0, in4, k);
					if (r == 0) {
						cur = refs[k];
					} else {
						stackNode[sp + m - 1 - r] = refs[k];
						stackT[sp + m - 1 - r] = t0[k];
					}
				}
			}
			sp += m - 1;
		}
		if (done) {
			break;
		}
		if (inGeom) {
			tmax = hitPacket((~cur) >> 3, cut, o, d, tmax);
			if (!popNext()) {
				break;
			}
		} else {
			// A leaf of instances: the first one's geometry.
			inst = (~cur) >> 3;
			instEnd = inst + ((~cur) & 7);
			mapRay(inst, wo, wd, o, d, inv, neg);
			cut = instCut[inst];
			inGeom = true;
			base = sp;
			cur = texelFetch(instI, inst).x;
		}
	}
	// NaN marks a ray whose stack overflowed: the host casts it again.
	if (overflow) {
		outT[ri] = packDouble2x32(uvec2(0u, 0x7ff80000u));
	} else if (tmax < bound) {
		outT[ri] = tmax;
	} else {
		outT[ri] = INF;
	}
}
