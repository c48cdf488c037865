package sensors

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"io"
	"math"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

// Frame is one rendered sensor output: what capture writes as files and
// what a transport publishes as a message (Encode), rendered once for both.
type Frame struct {
	Sensor string
	Kind   string // "scan", "psd", "image", "depth", "cloud" or "segmentation"

	scan    *Scan
	psd     *Reading
	image   *image.RGBA
	camInfo FrameInfo
	depth   *DepthImage
	cloud   *Cloud
	seg     *SegmentationImage
	stamp   *Stamp
}

// framer is a sensor that renders Frames; every built-in type is one.
type framer interface {
	renderFrame(r *Renderer, s *scene.Scene, st *Stamp) (*Frame, error)
}

// RenderFrame renders one frame of a sensor at the scene's current state;
// st (may be nil) stamps it.
func RenderFrame(r *Renderer, s *scene.Scene, se *scene.SensorEntry, st *Stamp) (fr *Frame, err error) {
	defer recovered(se.Name, &err)
	if fr, err = renderFrame(r, s, se, st); err != nil {
		return nil, err
	}
	publishReturns(s, se, fr)
	return fr, nil
}

// renderFrame is RenderFrame but for the returns.
func renderFrame(r *Renderer, s *scene.Scene, se *scene.SensorEntry, st *Stamp) (fr *Frame, err error) {
	defer recovered(se.Name, &err)
	f, ok := se.Sensor.(framer)
	if !ok {
		return nil, fmt.Errorf("sensor %q (%s) cannot be rendered into frames", se.Name, se.Type)
	}
	fr, err = f.renderFrame(r, s, st)
	if err != nil {
		return nil, fmt.Errorf("sensor %q: %w", se.Name, err)
	}
	return fr, nil
}

// publishReturns hands a range frame's returns to the overlays that draw
// them. Every frame of every command passes here (RenderFrame,
// RenderFrames), so overlays that draw a sensor's returns (the scan
// element) follow capture, serve, mirror and the viewer alike.
func publishReturns(s *scene.Scene, se *scene.SensorEntry, fr *Frame) {
	if s.WantsReturns(se.Name) {
		s.PublishReturns(fr.returns())
	}
}

// RenderReturns renders once each sensor whose returns an overlay draws, so
// that a render for people shows them current (together, as RenderFrames
// does); it returns the first error.
func RenderReturns(r *Renderer, s *scene.Scene) error {
	var list []*scene.SensorEntry
	for _, name := range s.ReturnsWanted() {
		for _, se := range s.Sensors() {
			if se.Name == name {
				list = append(list, se)
			}
		}
	}
	_, errs := RenderFrames(r, s, list, make([]*Stamp, len(list)))
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// returns gives a range frame's hits in world coordinates (nil for frames
// that are not ranges).
func (f *Frame) returns() *scene.Returns {
	rt := &scene.Returns{Sensor: f.Sensor}
	hit := func(m mgl64.Mat4, dir mgl64.Vec3, rg float64) {
		if math.IsInf(rg, 0) || math.IsNaN(rg) {
			return
		}
		rt.Points = append(rt.Points, m.Mul4x1(dir.Mul(rg).Vec4(1)).Vec3())
	}
	switch f.Kind {
	case "scan":
		m := f.scan.Pose.Matrix()
		rt.Origin = m.Col(3).Vec3()
		rt.Points = make([]mgl64.Vec3, 0, len(f.scan.Ranges))
		for i, rg := range f.scan.Ranges {
			a := f.scan.AngleMin + float64(i)*f.scan.AngleIncrement
			hit(m, mgl64.Vec3{math.Cos(a), math.Sin(a), 0}, rg)
		}
	case "psd":
		m := f.psd.Pose.Matrix()
		rt.Origin = m.Col(3).Vec3()
		hit(m, mgl64.Vec3{1, 0, 0}, f.psd.Range)
	case "cloud":
		m := f.cloud.Pose.Matrix()
		rt.Origin = m.Col(3).Vec3()
		rt.Points = make([]mgl64.Vec3, 0, len(f.cloud.Points))
		for _, p := range f.cloud.Points {
			if !(math.IsNaN(p[0]) || math.IsInf(p[0], 0)) {
				rt.Points = append(rt.Points, m.Mul4x1(p.Vec4(1)).Vec3())
			}
		}
	}
	return rt
}

// WriteFiles writes the frame as capture does: base plus ".scan.json",
// ".psd.json", ".png" and ".json", ".depth.png", ".depth.f32" and ".json",
// or ".pcd".
func (f *Frame) WriteFiles(base string) ([]string, error) {
	switch f.Kind {
	case "scan":
		return []string{base + ".scan.json"}, writeJSONFile(base+".scan.json", f.scan)
	case "psd":
		return []string{base + ".psd.json"}, writeJSONFile(base+".psd.json", f.psd)
	case "image":
		if err := WritePNG(base+".png", f.image); err != nil {
			return nil, err
		}
		return []string{base + ".png", base + ".json"}, writeJSONFile(base+".json", f.camInfo)
	case "depth":
		files := []string{base + ".depth.png", base + ".depth.f32", base + ".json"}
		if err := WritePNG(files[0], f.depth.Millimeters()); err != nil {
			return nil, err
		}
		if err := writeAtomic(files[1], func(w io.Writer) error {
			_, err := w.Write(float32Bytes(f.depth.Depth))
			return err
		}); err != nil {
			return nil, err
		}
		// The colour-mapped preview for people goes before the JSON, which stays last.
		if err := WriteDepthPreview(base+".preview.png", f.depth); err != nil {
			return nil, err
		}
		return []string{files[0], files[1], base + ".preview.png", files[2]}, writeJSONFile(files[2], f.depth.Info)
	case "cloud":
		return []string{base + ".pcd"}, f.cloud.WritePCD(base + ".pcd")
	case "segmentation":
		return f.seg.WriteFiles(base)
	}
	return nil, fmt.Errorf("frame of unknown kind %q", f.Kind)
}

func float32Bytes(v []float32) []byte {
	raw := make([]byte, 4*len(v))
	for i, z := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(z))
	}
	return raw
}

// cloudInfo describes a cloud's binary payload.
type cloudInfo struct {
	Sensor string   `json:"sensor"`
	Stamp  *Stamp   `json:"stamp,omitempty"`
	Width  int      `json:"width"`
	Height int      `json:"height"`
	Pose   jsonPose `json:"pose"`
}

// Encode returns the frame as a message: info is JSON (the whole reading
// for scans and PSD, which have no data; for cameras and depth cameras the
// FrameInfo their NAME.json holds: calibration as sensor_msgs/CameraInfo,
// body and optical poses, stamp; size, pose and stamp for clouds) and data the binary payload, little-endian, rows from the
// top: RGB 8-bit for images, float32 meters for depth (+Inf nothing in
// range, -Inf too close), float32 x y z per point for clouds (NaN no
// return); for segmentation see SegmentationImage.Encode.
func (f *Frame) Encode() (info, data []byte, err error) {
	switch f.Kind {
	case "scan":
		info, err = json.Marshal(f.scan)
	case "psd":
		info, err = json.Marshal(f.psd)
	case "image":
		info, err = json.Marshal(f.camInfo)
		px := f.image.Pix
		data = make([]byte, 0, len(px)/4*3)
		for i := 0; i < len(px); i += 4 {
			data = append(data, px[i], px[i+1], px[i+2])
		}
	case "depth":
		info, err = json.Marshal(f.depth.Info)
		data = float32Bytes(f.depth.Depth)
	case "cloud":
		info, err = json.Marshal(cloudInfo{Sensor: f.Sensor, Stamp: f.stamp, Width: f.cloud.Width, Height: f.cloud.Height, Pose: finitePose(f.cloud.Pose)})
		data = make([]byte, 12*len(f.cloud.Points))
		for i, p := range f.cloud.Points {
			for k := 0; k < 3; k++ {
				binary.LittleEndian.PutUint32(data[12*i+4*k:], math.Float32bits(float32(p[k])))
			}
		}
	case "segmentation":
		info, data, err = f.seg.Encode()
	default:
		err = fmt.Errorf("frame of unknown kind %q", f.Kind)
	}
	return info, data, err
}

func (l *Laser) renderFrame(r *Renderer, s *scene.Scene, st *Stamp) (*Frame, error) {
	sc, err := l.Scan(r, s)
	if err != nil {
		return nil, err
	}
	sc.Stamp = st
	return &Frame{Sensor: l.name, Kind: "scan", scan: sc, stamp: st}, nil
}

func (p *PSD) renderFrame(r *Renderer, s *scene.Scene, st *Stamp) (*Frame, error) {
	rd, err := p.Measure(r, s)
	if err != nil {
		return nil, err
	}
	rd.Stamp = st
	return &Frame{Sensor: p.name, Kind: "psd", psd: rd, stamp: st}, nil
}

func (c *Camera) renderFrame(r *Renderer, s *scene.Scene, st *Stamp) (*Frame, error) {
	img, err := c.Image(r, s)
	if err != nil {
		return nil, err
	}
	v := c.View()
	info := FrameInfo{Sensor: c.name, Stamp: st, Intrinsics: c.Intrinsics(), Pose: scene.PoseFromMatrix(v.Pose)}
	return &Frame{Sensor: c.name, Kind: "image", image: img, camInfo: info, stamp: st}, nil
}

func (sg *Segmentation) renderFrame(r *Renderer, s *scene.Scene, st *Stamp) (*Frame, error) {
	im, err := sg.Segment(r, s)
	if err != nil {
		return nil, err
	}
	im.Info.Stamp, im.Labels.Stamp = st, st
	return &Frame{Sensor: sg.name, Kind: "segmentation", seg: im, stamp: st}, nil
}

func (d *DepthCamera) renderFrame(r *Renderer, s *scene.Scene, st *Stamp) (*Frame, error) {
	img, err := d.Depth(r, s)
	if err != nil {
		return nil, err
	}
	img.Info.Stamp = st
	return &Frame{Sensor: img.Info.Sensor, Kind: "depth", depth: img, stamp: st}, nil
}

func (l *Laser3D) renderFrame(r *Renderer, s *scene.Scene, st *Stamp) (*Frame, error) {
	cl, err := l.Scan(r, s)
	if err != nil {
		return nil, err
	}
	return &Frame{Sensor: l.name, Kind: "cloud", cloud: cl, stamp: st}, nil
}
