package sensors

import (
	"fmt"
	"image"
	"math"
	"runtime"
	"sync"

	"github.com/simvis/simvis/scene"
)

// Lens distortion of cameras, as OpenCV defines it.
//
// A distorted camera renders an undistorted pinhole image wide enough to
// hold every ray its pixels see, then resamples it: each output pixel
// (u, v) is normalized with K^-1 to distorted coordinates (xd, yd), the
// model is inverted exactly (Newton's method to 1e-12, not OpenCV's
// five fixed-point steps) to the undistorted ray (x, y, 1), and the ray's
// pixel in the wide render is sampled bilinearly. The wide render has the
// camera's focal length (same pixel density on the axis) and is centered
// on the axis; its half-size is the largest |x|, |y| of any pixel's ray
// plus two pixels (the bilinear neighbour and a margin), so every ray lands
// inside it. The wide view is rendered at 2x2 samples per pixel and box
// filtered first (see supersample). The per-pixel map is computed once,
// when the camera is made: 8 bytes per pixel.
//
// Bounds: the wide render may have at most 16 times the image's pixels and
// 8192 pixels a side (16384 supersampled); a field wider than that (a fisheye near 180
// degrees, which no single pinhole render covers) is an error naming fov.

// Equidistant is OpenCV's fisheye model (cv::fisheye): D = k1 k2 k3 k4,
// theta_d = theta (1 + k1 theta^2 + k2 theta^4 + k3 theta^6 + k4 theta^8)
// with theta the ray's angle off the axis, (xd, yd) = theta_d (x, y) / r.
const Equidistant = "equidistant"

// Distortion is a camera's lens model and coefficients. The zero value
// (or PlumbBob with zero coefficients) is an ideal pinhole.
type Distortion struct {
	Model string // PlumbBob (also for "") or Equidistant
	// PlumbBob: xd = x (1 + k1 r^2 + k2 r^4 + k3 r^6) + 2 p1 x y + p2 (r^2 + 2 x^2),
	// yd = y (1 + k1 r^2 + k2 r^4 + k3 r^6) + p1 (r^2 + 2 y^2) + 2 p2 x y.
	// Equidistant uses K1..K4 (see Equidistant).
	K1, K2, K3, K4, P1, P2 float64
}

// D returns the coefficients as sensor_msgs/CameraInfo and OpenCV order
// them: k1 k2 p1 p2 k3 for plumb_bob, k1 k2 k3 k4 for equidistant.
func (d Distortion) D() []float64 {
	if d.Model == Equidistant {
		return []float64{d.K1, d.K2, d.K3, d.K4}
	}
	return []float64{d.K1, d.K2, d.P1, d.P2, d.K3}
}

// ModelName returns the distortion_model string: "plumb_bob" or
// "equidistant".
func (d Distortion) ModelName() string {
	if d.Model == Equidistant {
		return Equidistant
	}
	return PlumbBob
}

// IsIdentity reports whether the model distorts nothing.
func (d Distortion) IsIdentity() bool {
	if d.Model == Equidistant {
		// theta_d = theta is not the pinhole: an equidistant lens always distorts.
		return false
	}
	return d.K1 == 0 && d.K2 == 0 && d.K3 == 0 && d.P1 == 0 && d.P2 == 0
}

// Distort maps an undistorted normalized point (x, y) = (X/Z, Y/Z) to
// distorted normalized coordinates, as cv::projectPoints and
// cv::fisheye::projectPoints do (before K).
func (d Distortion) Distort(x, y float64) (xd, yd float64) {
	if d.Model == Equidistant {
		r := math.Hypot(x, y)
		if r == 0 {
			return 0, 0
		}
		th := math.Atan(r)
		s := d.thetaD(th) / r
		return s * x, s * y
	}
	r2 := x*x + y*y
	radial := 1 + r2*(d.K1+r2*(d.K2+r2*d.K3))
	return x*radial + 2*d.P1*x*y + d.P2*(r2+2*x*x), y*radial + d.P1*(r2+2*y*y) + 2*d.P2*x*y
}

func (d Distortion) thetaD(th float64) float64 {
	t2 := th * th
	return th * (1 + t2*(d.K1+t2*(d.K2+t2*(d.K3+t2*d.K4))))
}

// dThetaD is the derivative of thetaD.
func (d Distortion) dThetaD(th float64) float64 {
	t2 := th * th
	return 1 + t2*(3*d.K1+t2*(5*d.K2+t2*(7*d.K3+t2*9*d.K4)))
}

// radial is plumb_bob's r_d(r) = r (1 + k1 r^2 + k2 r^4 + k3 r^6) and dRadial its derivative.
func (d Distortion) radial(r float64) float64 {
	r2 := r * r
	return r * (1 + r2*(d.K1+r2*(d.K2+r2*d.K3)))
}

func (d Distortion) dRadial(r float64) float64 {
	r2 := r * r
	return 1 + r2*(3*d.K1+r2*(5*d.K2+r2*7*d.K3))
}

// Undistort inverts Distort: the undistorted normalized point whose image
// is (xd, yd). ok is false where no ray maps there (beyond the lens's
// field, or the iteration did not converge to 1e-12 relative to
// max(1, |(xd, yd)|)).
func (d Distortion) Undistort(xd, yd float64) (x, y float64, ok bool) {
	if d.Model == Equidistant {
		rd := math.Hypot(xd, yd)
		if rd == 0 {
			return 0, 0, true
		}
		th := rd // Newton on thetaD(th) = rd from the undistorted guess
		for i := 0; i < 50; i++ {
			step := (d.thetaD(th) - rd) / d.dThetaD(th)
			th -= step
			if math.Abs(step) < 1e-14 {
				break
			}
		}
		if !(math.Abs(d.thetaD(th)-rd) < 1e-12*math.Max(1, rd)) || th <= 0 || th >= math.Pi/2 {
			return 0, 0, false
		}
		s := math.Tan(th) / rd
		return s * xd, s * yd, true
	}
	x, y = xd, yd
	for i := 0; i < 50; i++ {
		fx, fy := d.Distort(x, y)
		fx, fy = fx-xd, fy-yd
		a, b, c, e := d.jacobian(x, y)
		det := a*e - b*c
		if det == 0 || math.IsNaN(det) {
			return 0, 0, false
		}
		dx := (e*fx - b*fy) / det
		dy := (a*fy - c*fx) / det
		x, y = x-dx, y-dy
		if math.Abs(dx)+math.Abs(dy) < 1e-14 {
			break
		}
	}
	fx, fy := d.Distort(x, y)
	if !(math.Abs(fx-xd)+math.Abs(fy-yd) < 1e-12*math.Max(1, math.Abs(xd)+math.Abs(yd))) {
		return 0, 0, false
	}
	return x, y, true
}

// jacobian returns plumb_bob's [a b; c e] = d(xd, yd)/d(x, y).
func (d Distortion) jacobian(x, y float64) (a, b, c, e float64) {
	r2 := x*x + y*y
	rad := 1 + r2*(d.K1+r2*(d.K2+r2*d.K3))
	dRad := 2 * (d.K1 + r2*(2*d.K2+r2*3*d.K3)) // d rad / d(r2) times 2: d rad/dx = dRad x
	a = rad + x*dRad*x + 2*d.P1*y + 6*d.P2*x
	b = x*dRad*y + 2*d.P1*x + 2*d.P2*y
	c = y*dRad*x + 2*d.P1*x + 2*d.P2*y
	e = rad + y*dRad*y + 6*d.P1*y + 2*d.P2*x
	return a, b, c, e
}

// readDistortion reads distortion_model and its coefficients; a
// coefficient of the other model is an error naming it.
func readDistortion(c *scene.Command) (Distortion, error) {
	d := Distortion{Model: PlumbBob}
	if v, ok := c.Attr("distortion_model"); ok {
		switch v {
		case PlumbBob, Equidistant:
			d.Model = v
		default:
			return d, c.Errorf("distortion_model", "%q is not %q or %q", v, PlumbBob, Equidistant)
		}
	}
	own := map[string]*float64{"k1": &d.K1, "k2": &d.K2, "k3": &d.K3}
	if d.Model == Equidistant {
		own["k4"] = &d.K4
		for _, p := range []string{"p1", "p2"} {
			if c.Has(p) {
				return d, c.Errorf(p, "is a %s coefficient; %s has k1 k2 k3 k4", PlumbBob, Equidistant)
			}
		}
	} else {
		own["p1"], own["p2"] = &d.P1, &d.P2
		if c.Has("k4") {
			return d, c.Errorf("k4", "is an %s coefficient; %s has k1 k2 p1 p2 k3", Equidistant, PlumbBob)
		}
	}
	for _, name := range []string{"k1", "k2", "p1", "p2", "k3", "k4"} {
		p, ok := own[name]
		if !ok {
			continue
		}
		v, err := c.Float(name, 0) // Float refuses NaN and Inf
		if err != nil {
			return d, err
		}
		// Larger coefficients fold any image a pinhole render could cover.
		if math.Abs(v) > 1e3 {
			return d, c.Errorf(name, "%g is out of range [-1000, 1000]", v)
		}
		*p = v
	}
	return d, nil
}

// undistortMap is a distorted camera's resampling plan: the wide
// undistorted view to render and, per output pixel, where to sample it.
type undistortMap struct {
	w, h     int       // the wide render's size
	hfov     float64   // its horizontal field, degrees
	src      []float32 // per output pixel: u, v in the wide render
	outW     int
	outH     int
	maxTheta float64 // the largest angle off the axis any pixel sees, degrees
	f        float64 // the wide render's focal length, pixels (the camera's)
}

const (
	maxRenderScale = 16    // the wide render's pixels per image pixel, at most
	maxRenderSide  = 16384 // and its side
)

// newUndistortMap plans the resampling of a camera with intrinsics in and
// lens d, or returns an error naming the attribute at fault: a
// coefficient whose mapping is not monotonic over the image, or fov where
// the field is too wide for one pinhole render.
func newUndistortMap(c *scene.Command, in Intrinsics, d Distortion) (*undistortMap, error) {
	if err := checkMonotonic(c, in, d); err != nil {
		return nil, err
	}
	// src first holds each pixel's undistorted ray (x, y) (float32 is
	// 1e-7 relative: 1e-4 px at the image's edge), then its render pixel.
	m := &undistortMap{outW: in.Width, outH: in.Height, src: make([]float32, 2*in.Width*in.Height)}
	pts := m.src
	var maxX, maxY float64
	for v := 0; v < in.Height; v++ {
		yd := (float64(v) - in.Cy) / in.Fy
		for u := 0; u < in.Width; u++ {
			xd := (float64(u) - in.Cx) / in.Fx
			x, y, ok := d.Undistort(xd, yd)
			if !ok {
				return nil, c.Errorf(culprit(d), "%s lens: pixel (%d, %d) sees no ray (it lies beyond the lens's field or where the mapping folds): reduce fov or the coefficients", d.ModelName(), u, v)
			}
			i := 2 * (v*in.Width + u)
			pts[i], pts[i+1] = float32(x), float32(y)
			maxX, maxY = math.Max(maxX, math.Abs(x)), math.Max(maxY, math.Abs(y))
			m.maxTheta = math.Max(m.maxTheta, math.Atan(math.Hypot(x, y))*180/math.Pi)
		}
	}
	// Rows must run left to right and columns top to bottom in the
	// undistorted image too: otherwise the lens folds the picture.
	for v := 0; v < in.Height; v++ {
		for u := 0; u < in.Width; u++ {
			i := 2 * (v*in.Width + u)
			if u > 0 && !(pts[i] > pts[i-2]) || v > 0 && !(pts[i+1] > pts[i+1-2*in.Width]) {
				return nil, c.Errorf(culprit(d), "%s lens D=%v: the mapping is not monotonic over the image (it folds at pixel (%d, %d))", d.ModelName(), d.D(), u, v)
			}
		}
	}
	f := in.Fx // square pixels: Fx == Fy
	m.f = f
	hx := math.Ceil(maxX*f) + 2
	hy := math.Ceil(maxY*f) + 2
	m.w, m.h = int(2*hx+1), int(2*hy+1)
	if float64(supersample*m.w) > maxRenderSide || float64(supersample*m.h) > maxRenderSide || float64(m.w)*float64(m.h) > maxRenderScale*float64(in.Width*in.Height) {
		return nil, c.Errorf("fov", "the %s lens sees rays %.1f degrees off the axis: the undistorted render covering them would be %.0fx%.0f pixels, more than %d times the image's pixels or %d a side (one pinhole render cannot cover a field near 180 degrees): reduce fov or the distortion", d.ModelName(), m.maxTheta, 2*hx+1, 2*hy+1, maxRenderScale, maxRenderSide/supersample)
	}
	m.hfov = 2 * math.Atan(float64(m.w)/(2*f)) * 180 / math.Pi
	for i := 0; i < len(pts); i += 2 {
		pts[i] = float32(float64(pts[i])*f + hx)
		pts[i+1] = float32(float64(pts[i+1])*f + hy)
	}
	return m, nil
}

// checkMonotonic refuses a radial mapping that turns back before the
// image's farthest corner: past its maximum two rays share a pixel.
func checkMonotonic(c *scene.Command, in Intrinsics, d Distortion) error {
	// The farthest corner's distorted radius (half a pixel beyond the center of the corner pixel).
	rdMax := math.Hypot((in.Cx+0.5)/in.Fx, (in.Cy+0.5)/in.Fy)
	f, df := d.radial, d.dRadial
	limit := math.Inf(1)
	if d.Model == Equidistant {
		f, df, limit = d.thetaD, d.dThetaD, math.Pi/2
	}
	// Walk outward in small steps until the mapping passes the corner's
	// radius; a non-positive derivative first means it folds.
	const step = 1e-3
	for r := 0.0; r < limit; r += step {
		if df(r) <= 0 {
			angle := math.Atan(r) // plumb_bob's r is tan(theta), equidistant's theta
			if d.Model == Equidistant {
				angle = r
			}
			return c.Errorf(culprit(d), "%s lens D=%v: the mapping is not monotonic over the image: it turns back %.1f degrees off the axis, before the image's corner", d.ModelName(), d.D(), angle*180/math.Pi)
		}
		if f(r) > rdMax {
			return nil
		}
		if d.Model != Equidistant && r > 1e3 {
			break
		}
	}
	if d.Model == Equidistant {
		return c.Errorf("fov", "%s lens D=%v: the image's corner is %.3f rad from the axis in the distorted image, beyond what rays up to 90 degrees reach: a pinhole render cannot cover it; reduce fov", d.ModelName(), d.D(), rdMax)
	}
	return nil
}

// culprit names the attribute to blame for a folding or out-of-field
// lens: the most negative radial coefficient (a negative term is what
// turns the mapping back), else the larger tangential one, else fov.
func culprit(d Distortion) string {
	ks := []struct {
		name string
		v    float64
	}{{"k1", d.K1}, {"k2", d.K2}, {"k3", d.K3}, {"k4", d.K4}}
	best, bestV := "", 0.0
	for _, k := range ks {
		if k.v < 0 && -k.v > bestV {
			best, bestV = k.name, -k.v
		}
	}
	if best != "" {
		return best
	}
	if d.Model != Equidistant && (d.P1 != 0 || d.P2 != 0) {
		if math.Abs(d.P1) >= math.Abs(d.P2) {
			return "p1"
		}
		return "p2"
	}
	return "fov"
}

// supersample is the wide render's samples per pixel along each axis,
// averaged (a box filter) before resampling: a single sample per pixel
// leaves edges aliased, which moved checkerboard corners found by OpenCV
// by 0.2-0.3 px (rms) and its calibrated principal point by up to 1.7 px.
const supersample = 2 // downsample is written for 2

// view returns the wide undistorted view for the camera's view v, at
// supersample times the resolution.
func (m *undistortMap) view(v View) View {
	v.Width, v.Height, v.HFOV = supersample*m.w, supersample*m.h, m.hfov
	return v
}

// downsample box-filters the supersampled render to the wide render's
// size: pixel (i, j) averages samples (s i + a, s j + b), whose centers
// average to its own center in the centered convention.
func (m *undistortMap) downsample(big *image.RGBA) (*image.RGBA, error) {
	if big.Rect.Dx() != supersample*m.w || big.Rect.Dy() != supersample*m.h {
		return nil, fmt.Errorf("sensors: undistorted render is %v, want %dx%d", big.Rect.Size(), supersample*m.w, supersample*m.h)
	}
	out := image.NewRGBA(image.Rect(0, 0, m.w, m.h))
	const n = supersample * supersample
	inRows(m.h, func(j0, j1 int) {
		for j := j0; j < j1; j++ {
			dst := out.Pix[j*out.Stride : j*out.Stride+4*m.w]
			r0 := big.Pix[supersample*j*big.Stride:]
			r1 := big.Pix[(supersample*j+1)*big.Stride:]
			for i := 0; i < m.w; i++ {
				p := 8 * i
				q := 4 * i
				a, b := r0[p:p+8:p+8], r1[p:p+8:p+8]
				dst[q] = uint8((int(a[0]) + int(a[4]) + int(b[0]) + int(b[4]) + n/2) / n)
				dst[q+1] = uint8((int(a[1]) + int(a[5]) + int(b[1]) + int(b[5]) + n/2) / n)
				dst[q+2] = uint8((int(a[2]) + int(a[6]) + int(b[2]) + int(b[6]) + n/2) / n)
				dst[q+3] = 255
			}
		}
	})
	return out, nil
}

// inRows runs fn over [0, n) split into one band of rows per core: the
// resampling loops are per-pixel work as large as the render's readback.
func inRows(n int, fn func(lo, hi int)) {
	workers := max(1, min(runtime.GOMAXPROCS(0), n/16))
	var wg sync.WaitGroup
	for k := 0; k < workers; k++ {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(n*k/workers, n*(k+1)/workers)
	}
	wg.Wait()
}

// resample makes the distorted image from the (supersampled) wide render,
// bilinearly.
func (m *undistortMap) resample(big *image.RGBA) (*image.RGBA, error) {
	wide, err := m.downsample(big)
	if err != nil {
		return nil, err
	}
	out := image.NewRGBA(image.Rect(0, 0, m.outW, m.outH))
	stride := wide.Stride
	inRows(m.outH, func(v0, v1 int) {
		for i := v0 * m.outW; i < v1*m.outW; i++ {
			su, sv := m.src[2*i], m.src[2*i+1]
			u0, v0 := int(su), int(sv) // the map keeps them >= 1 and < size-2
			fu, fv := su-float32(u0), sv-float32(v0)
			p := v0*stride + 4*u0
			a, b := wide.Pix[p:p+8:p+8], wide.Pix[p+stride:p+stride+8:p+stride+8]
			o := out.Pix[4*i : 4*i+4 : 4*i+4]
			for ch := 0; ch < 3; ch++ {
				top := float32(a[ch]) + (float32(a[4+ch])-float32(a[ch]))*fu
				bot := float32(b[ch]) + (float32(b[4+ch])-float32(b[ch]))*fu
				o[ch] = uint8(top + (bot-top)*fv + 0.5)
			}
			o[3] = 255
		}
	})
	return out, nil
}

// wideIntrinsics are the wide render's: the camera's focal length, the
// principal point at its center pixel.
func (m *undistortMap) wideIntrinsics() Intrinsics {
	return Intrinsics{Width: m.w, Height: m.h, Fx: m.f, Fy: m.f, Cx: float64(m.w-1) / 2, Cy: float64(m.h-1) / 2}
}

// ray returns output pixel i's undistorted normalized ray (x right, y
// down, over z): exact up to float32 (1e-7 relative).
func (m *undistortMap) ray(i int) (x, y float64) {
	in := m.wideIntrinsics()
	return (float64(m.src[2*i]) - in.Cx) / m.f, (float64(m.src[2*i+1]) - in.Cy) / m.f
}

// nearest returns the index, in the wide render, of the pixel nearest to
// output pixel i's ray: for values that must not be mixed (ids).
func (m *undistortMap) nearest(i int) int {
	u := int(m.src[2*i] + 0.5) // the map keeps them >= 1 and < size-2
	v := int(m.src[2*i+1] + 0.5)
	return v*m.w + u
}

// resampleDepth resamples depths along the axis (wide render, m.w x m.h)
// to the distorted image, valid values only and never mixing surfaces:
// where the four wide pixels around a ray are finite, positive, within 5 %
// of each other and on one plane (1/depth, affine in the image for a
// plane, has a second difference within 1e-4 of its size), 1/depth is
// interpolated bilinearly, which is exact on a plane; elsewhere (edges,
// misses, too-close surfaces marked -Inf) the nearest wide pixel's value is
// taken as it is.
func (m *undistortMap) resampleDepth(wide, out []float32) {
	inRows(m.outH, func(v0, v1 int) {
		for i := v0 * m.outW; i < v1*m.outW; i++ {
			su, sv := m.src[2*i], m.src[2*i+1]
			u0, r0 := int(su), int(sv)
			p := r0*m.w + u0
			a, b, c, d := float64(wide[p]), float64(wide[p+1]), float64(wide[p+m.w]), float64(wide[p+m.w+1])
			lo := math.Min(math.Min(a, b), math.Min(c, d))
			hi := math.Max(math.Max(a, b), math.Max(c, d))
			if lo > 0 && !math.IsInf(hi, 0) && hi <= 1.05*lo {
				ia, ib, ic, id := 1/a, 1/b, 1/c, 1/d
				if math.Abs(ia-ib-ic+id) <= 1e-4/lo {
					fu, fv := float64(su)-float64(u0), float64(sv)-float64(r0)
					top := ia + (ib-ia)*fu
					bot := ic + (id-ic)*fu
					out[i] = float32(1 / (top + (bot-top)*fv))
					continue
				}
			}
			out[i] = wide[m.nearest(i)]
		}
	})
}
