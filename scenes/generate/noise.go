package main

import "math"

// Procedural noise for the RAVON textures and terrain. Everything is a pure
// function of integer lattice hashes, so the assets come out byte-identical
// on every run.

// hash2 mixes two lattice coordinates and a seed into 64 well-spread bits
// (the splitmix64 finalizer).
func hash2(x, y int64, seed uint64) uint64 {
	h := uint64(x)*0x9e3779b97f4a7c15 ^ uint64(y)*0xc2b2ae3d27d4eb4f ^ seed*0x165667b19e3779f9
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// unit maps a hash to [0, 1).
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// valueNoise is smooth lattice noise in [0, 1) with unit cell size.
func valueNoise(x, y float64, seed uint64) float64 {
	x0, y0 := math.Floor(x), math.Floor(y)
	fx, fy := x-x0, y-y0
	ix, iy := int64(x0), int64(y0)
	sx, sy := fx*fx*(3-2*fx), fy*fy*(3-2*fy)
	a := unit(hash2(ix, iy, seed))
	b := unit(hash2(ix+1, iy, seed))
	c := unit(hash2(ix, iy+1, seed))
	d := unit(hash2(ix+1, iy+1, seed))
	top := a + (b-a)*sx
	bot := c + (d-c)*sx
	return top + (bot-top)*sy
}

// fbm sums octaves of value noise, each twice the frequency and half the
// amplitude of the one before, normalized to [0, 1).
func fbm(x, y float64, octaves int, seed uint64) float64 {
	sum, amp, norm := 0.0, 1.0, 0.0
	for o := 0; o < octaves; o++ {
		sum += amp * valueNoise(x, y, seed+uint64(o)*1013)
		norm += amp
		amp *= 0.5
		x, y = 2*x+0.37, 2*y+0.71
	}
	return sum / norm
}

// cells is Worley noise with one jittered feature point per unit cell: it
// returns the distances to the nearest and second nearest points and the
// nearest point's hash (a stone's identity).
func cells(x, y float64, seed uint64) (f1, f2 float64, id uint64) {
	cx, cy := int64(math.Floor(x)), int64(math.Floor(y))
	f1, f2 = math.Inf(1), math.Inf(1)
	for j := cy - 1; j <= cy+1; j++ {
		for i := cx - 1; i <= cx+1; i++ {
			h := hash2(i, j, seed)
			px := float64(i) + 0.1 + 0.8*unit(h)
			py := float64(j) + 0.1 + 0.8*unit(h*0x2545f4914f6cdd1d+1)
			d := math.Hypot(x-px, y-py)
			switch {
			case d < f1:
				f1, f2, id = d, f1, h
			case d < f2:
				f2 = d
			}
		}
	}
	return f1, f2, id
}

// rng is a small deterministic generator (splitmix64) for placing things.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// float returns a number in [lo, hi).
func (r *rng) float(lo, hi float64) float64 { return lo + (hi-lo)*unit(r.next()) }
