#version 430
// The exact caster's traversal (sensors/raycast: castHinted without its
// hint, Geometry.intersectGo, visitScalar, triangle.hitBary), ray by ray,
// in float64 with the Go code's operations in its order. Every value is
// precise: no fused multiply-add and no reassociation may change a bit.
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer TopD { double topD[]; };  // top nodes, then ToLocal
layout(std430, binding = 1) readonly buffer TopI { int topI[]; };     // top refs, then Roots
layout(std430, binding = 2) readonly buffer GeomD { double geomD[]; };
layout(std430, binding = 3) readonly buffer GeomI { int geomI[]; };
layout(std430, binding = 4) readonly buffer Packs { double packs[]; };
layout(std430, binding = 5) readonly buffer RayD { double rayD[]; };  // per ray dx dy dz bound, then per set ox oy oz
layout(std430, binding = 6) readonly buffer RayI { int raySet[]; };
layout(std430, binding = 7) writeonly buffer Out { double outT[]; };

uniform int nRays;
uniform int toLocalAt; // where ToLocal starts in topD
uniform int rootsAt;   // where Roots starts in topI
uniform int originsAt; // where the origins start in rayD

const int STACK = 64;
#define ROBUST ROBUST_VALUE
#define INF packDouble2x32(uvec2(0u, 0x7ff00000u))

// The stacks of nodes left for later: the top hierarchy's and a
// geometry's (a geometry is traversed whole within a top leaf).
int topNode[STACK];
double topT[STACK];
int geomNode[STACK];
double geomT[STACK];
bool overflow;

// visit is visitScalar: the children of node entered before tmax, nearest
// first (the earlier child first among equals), in refs and ts.
int visit(bool top, int node, dvec3 o, dvec3 inv, bvec3 neg, double tmax, out int refs[4], out double ts[4]) {
	int m = 0;
	int b = node * 24;
	int n = top ? topI[node * 5 + 4] : geomI[node * 5 + 4];
	for (int k = 0; k < 4; k++) {
		if (k >= n) {
			break;
		}
		precise double t0 = 0.0LF;
		precise double t1 = INF;
		for (int a = 0; a < 3; a++) {
			int lo = b + a * 4 + k;
			int hi = b + 12 + a * 4 + k;
			int ni = neg[a] ? hi : lo;
			int fi = neg[a] ? lo : hi;
			double nv = top ? topD[ni] : geomD[ni];
			double fv = top ? topD[fi] : geomD[fi];
			precise double an = (nv - o[a]) * inv[a];
			if (an > t0) {
				t0 = an;
			}
			precise double af = (fv - o[a]) * inv[a];
			if (af < t1) {
				t1 = af;
			}
		}
		t1 = t1 * ROBUST;
		if (t1 > tmax) {
			t1 = tmax;
		}
		if (t0 > t1) {
			continue;
		}
		int ref = top ? topI[node * 5 + k] : geomI[node * 5 + k];
		int j = m;
		while (j > 0 && ts[j - 1] > t0) {
			ts[j] = ts[j - 1];
			refs[j] = refs[j - 1];
			j--;
		}
		ts[j] = t0;
		refs[j] = ref;
		m++;
	}
	return m;
}

double dot3(dvec3 a, dvec3 b) {
	precise double x = a.x * b.x;
	precise double y = a.y * b.y;
	precise double z = a.z * b.z;
	precise double s = x + y;
	precise double r = s + z;
	return r;
}

dvec3 cross3(dvec3 a, dvec3 b) {
	precise double x0 = a.y * b.z;
	precise double x1 = a.z * b.y;
	precise double y0 = a.z * b.x;
	precise double y1 = a.x * b.z;
	precise double z0 = a.x * b.y;
	precise double z1 = a.y * b.x;
	precise dvec3 r = dvec3(x0 - x1, y0 - y1, z0 - z1);
	return r;
}

// hit is triangle.hitBary's distance: the nearest hit closer than tmax
// of lane l of packet p, or tmax.
double hit(int p, int l, dvec3 o, dvec3 d, double tmax) {
	int b = p * 36 + l;
	dvec3 v0 = dvec3(packs[b], packs[b + 4], packs[b + 8]);
	dvec3 e1 = dvec3(packs[b + 12], packs[b + 16], packs[b + 20]);
	dvec3 e2 = dvec3(packs[b + 24], packs[b + 28], packs[b + 32]);
	precise dvec3 pv = cross3(d, e2);
	precise double det = dot3(e1, pv);
	if (det == 0.0LF) {
		return tmax;
	}
	precise dvec3 s = o - v0;
	precise double un = dot3(s, pv);
	precise double adet = det;
	precise double sgn = 1.0LF;
	if (det < 0.0LF) {
		adet = -det;
		sgn = -1.0LF;
		un = -un;
	}
	if (un < 0.0LF || un > adet) {
		return tmax;
	}
	precise dvec3 q = cross3(s, e1);
	precise double vn = sgn * dot3(d, q);
	precise double uv = un + vn;
	if (vn < 0.0LF || uv > adet) {
		return tmax;
	}
	precise double t = dot3(e2, q) / det;
	if (t <= 0.0LF || t >= tmax) {
		return tmax;
	}
	return t;
}

// intersect is Geometry.intersectGo: the nearest hit below tmax in the
// geometry whose root is node root (tmax if none).
double intersect(int root, dvec3 o, dvec3 d, double tmax) {
	precise dvec3 inv = dvec3(1.0LF / d.x, 1.0LF / d.y, 1.0LF / d.z);
	bvec3 neg;
	for (int a = 0; a < 3; a++) {
		neg[a] = unpackDouble2x32(inv[a]).y >= 0x80000000u;
	}
	int refs[4];
	double ts[4];
	int sp = 0;
	int cur = root;
	while (true) {
		bool descend = false;
		if (cur >= 0) {
			int m = visit(false, cur, o, inv, neg, tmax, refs, ts);
			if (m > 0) {
				for (int k = m - 1; k > 0; k--) {
					if (sp == STACK) {
						overflow = true;
						return tmax;
					}
					geomNode[sp] = refs[k];
					geomT[sp] = ts[k];
					sp++;
				}
				cur = refs[0];
				descend = true;
			}
		} else {
			int l = ~cur;
			int pk = l >> 3;
			int count = l & 7;
			for (int i = 0; i < count; i++) {
				tmax = hit(pk, i, o, d, tmax);
			}
		}
		if (descend) {
			continue;
		}
		bool found = false;
		while (sp > 0) {
			sp--;
			if (geomT[sp] <= tmax) {
				cur = geomNode[sp];
				found = true;
				break;
			}
		}
		if (!found) {
			return tmax;
		}
	}
	return tmax;
}

void main() {
	int ri = int(gl_GlobalInvocationID.x);
	if (ri >= nRays) {
		return;
	}
	overflow = false;
	int set = raySet[ri];
	dvec3 o = dvec3(rayD[originsAt + 3 * set], rayD[originsAt + 3 * set + 1], rayD[originsAt + 3 * set + 2]);
	dvec3 d = dvec3(rayD[4 * ri], rayD[4 * ri + 1], rayD[4 * ri + 2]);
	double bound = rayD[4 * ri + 3];
	double tmax = bound;
	precise dvec3 inv = dvec3(1.0LF / d.x, 1.0LF / d.y, 1.0LF / d.z);
	bvec3 neg;
	for (int a = 0; a < 3; a++) {
		neg[a] = unpackDouble2x32(inv[a]).y >= 0x80000000u;
	}
	int refs[4];
	double ts[4];
	int sp = 0;
	int cur = 0;
	while (true) {
		bool descend = false;
		if (cur >= 0) {
			int m = visit(true, cur, o, inv, neg, tmax, refs, ts);
			if (m > 0) {
				for (int k = m - 1; k > 0; k--) {
					if (sp == STACK) {
						overflow = true;
						break;
					}
					topNode[sp] = refs[k];
					topT[sp] = ts[k];
					sp++;
				}
				cur = refs[0];
				descend = true;
			}
		} else {
			int l = ~cur;
			int first = l >> 3;
			int count = l & 7;
			for (int i = first; i < first + count; i++) {
				int a = toLocalAt + 12 * i;
				// affine.point and affine.vector, sums left to right.
				precise double ox = topD[a] * o.x + topD[a + 1] * o.y + topD[a + 2] * o.z + topD[a + 3];
				precise double oy = topD[a + 4] * o.x + topD[a + 5] * o.y + topD[a + 6] * o.z + topD[a + 7];
				precise double oz = topD[a + 8] * o.x + topD[a + 9] * o.y + topD[a + 10] * o.z + topD[a + 11];
				precise double dx = topD[a] * d.x + topD[a + 1] * d.y + topD[a + 2] * d.z;
				precise double dy = topD[a + 4] * d.x + topD[a + 5] * d.y + topD[a + 6] * d.z;
				precise double dz = topD[a + 8] * d.x + topD[a + 9] * d.y + topD[a + 10] * d.z;
				tmax = intersect(topI[rootsAt + i], dvec3(ox, oy, oz), dvec3(dx, dy, dz), tmax);
			}
		}
		if (overflow) {
			break;
		}
		if (descend) {
			continue;
		}
		bool found = false;
		while (sp > 0) {
			sp--;
			if (topT[sp] <= tmax) {
				cur = topNode[sp];
				found = true;
				break;
			}
		}
		if (!found) {
			break;
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
