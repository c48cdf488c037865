package sensors

import (
	"image"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

func init() { scene.RegisterSensor("camera", newCamera) }

// Camera is an RGB pinhole camera looking along its frame's +x with +z up;
// its calibration (Intrinsics, FrameInfo) follows OpenCV and ROS.
//
// XML: width, height (pixels, default 640x480), fov (horizontal, degrees,
// default 60) or vfov (vertical) instead, near, far (meters, default 0.05
// and 100), background ("r g b" in 0..1, default a light gray),
// noise_stddev (gaussian pixel noise in 0..1 intensity units, default 0)
// and seed (1); exposure (relative, default 1), gain (dB, default 0) and
// gamma (default 1) as Response defines them; shadows ("false" draws no
// shadows; see docs/cameras.md); motion_blur (sub-frames per frame, 0 off,
// at most 32) and shutter (the fraction of the interval since the previous
// frame the shutter is open, default 0.5; see motionblur.go). Lens distortion as OpenCV defines it (see distortion.go):
// distortion_model "plumb_bob" (the default) with k1 k2 p1 p2 k3, or
// "equidistant" (cv::fisheye) with k1 k2 k3 k4, all default 0. fov sets K
// as for a pinhole (fx = W / (2 tan(fov/2))) whatever the model: K and D
// are what a calibration of the camera finds, and the lens makes the field
// the image sees wider (barrel, k1 < 0) or narrower than fov.
type Camera struct {
	name  string
	frame *scene.Node
	view  View
	noise float64
	rng   *rand.Rand
	seed  int64
	dist  Distortion
	umap  *undistortMap // nil for an ideal pinhole
	resp  Response
	blur  motionBlur
	gltf  *models.Camera // what Export writes (ExportCamera)
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

// readClipping reads a camera-like sensor's near and far planes (0.05 m
// and 100 m by default).
func readClipping(c *scene.Command, v *View) error {
	var err error
	if v.Near, err = c.Float("near", 0.05); err != nil {
		return err
	}
	if v.Near <= 0 {
		return c.Errorf("near", "%g must be > 0", v.Near)
	}
	if v.Far, err = c.Float("far", 100); err != nil {
		return err
	}
	if v.Far <= v.Near {
		return c.Errorf("far", "%g must be greater than near (%g)", v.Far, v.Near)
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
	if err := readClipping(c, v); err != nil {
		return nil, err
	}
	var err error
	bg := DefaultBackground
	if v.Background, err = c.RGB("background", [3]float64{float64(bg[0]), float64(bg[1]), float64(bg[2])}); err != nil {
		return nil, err
	}
	if v.Shadows, err = c.Bool("shadows", true); err != nil {
		return nil, err
	}
	if cam.resp, err = readResponse(c); err != nil {
		return nil, err
	}
	if cam.blur, err = readMotionBlur(c); err != nil {
		return nil, err
	}
	if cam.noise, err = c.FloatIn("noise_stddev", 0, 0, 1); err != nil {
		return nil, err
	}
	if cam.seed, cam.rng, err = c.Rand("seed", 0xca3e7a); err != nil {
		return nil, err
	}
	if cam.dist, err = readDistortion(c); err != nil {
		return nil, err
	}
	if !cam.dist.IsIdentity() {
		if cam.umap, err = newUndistortMap(c, v.intrinsics(), cam.dist); err != nil {
			return nil, err
		}
	}
	cam.gltf = gltfCamera(c, "near", "far", 0.05, 100)
	return cam, nil
}

// Intrinsics are the pinhole parameters of an image in pixels, in the
// convention of OpenCV, Open3D and ROS sensor_msgs/CameraInfo: pixel
// centers at integer coordinates, (0, 0) the center of the top-left pixel,
// u to the right and v down. A point (X, Y, Z) of the optical frame (z
// forward, x right, y down) appears at u = Fx X/Z + Cx, v = Fy Y/Z + Cy;
// pixel (u, v) with depth Z is the point ((u-Cx) Z/Fx, (v-Cy) Z/Fy, Z).
type Intrinsics struct {
	Width  int     `json:"width"`
	Height int     `json:"height"`
	Fx     float64 `json:"fx"`
	Fy     float64 `json:"fy"`
	Cx     float64 `json:"cx"`
	Cy     float64 `json:"cy"`
	// Distortion is the lens (zero: an ideal pinhole); JSON carries it as
	// CameraInfo's distortion_model and D.
	Distortion Distortion `json:"-"`
}

// intrinsics of a view: square pixels, the principal point at the image's
// center, which is (W-1)/2, (H-1)/2 with pixel centers at integers (W/2,
// H/2 would be the pixel-corner convention: half a pixel off for every tool
// that reads K, 3-6 mm at 3-5 m).
func (v View) intrinsics() Intrinsics {
	fx := float64(v.Width) / (2 * math.Tan(v.HFOV*math.Pi/360))
	fy := float64(v.Height) / (2 * math.Tan(v.VFOV()*math.Pi/360))
	return Intrinsics{Width: v.Width, Height: v.Height, Fx: fx, Fy: fy,
		Cx: float64(v.Width-1) / 2, Cy: float64(v.Height-1) / 2}
}

// pixelRays returns, per column, the pixel center ray's y over x in the
// body frame (x forward, y left) and, per row, its z over x: pixel i's
// center is at u = i, (i - Cx)/Fx right of the optical axis. halfX and
// halfY are the tangents of the view covering whole pixels, W/2 pixel
// widths and H/2 heights either side, as a GPU view of the image.
func (in Intrinsics) pixelRays() (yTan, zTan []float64, halfX, halfY float64) {
	yTan = make([]float64, in.Width)
	for i := range yTan {
		yTan[i] = (in.Cx - float64(i)) / in.Fx
	}
	zTan = make([]float64, in.Height)
	for j := range zTan {
		zTan[j] = (in.Cy - float64(j)) / in.Fy
	}
	return yTan, zTan, float64(in.Width) / 2 / in.Fx, float64(in.Height) / 2 / in.Fy
}

// K returns the camera matrix [Fx 0 Cx; 0 Fy Cy; 0 0 1], row-major.
func (in Intrinsics) K() [9]float64 {
	return [9]float64{in.Fx, 0, in.Cx, 0, in.Fy, in.Cy, 0, 0, 1}
}

// P returns the projection matrix [Fx 0 Cx 0; 0 Fy Cy 0; 0 0 1 0],
// row-major: every simvis camera is its own monocular, undistorted camera,
// so P is K with a zero fourth column (no stereo Tx: a pair's baseline
// follows from the two cameras' poses).
func (in Intrinsics) P() [12]float64 {
	return [12]float64{in.Fx, 0, in.Cx, 0, 0, in.Fy, in.Cy, 0, 0, 0, 1, 0}
}

// CameraInfo is an image's calibration laid out as ROS
// sensor_msgs/CameraInfo: size, distortion model and coefficients D, camera
// matrix K, rectification R and projection P (matrices row-major).
type CameraInfo struct {
	Width           int
	Height          int
	DistortionModel string
	D               []float64
	K               [9]float64
	R               [9]float64
	P               [12]float64
}

// PlumbBob is OpenCV's radial and tangential distortion model with D = k1
// k2 p1 p2 k3, all zero for an undistorted pinhole: what cameras without a
// lens model and depth cameras publish.
const PlumbBob = "plumb_bob"

// CameraInfo returns the calibration with these intrinsics: the lens's
// distortion_model and D (plumb_bob with five zero coefficients for an
// ideal pinhole, what ROS camera drivers publish for one and what OpenCV's
// functions take), R the identity.
func (in Intrinsics) CameraInfo() CameraInfo {
	return CameraInfo{Width: in.Width, Height: in.Height, DistortionModel: in.Distortion.ModelName(),
		D: in.Distortion.D(), K: in.K(), R: [9]float64{1, 0, 0, 0, 1, 0, 0, 0, 1}, P: in.P()}
}

// Intrinsics returns the camera's pinhole parameters (square pixels,
// principal point at the image center; see Intrinsics for the convention).
func (c *Camera) Intrinsics() Intrinsics {
	in := c.view.intrinsics()
	in.Distortion = c.dist
	return in
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
	m := map[string]any{"width": v.Width, "height": v.Height, "fov": v.HFOV, "near": v.Near, "far": v.Far}
	if c.noise > 0 {
		m["noise_stddev"], m["seed"] = c.noise, c.seed
	}
	if !c.dist.IsIdentity() {
		m["distortion_model"], m["D"] = c.dist.ModelName(), c.dist.D()
	}
	if !c.resp.IsIdentity() {
		m["exposure"], m["gain"], m["gamma"] = c.resp.Exposure, c.resp.GainDB, c.resp.Gamma
	}
	if !c.view.Shadows {
		m["shadows"] = false
	}
	if c.blur.n > 1 {
		m["motion_blur"], m["shutter"] = c.blur.n, c.blur.shutter
	}
	return m
}

// Image renders the camera's current view, through its lens (a wide
// undistorted render resampled) and with pixel noise if set.
func (c *Camera) Image(r *Renderer, s *scene.Scene) (*image.RGBA, error) {
	finish, err := c.startImage(r, s, nil)
	if err != nil {
		return nil, err
	}
	return finish()
}

// startImage draws the camera's view (when q is flushed, where q is not
// nil) and starts reading it back; finish waits for the picture and makes
// the image (lens, response, noise). A batch of frames draws every camera
// before it finishes the first (RenderFrames). finish must be called once.
func (c *Camera) startImage(r *Renderer, s *scene.Scene, q *drawQueue) (finish func() (*image.RGBA, error), err error) {
	// Apply pending parameter changes first: they may move the camera itself.
	if err := s.Update(); err != nil {
		return nil, err
	}
	v := c.View()
	if err := checkWorld(c.name, v.Pose); err != nil {
		return nil, err
	}
	pose := v.Pose
	if c.umap != nil {
		v = c.umap.view(v)
	}
	var picture func() (*image.RGBA, error)
	blurred, err := c.blur.blurred(r, s, v)
	c.blur.remember(s, pose)
	switch {
	case err != nil:
		return nil, err
	case blurred != nil:
		picture = func() (*image.RGBA, error) { return blurImage(c.resp, blurred, v) }
	case c.resp.IsIdentity():
		p, img, err := r.startRGBA(s, v, q)
		if err != nil {
			return nil, err
		}
		picture = func() (*image.RGBA, error) { return img, p.wait() }
	default:
		p, pix, err := r.startRadiance(s, v, q)
		if err != nil {
			return nil, err
		}
		picture = func() (*image.RGBA, error) {
			if err := p.wait(); err != nil {
				return nil, err
			}
			return c.resp.toRGBA(pix, v.Width, v.Height)
		}
	}
	return func() (*image.RGBA, error) {
		img, err := picture()
		if err == nil && c.umap != nil {
			img, err = c.umap.resample(img)
		}
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
	}, nil
}

// FrameInfo is what a camera or depth camera reports with every frame:
// its intrinsics and its world pose. Its JSON adds the calibration as
// sensor_msgs/CameraInfo has it (width, height, distortion_model, D, K, R,
// P; see Intrinsics.CameraInfo) and optical_pose (see OpticalPose).
type FrameInfo struct {
	Sensor     string     `json:"sensor"`
	Stamp      *Stamp     `json:"stamp,omitempty"`
	Intrinsics Intrinsics `json:"intrinsics"`
	Pose       scene.Pose `json:"pose"` // the sensor body frame: x forward, y left, z up
	Near       float64    `json:"near,omitempty"`
	Far        float64    `json:"far,omitempty"`
}

// opticalInBody is the optical frame (REP-103 camera convention: z
// forward, x right, y down) in the sensor body frame (x forward, y left, z
// up); its columns are the optical axes in body coordinates.
var opticalInBody = mgl64.Mat4{
	0, -1, 0, 0, // optical x (right) = body -y
	0, 0, -1, 0, // optical y (down) = body -z
	1, 0, 0, 0, // optical z (forward) = body +x
	0, 0, 0, 1,
}

// OpticalInBody returns the transform from the optical frame (z forward,
// x right, y down) to the sensor body frame (x forward, y left, z up): the
// rotation ROS publishes between a camera link and its optical frame.
func OpticalInBody() mgl64.Mat4 { return opticalInBody }

// OpticalPose returns the world pose of the sensor's optical frame: the
// frame the intrinsics project from, at the body's origin with z forward,
// x right and y down. World = OpticalPose().Matrix() * optical.
func (fi FrameInfo) OpticalPose() scene.Pose {
	return scene.PoseFromMatrix(fi.Pose.Matrix().Mul4(opticalInBody))
}

// Capture renders the image and writes BASE.png and BASE.json (the
// FrameInfo: calibration, body and optical poses).
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
