package sensors

import (
	"fmt"
	"image"
	"math"

	"github.com/simvis/simvis/scene"
)

// Response is a camera's radiometric response: how the linear radiance L
// the shading computes (1 = a white surface facing a light of intensity 1;
// the background color is its own radiance) becomes an 8-bit value, in
// this order:
//
//  1. exposure: L · Exposure (relative exposure, 1 = as rendered; 2 = one
//     stop more light),
//  2. gain: · 10^(GainDB/20) (amplification in decibels),
//  3. saturation: clipped to [0, 1] (the sensor's full well),
//  4. gamma: v^(1/Gamma) (1 = linear output, 2.2 a typical encoding),
//  5. quantization: round(255 v).
//
// Lens resampling (distortion) and pixel noise (noise_stddev) come after,
// on the 8-bit image.
type Response struct {
	Exposure float64 // > 0, default 1
	GainDB   float64 // default 0
	Gamma    float64 // > 0, default 1
}

// DefaultResponse leaves radiance as rendered: v = round(255 clip(L)).
var DefaultResponse = Response{Exposure: 1, Gamma: 1}

// IsIdentity reports whether r maps radiance straight to the 8-bit value.
func (r Response) IsIdentity() bool { return r == DefaultResponse }

// Value maps linear radiance to the 8-bit value (steps 1-5 above).
func (r Response) Value(l float64) uint8 {
	v := l * r.Exposure * math.Pow(10, r.GainDB/20)
	if !(v > 0) { // NaN too
		return 0
	}
	if v >= 1 {
		return 255
	}
	return uint8(math.Round(255 * math.Pow(v, 1/r.Gamma)))
}

// readResponse reads a camera's exposure, gain (dB) and gamma.
func readResponse(c *scene.Command) (Response, error) {
	var r Response
	var err error
	if r.Exposure, err = c.FloatIn("exposure", 1, 1e-6, 1e6); err != nil {
		return r, err
	}
	if r.GainDB, err = c.FloatIn("gain", 0, -60, 60); err != nil {
		return r, err
	}
	if r.Gamma, err = c.FloatIn("gamma", 1, 0.1, 10); err != nil {
		return r, err
	}
	return r, nil
}

// toRGBA applies r to a float RGBA radiance image (RenderRadiance) of
// w x h pixels; alpha becomes opaque.
func (r Response) toRGBA(pix []float32, w, h int) (*image.RGBA, error) {
	if len(pix) != 4*w*h {
		return nil, fmt.Errorf("sensors: radiance image of %d values for %dx%d pixels", len(pix), w, h)
	}
	// A table over the scaled value would need bounds; a direct
	// computation per channel is fast enough next to the render, and the
	// common values repeat, so memoize the last one per channel.
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	scale := r.Exposure * math.Pow(10, r.GainDB/20)
	inv := 1 / r.Gamma
	var last [3]float32
	var lastV [3]uint8
	for c := range last {
		last[c] = -1
	}
	for i := 0; i < w*h; i++ {
		for c := 0; c < 3; c++ {
			l := pix[4*i+c]
			if l != last[c] {
				last[c] = l
				v := float64(l) * scale
				switch {
				case !(v > 0):
					lastV[c] = 0
				case v >= 1:
					lastV[c] = 255
				default:
					lastV[c] = uint8(math.Round(255 * math.Pow(v, inv)))
				}
			}
			img.Pix[4*i+c] = lastV[c]
		}
		img.Pix[4*i+3] = 255
	}
	return img, nil
}
