package sensors

import (
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/simvis/simvis/scene"
)

func init() { scene.RegisterSensor("camera", newCamera) }

// Camera is an RGB pinhole camera looking along its frame's +x with +z up.
//
// XML: width, height (pixels, default 640x480), fov (horizontal, degrees,
// default 60), near, far (meters, default 0.05 and 100), background ("r g b"
// in 0..1, default a light gray).
type Camera struct {
	name  string
	frame *scene.Node
	view  View
}

func newCamera(ctx *scene.Context) (scene.Sensor, error) {
	c := ctx.Command
	cam := &Camera{name: ctx.Name, frame: ctx.Frame}
	var err error
	v := &cam.view
	if v.Width, err = c.Int("width", 640, 1, 16384); err != nil {
		return nil, err
	}
	if v.Height, err = c.Int("height", 480, 1, 16384); err != nil {
		return nil, err
	}
	if v.HFOV, err = c.Float("fov", 60); err != nil {
		return nil, err
	}
	if v.HFOV <= 0 || v.HFOV >= 180 {
		return nil, c.Errorf("fov", "%g is not in (0, 180) degrees", v.HFOV)
	}
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
	v.Background = DefaultBackground
	if bg, ok := c.Attr("background"); ok {
		if v.Background, err = parseColor(bg); err != nil {
			return nil, c.Errorf("background", "%v", err)
		}
	}
	return cam, nil
}

func parseColor(s string) ([3]float32, error) {
	f := strings.Fields(s)
	var col [3]float32
	if len(f) != 3 {
		return col, fmt.Errorf("want 3 numbers \"r g b\" in 0..1, got %d", len(f))
	}
	for i, x := range f {
		v, err := strconv.ParseFloat(x, 32)
		if err != nil || v < 0 || v > 1 || math.IsNaN(v) {
			return col, fmt.Errorf("%q is not a number in 0..1", x)
		}
		col[i] = float32(v)
	}
	return col, nil
}

// Intrinsics are the pinhole parameters of an image in pixels.
type Intrinsics struct {
	Width, Height  int
	Fx, Fy, Cx, Cy float64
}

// Intrinsics returns the camera's pinhole parameters (square pixels,
// principal point at the image center).
func (c *Camera) Intrinsics() Intrinsics {
	v := c.view
	fx := float64(v.Width) / (2 * math.Tan(v.HFOV*math.Pi/360))
	fy := float64(v.Height) / (2 * math.Tan(v.VFOV()*math.Pi/360))
	return Intrinsics{Width: v.Width, Height: v.Height, Fx: fx, Fy: fy, Cx: float64(v.Width) / 2, Cy: float64(v.Height) / 2}
}

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
	return map[string]any{"width": v.Width, "height": v.Height, "fov": v.HFOV, "near": v.Near, "far": v.Far}
}

// Image renders the camera's current view.
func (c *Camera) Image(r *Renderer, s *scene.Scene) (*image.RGBA, error) {
	// Apply pending parameter changes first: they may move the camera itself.
	if err := s.Update(); err != nil {
		return nil, err
	}
	return r.RenderRGBA(s, c.View())
}

// Capture renders the image and writes it to dir/NAME.png.
func (c *Camera) Capture(r *Renderer, s *scene.Scene, dir string) ([]string, error) {
	img, err := c.Image(r, s)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, fileName(c.name)+".png")
	return []string{path}, WritePNG(path, img)
}

// fileName makes a sensor name usable as a file name: embedded sensors are
// named PART/NAME.
func fileName(sensor string) string { return strings.ReplaceAll(sensor, "/", "__") }

// DefaultBackground is the color where a view sees no geometry: a light
// gray-blue sky.
var DefaultBackground = [3]float32{0.8, 0.82, 0.85}

// WritePNG writes an image as a PNG file.
func WritePNG(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
