// Float64 division rounded as IEEE 754 and Go round it (to nearest, ties
// to even), for devices whose own division does not: GLSL asks of a double
// division only single precision, and NVIDIA's was seen 1-2 ulps off. Only
// additions, subtractions and multiplications, each correctly rounded on
// every device with float64, decide the result; the device's division
// gives the first guess. Every value is precise: a compiler that fused or
// simplified (cx - (cx - x) is not x) would break Dekker's product.

// DIV_SLACK is 1 + 2^-40: a device quotient at least tmax * DIV_SLACK
// is of a true quotient above tmax, for a guess off by less than 2^-45 of
// it (the probe's samples pass within 8 ulps, DIV_STEPS).
#define DIV_SLACK packDouble2x32(uvec2(0x1000u, 0x3ff00000u))

double bitsDouble(uint lo, uint hi) { return packDouble2x32(uvec2(lo, hi)); }

// pow2 is 2^e for a normal e (-1022 to 1023).
double pow2(int e) { return bitsDouble(0u, uint(e + 1023) << 20); }

// expOf is the exponent of a normal x.
int expOf(double x) { return int((unpackDouble2x32(x).y >> 20) & 0x7ffu) - 1023; }

// DIV_GUESS(a, b), the first guess: the device's a/b (tests perturb it);
// DIV_STEPS, the most corrections of a spacing made from it; DIV_FMA,
// defined where the device's fma is exact (see remainder).
DIV_DEFINITIONS

// prodErr is x*y - p exactly, for p = x*y rounded (Dekker's product, with
// Veltkamp's split), x and y within a few binades of 1.
double prodErr(double x, double y, double p) {
	precise double cx = 134217729.0LF * x; // 2^27 + 1
	precise double xh = cx - (cx - x);
	precise double xl = x - xh;
	precise double cy = 134217729.0LF * y;
	precise double yh = cy - (cy - y);
	precise double yl = y - yh;
	precise double e = ((xh * yh - p) + xh * yl + xl * yh) + xl * yl;
	return e;
}

// remainder is ma - q*mb, exact where q is within a spacing or so of
// ma/mb: then it is a double. With DIV_FMA, one fused multiply-add;
// else (ma - p) is exact (Sterbenz) and Dekker's product gives the rest.
double remainder(double ma, double q, double mb) {
#ifdef DIV_FMA
	precise double r = fma(-q, mb, ma);
#else
	precise double p = q * mb;
	precise double r = (ma - p) - prodErr(q, mb, p);
#endif
	return r;
}

// spacing is the distance from q > 0 to the next double above it (up), or
// below it, but never less than grid: the spacing of the quotients that
// come out subnormal (0 where none can).
double spacing(double q, bool up, double grid) {
	if (q == 0.0LF) {
		return grid;
	}
	uvec2 u = unpackDouble2x32(q);
	int e = expOf(q) - 52;
	if (!up && u.x == 0u && (u.y & 0xfffffu) == 0u) {
		e--; // below a power of two the spacing halves
	}
	return max(pow2(e), grid);
}

// odd reports whether q is an odd multiple of s (a power of two).
bool odd(double q, double s) {
	precise double h = q * pow2(-expOf(s) - 1);
	return h != floor(h);
}

// divRN is a/b rounded to nearest, ties to even, NaN, infinities, zeros
// and subnormals included. The quotient of the two significands, in
// (0.5, 2), is corrected from the device's guess, a spacing at a time,
// until the exact remainder (Dekker) puts the true quotient within half a
// spacing of it; then scaled by the exponents' difference, exactly.
double divRN(double a, double b) {
	uvec2 ua = unpackDouble2x32(a), ub = unpackDouble2x32(b);
	uint sign = (ua.y ^ ub.y) & 0x80000000u;
	int ea = int((ua.y >> 20) & 0x7ffu), eb = int((ub.y >> 20) & 0x7ffu);
	bool fracA = (ua.y & 0xfffffu) != 0u || ua.x != 0u;
	bool fracB = (ub.y & 0xfffffu) != 0u || ub.x != 0u;
	bool zeroA = ea == 0 && !fracA, zeroB = eb == 0 && !fracB;
	if (ea == 2047 || eb == 2047 || zeroA || zeroB) {
		if ((ea == 2047 && fracA) || (eb == 2047 && fracB) || (zeroA && zeroB) || (ea == 2047 && eb == 2047)) {
			return bitsDouble(0u, 0x7ff80000u); // NaN
		}
		if (ea == 2047 || zeroB) {
			return bitsDouble(0u, sign | 0x7ff00000u);
		}
		return bitsDouble(0u, sign);
	}
	// Subnormal operands are scaled by 2^64 first (exactly).
	int k = 0;
	if (ea == 0) {
		precise double s = abs(a) * pow2(64);
		ua = unpackDouble2x32(s);
		ea = int((ua.y >> 20) & 0x7ffu);
		k -= 64;
	}
	if (eb == 0) {
		precise double s = abs(b) * pow2(64);
		ub = unpackDouble2x32(s);
		eb = int((ub.y >> 20) & 0x7ffu);
		k += 64;
	}
	k += ea - eb; // a/b = ma/mb * 2^k
	double ma = bitsDouble(ua.x, (ua.y & 0xfffffu) | 0x3ff00000u);
	double mb = bitsDouble(ub.x, (ub.y & 0xfffffu) | 0x3ff00000u);
	// Quotients below 2^-1022 are multiples of 2^-1074: in ma/mb's scale,
	// of 2^(-1074-k). Past 2 that is more than the quotient can round to.
	int gridE = -1074 - k;
	if (gridE > 1) {
		return bitsDouble(0u, sign);
	}
	double grid = gridE >= -53 ? pow2(gridE) : 0.0LF;
	precise double q = DIV_GUESS(ma, mb);
	if (grid > 0.0LF) {
		q = floor(q * pow2(-gridE)) * grid;
	}
	for (int it = 0; it < DIV_STEPS; it++) {
		precise double r = remainder(ma, q, mb);
		double up = spacing(q, true, grid), down = spacing(q, false, grid);
		precise double hu = 0.5LF * up * mb;
		precise double hd = 0.5LF * down * mb;
		if (r > hu) {
			q = q + up;
		} else if (r < -hd) {
			q = q - down;
		} else {
			// Exact halves happen only among subnormal quotients.
			if (r == hu && odd(q, up)) {
				q = q + up;
			} else if (r == -hd && odd(q, down)) {
				q = q - down;
			}
			break;
		}
	}
	if (q == 0.0LF) {
		return bitsDouble(0u, sign);
	}
	int e = expOf(q) + k;
	if (e > 1023) {
		return bitsDouble(0u, sign | 0x7ff00000u);
	}
	uvec2 uq = unpackDouble2x32(q);
	if (e >= -1022) {
		return bitsDouble(uq.x, sign | (uq.y & 0xfffffu) | (uint(e + 1023) << 20));
	}
	// A subnormal quotient: q lies on its grid, so both steps are exact.
	precise double s = q * pow2(-600) * pow2(k + 600);
	uvec2 us = unpackDouble2x32(s);
	return bitsDouble(us.x, sign | us.y);
}

// divRN4 is divRN lane by lane, in the lanes of m only (0 in the others).
dvec4 divRN4(dvec4 a, dvec4 b, bvec4 m) {
	dvec4 q = dvec4(0.0LF);
	for (int l = 0; l < 4; l++) {
		if (m[l]) {
			q[l] = divRN(a[l], b[l]);
		}
	}
	return q;
}
