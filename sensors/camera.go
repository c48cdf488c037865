package sensors

import (
	"image"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/simvis/simvis/scene"
)

func init() { scene.RegisterSensor("camera", newCamera) }

// Camera is an RGB pinhole camera looking along its frame's +x with +z up.
//
// XML: width, height (pixels, default 640x480), fov (horizontal, degrees,
// default 60) or vfov (vertical) instead, near, far (meters, default 0.05
// and 100), background ("r g b" in 0..1, default a light gray),
// noise_stddev (gaussian pixel noise in 0..1 intensity units, default 0)
// and seed (1).
type Camera struct {
	name  string
	frame *scene.Node
	view  View
	noise float64
	rng   *rand.Rand
	seed  int64
}

// readPinhole reads width, height and fov or vfov (square pixels).
func readPinhole(c *scene.Command, v *View) error {
	var err error
	if v.Width, err = c.Int("width", 640, 1, 16384); err != nil {
		return err
	}
	if v.Height, err = c.Int("height", 480, 1, 16384); err != nil {
		return err
	}
	if c.Has("vfov") {
		if c.Has("fov") {
			return c.Errorf("vfov", "give fov (horizontal) or vfov (vertical), not both")
		}
		vfov, err := c.Float("vfov", 0)
		if err != nil {
			return err
		}
		if vfov <= 0 || vfov >= 180 {
			return c.Errorf("vfov", "%g is not in (0, 180) degrees", vfov)
		}
		t := math.Tan(vfov*math.Pi/360) * float64(v.Width) / float64(v.Height)
		v.HFOV = 2 * math.Atan(t) * 180 / math.Pi
		return nil
	}
	if v.HFOV, err = c.Float("fov", 60); err != nil {
		return err
	}
	if v.HFOV <= 0 || v.HFOV >= 180 {
		return c.Errorf("fov", "%g is not in (0, 180) degrees", v.HFOV)
	}
	return nil
}

func newCamera(ctx *scene.Context) (scene.Sensor, error) {
	c := ctx.Command
	cam := &Camera{name: ctx.Name, frame: ctx.Frame}
	v := &cam.view
	if err := readPinhole(c, v); err != nil {
		return nil, err
	}
	var err error
	if v.Near, err = c.Float("near", 0.05); err != nil {
		return nil, err
	}
	if v.Near <= 0 {
		return nil, c.Errorf("near", "%g must be > 0", v.Near)
	}
	if v.Far, err = c.Float("far", 100); err != nil {
		return nil, err
	}
	if v.Far <= v.Near {
		return nil, c.Errorf("far", "%g must be greater than near (%g)", v.Far, v.Near)
	}
	bg := DefaultBackground
	if v.Background, err = c.RGB("background", [3]float64{float64(bg[0]), float64(bg[1]), float64(bg[2])}); err != nil {
		return nil, err
	}
	if cam.noise, err = c.FloatIn("noise_stddev", 0, 0, 1); err != nil {
		return nil, err
	}
	if cam.seed, cam.rng, err = c.Rand("seed", 0xca3e7a); err != nil {
		return nil, err
	}
	return cam, nil
}

// Intrinsics are the pinhole parameters of an image in pixels.
type Intrinsics struct {
	Width  int     `json:"width"`
	Height int     `json:"height"`
	Fx     float64 `json:"fx"`
	Fy     float64 `json:"fy"`
	Cx     float64 `json:"cx"`
	Cy     float64 `json:"cy"`
}

// intrinsics of a view: square pixels, principal point at the center.
func (v View) intrinsics() Intrinsics {
	fx := float64(v.Width) / (2 * math.Tan(v.HFOV*math.Pi/360))
	fy := float64(v.Height) / (2 * math.Tan(v.VFOV()*math.Pi/360))
	return Intrinsics{Width: v.Width, Height: v.Height, Fx: fx, Fy: fy, Cx: float64(v.Width) / 2, Cy: float64(v.Height) / 2}
}

// Intrinsics returns the camera's pinhole parameters (square pixels,
// principal point at the image center).
func (c *Camera) Intrinsics() Intrinsics { return c.view.intrinsics() }

// View returns the camera's view at the scene graph's current state; call
// Scene.Update first if parameters changed since (Image does).
func (c *Camera) View() View {
	v := c.view
	v.Pose = c.frame.World()
	return v
}

// Describe implements scene.Sensor.
func (c *Camera) Describe() map[string]any {
	v := c.view
	m := map[string]any{"width": v.Width, "height": v.Height, "fov": v.HFOV, "near": v.Near, "far": v.Far}
	if c.noise > 0 {
		m["noise_stddev"], m["seed"] = c.noise, c.seed
	}
	return m
}

// Image renders the camera's current view, with pixel noise if set.
func (c *Camera) Image(r *Renderer, s *scene.Scene) (*image.RGBA, error) {
	// Apply pending parameter changes first: they may move the camera itself.
	if err := s.Update(); err != nil {
		return nil, err
	}
	v := c.View()
	if err := checkWorld(c.name, v.Pose); err != nil {
		return nil, err
	}
	img, err := r.RenderRGBA(s, v)
	if err != nil || c.noise == 0 {
		return img, err
	}
	sigma := c.noise * 255
	for i, p := range img.Pix {
		if i%4 == 3 {
			continue
		}
		img.Pix[i] = uint8(math.Max(0, math.Min(255, math.Round(float64(p)+sigma*c.rng.NormFloat64()))))
	}
	return img, nil
}

// FrameInfo is what a camera or depth camera reports with every frame:
// its intrinsics and its world pose.
type FrameInfo struct {
	Sensor     string     `json:"sensor"`
	Stamp      *Stamp     `json:"stamp,omitempty"`
	Intrinsics Intrinsics `json:"intrinsics"`
	Pose       scene.Pose `json:"pose"`
	Near       float64    `json:"near,omitempty"`
	Far        float64    `json:"far,omitempty"`
}

// Capture renders the image and writes BASE.png and BASE.json
// (intrinsics and pose).
func (c *Camera) Capture(r *Renderer, s *scene.Scene, out Output) ([]string, error) {
	f, err := c.renderFrame(r, s, out.Stamp)
	if err != nil {
		return nil, err
	}
	return f.WriteFiles(out.Base)
}

// fileName makes a sensor name usable as a file name: embedded sensors are
// named PART/NAME.
func fileName(sensor string) string { return strings.ReplaceAll(sensor, "/", "__") }

// DefaultBackground is the color where a view sees no geometry: a light
// gray-blue sky.
var DefaultBackground = [3]float32{0.8, 0.82, 0.85}

// WritePNG writes an image as a PNG file.
func WritePNG(path string, img image.Image) error {
	return writeAtomic(path, func(w io.Writer) error { return png.Encode(w, img) })
}
