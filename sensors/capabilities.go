package sensors

import (
	"math"

	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// What the built-in sensors declare about themselves for transports,
// recordings and Export (scene's capability interfaces), so that those
// never list sensor type names.
var (
	_ scene.FrameKinder    = (*Camera)(nil)
	_ scene.CameraExporter = (*Camera)(nil)
	_ scene.CameraExporter = (*DepthCamera)(nil)
	_ scene.CameraExporter = (*Segmentation)(nil)
	_ scene.Ranger         = (*Laser)(nil)
	_ scene.Ranger         = (*PSD)(nil)
	_ scene.Ranger         = (*Laser3D)(nil)
	_ scene.Sighted        = (*Camera)(nil)
	_ scene.Sighted        = (*DepthCamera)(nil)
	_ scene.Sighted        = (*Segmentation)(nil)
	_ scene.Sighted        = (*Laser)(nil)
	_ scene.Sighted        = (*PSD)(nil)
	_ scene.Sighted        = (*Laser3D)(nil)
)

// FieldOfView implements scene.Sighted: the pinhole frustum the camera
// renders (a lens model's picture is resampled from it).
func (c *Camera) FieldOfView() scene.FieldOfView { return frustum(c.view) }

// FieldOfView implements scene.Sighted.
func (d *DepthCamera) FieldOfView() scene.FieldOfView { return frustum(d.view) }

// FieldOfView implements scene.Sighted.
func (sg *Segmentation) FieldOfView() scene.FieldOfView { return frustum(sg.view) }

func frustum(v View) scene.FieldOfView { return scene.FieldOfView{HFOV: v.HFOV, VFOV: v.VFOV()} }

// FieldOfView implements scene.Sighted: the scan's fan, first beam to
// last.
func (l *Laser) FieldOfView() scene.FieldOfView {
	return scene.FieldOfView{AngleMin: l.angleMin * 180 / math.Pi,
		AngleMax: (l.angleMin + float64(len(l.dirs)-1)*l.increment) * 180 / math.Pi}
}

// FieldOfView implements scene.Sighted: one beam along +x.
func (p *PSD) FieldOfView() scene.FieldOfView { return scene.FieldOfView{} }

// FieldOfView implements scene.Sighted: each layer's sweep, first column
// to last (read back from the beams, which the constructor made).
func (l *Laser3D) FieldOfView() scene.FieldOfView {
	f := scene.FieldOfView{}
	for _, el := range l.layers {
		f.Elevations = append(f.Elevations, el*180/math.Pi)
	}
	if l.columns > 0 {
		first, last := l.dirs[0], l.dirs[l.columns-1]
		f.AngleMin = math.Atan2(first[1], first[0]) * 180 / math.Pi
		f.AngleMax = math.Atan2(last[1], last[0]) * 180 / math.Pi
		if f.AngleMax < f.AngleMin {
			f.AngleMax += 360 // a sweep across ±180°
		}
	}
	return f
}

// FrameKind implements scene.FrameKinder: a camera renders images.
func (c *Camera) FrameKind() string { return KindImage }

// FrameKind implements scene.FrameKinder.
func (d *DepthCamera) FrameKind() string { return KindDepth }

// FrameKind implements scene.FrameKinder.
func (sg *Segmentation) FrameKind() string { return KindSegmentation }

// FrameKind implements scene.FrameKinder: a laser renders scans.
func (l *Laser) FrameKind() string { return KindScan }

// FrameKind implements scene.FrameKinder: a PSD renders readings.
func (p *PSD) FrameKind() string { return KindPSD }

// FrameKind implements scene.FrameKinder: a 3D laser renders clouds.
func (l *Laser3D) FrameKind() string { return KindCloud }

// HasReturns implements scene.Ranger: a scan element may draw its returns.
func (l *Laser) HasReturns() bool { return true }

// HasReturns implements scene.Ranger.
func (p *PSD) HasReturns() bool { return true }

// HasReturns implements scene.Ranger.
func (l *Laser3D) HasReturns() bool { return true }

// ExportCamera implements scene.CameraExporter.
func (c *Camera) ExportCamera() *models.Camera { return copyCamera(c.gltf) }

// ExportCamera implements scene.CameraExporter.
func (d *DepthCamera) ExportCamera() *models.Camera { return copyCamera(d.gltf) }

// ExportCamera implements scene.CameraExporter.
func (sg *Segmentation) ExportCamera() *models.Camera { return copyCamera(sg.gltf) }

// copyCamera keeps a sensor's glTF camera its own whatever the model it
// goes into does with it.
func copyCamera(c *models.Camera) *models.Camera {
	if c == nil {
		return nil
	}
	cp := *c
	return &cp
}

// gltfCamera returns the glTF camera of a camera-like sensor's command,
// read from its attributes as its constructor reads them: width and
// height (640x480), vfov or fov (60 degrees), and the near and far planes
// from nearAttr and farAttr with their defaults. The field of view is
// taken from the attribute given, not from the sensor's derived
// horizontal one, so that a vfov is written as given. Nil where the
// attributes give no camera.
func gltfCamera(c *scene.Command, nearAttr, farAttr string, near, far float64) *models.Camera {
	w, errW := c.Int("width", 640, 1, 16384)
	h, errH := c.Int("height", 480, 1, 16384)
	zn, errN := c.Float(nearAttr, near)
	zf, errF := c.Float(farAttr, far)
	if errW != nil || errH != nil || errN != nil || errF != nil || !(zn > 0 && zf > zn) {
		return nil
	}
	aspect := float64(w) / float64(h)
	var yfov float64
	if c.Has("vfov") {
		v, err := c.Float("vfov", 0)
		if err != nil {
			return nil
		}
		yfov = v * math.Pi / 180
	} else {
		hfov, err := c.Float("fov", 60)
		if err != nil {
			return nil
		}
		yfov = 2 * math.Atan(math.Tan(hfov*math.Pi/360)/aspect)
	}
	if !(yfov > 0 && yfov < math.Pi) {
		return nil
	}
	return &models.Camera{YFOV: yfov, AspectRatio: aspect, ZNear: zn, ZFar: zf}
}
