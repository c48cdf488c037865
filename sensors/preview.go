package sensors

import (
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
)

// The depth preview is a picture of a depth frame for people, written
// beside the 16-bit PNG (whose millimeters look black in an image viewer):
// near is bright yellow, far dark purple, through green and blue, on
// viridis, a perceptually uniform colormap that reads in grayscale and to
// color-blind eyes. The scale is the sensor's own, range_min to range_max,
// so frames of a sequence compare. No return within range_max is black,
// too close (within range_min) white: neither color is on the map.

// viridis holds nine evenly spaced samples of the viridis colormap, from 0
// (dark purple) to 1 (yellow); the preview interpolates between them.
var viridis = [...][3]float64{
	{68, 1, 84}, {72, 40, 120}, {62, 73, 137}, {49, 104, 142}, {38, 130, 142},
	{31, 158, 137}, {53, 183, 121}, {110, 206, 88}, {253, 231, 37},
}

// Colors of the depth preview where there is no depth to map.
var (
	PreviewNoReturn = color.RGBA{0, 0, 0, 255}       // +Inf: nothing within range_max
	PreviewTooClose = color.RGBA{255, 255, 255, 255} // -Inf: closer than range_min
)

// previewSteps is the number of colors the preview's scale is drawn
// with: finer than the eye tells apart, and a table lookup a pixel.
const previewSteps = 4096

// previewLUT holds the colormap at previewSteps evenly spaced positions,
// from far (0, dark purple) to near (previewSteps-1, yellow).
var previewLUT = func() (lut [previewSteps]color.RGBA) {
	for k := range lut {
		x := float64(k) / (previewSteps - 1) * float64(len(viridis)-1)
		i := min(int(x), len(viridis)-2)
		f := x - float64(i)
		var c [3]uint8
		for n := range c {
			c[n] = uint8(math.Round(viridis[i][n]*(1-f) + viridis[i+1][n]*f))
		}
		lut[k] = color.RGBA{c[0], c[1], c[2], 255}
	}
	return lut
}()

// PreviewColor is the preview's color for depth z (m) on the scale near
// to far: near (and nearer valid depths) maps to viridis' yellow end, far
// (and farther) to its purple end.
func PreviewColor(z, near, far float64) color.RGBA {
	switch {
	case math.IsInf(z, 1) || math.IsNaN(z):
		return PreviewNoReturn
	case math.IsInf(z, -1):
		return PreviewTooClose
	}
	t := 1.0 // near
	if far > near {
		t = 1 - min(max((z-near)/(far-near), 0), 1)
	}
	return previewLUT[int(math.Round(t*(previewSteps-1)))]
}

// DepthPreview returns the colour-mapped picture of im on the sensor's
// scale (Info.Near to Info.Far: range_min to range_max).
func DepthPreview(im *DepthImage) *image.RGBA {
	w, h := im.Info.Intrinsics.Width, im.Info.Intrinsics.Height
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	near, far := im.Info.Near, im.Info.Far
	for k, z := range im.Depth[:w*h] {
		c := PreviewColor(float64(z), near, far)
		copy(img.Pix[4*k:4*k+4], []uint8{c.R, c.G, c.B, c.A})
	}
	return img
}

// WriteDepthPreview writes DepthPreview(im) to path as a PNG, replacing
// the file atomically like every capture output. It favours speed over
// size: a host writes one every depth frame.
func WriteDepthPreview(path string, im *DepthImage) error {
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	return writeAtomic(path, func(w io.Writer) error { return enc.Encode(w, DepthPreview(im)) })
}
