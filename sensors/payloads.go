package sensors

import (
	"encoding/binary"
	"encoding/json"
	"image"
	"io"
	"math"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

// Each payload type encodes and writes itself (Payload), and the range
// payloads give their returns: what Frame.Encode, Frame.WriteFiles and
// the scan element's returns used to switch on the frame's kind for.

// CameraImage is a camera frame's payload: its pixels and the FrameInfo
// its NAME.json holds.
type CameraImage struct {
	Image *image.RGBA
	Info  FrameInfo
}

var (
	_ Payload = (*Scan)(nil)
	_ Payload = (*Reading)(nil)
	_ Payload = (*CameraImage)(nil)
	_ Payload = (*DepthImage)(nil)
	_ Payload = (*Cloud)(nil)
	_ Payload = (*SegmentationImage)(nil)
)

// FrameKind implements Payload.
func (s *Scan) FrameKind() string { return KindScan }

// Encode implements Payload: info is the scan's JSON, no data.
func (s *Scan) Encode() (info, data []byte, err error) {
	info, err = json.Marshal(s)
	return info, nil, err
}

// WriteFiles implements Payload: base.scan.json.
func (s *Scan) WriteFiles(base string) ([]string, error) {
	return []string{base + ".scan.json"}, writeJSONFile(base+".scan.json", s)
}

func (s *Scan) addReturns(rt *scene.Returns) {
	m := s.Pose.Matrix()
	rt.Origin = m.Col(3).Vec3()
	rt.Points = make([]mgl64.Vec3, 0, len(s.Ranges))
	for i, rg := range s.Ranges {
		a := s.AngleMin + float64(i)*s.AngleIncrement
		addHit(rt, m, mgl64.Vec3{math.Cos(a), math.Sin(a), 0}, rg)
	}
}

// addHit adds the hit rg meters along dir (sensor frame) of a sensor at m,
// unless rg is no hit.
func addHit(rt *scene.Returns, m mgl64.Mat4, dir mgl64.Vec3, rg float64) {
	if math.IsInf(rg, 0) || math.IsNaN(rg) {
		return
	}
	rt.Points = append(rt.Points, m.Mul4x1(dir.Mul(rg).Vec4(1)).Vec3())
}

// FrameKind implements Payload.
func (p *Reading) FrameKind() string { return KindPSD }

// Encode implements Payload: info is the reading's JSON, no data.
func (p *Reading) Encode() (info, data []byte, err error) {
	info, err = json.Marshal(p)
	return info, nil, err
}

// WriteFiles implements Payload: base.psd.json.
func (p *Reading) WriteFiles(base string) ([]string, error) {
	return []string{base + ".psd.json"}, writeJSONFile(base+".psd.json", p)
}

func (p *Reading) addReturns(rt *scene.Returns) {
	m := p.Pose.Matrix()
	rt.Origin = m.Col(3).Vec3()
	addHit(rt, m, mgl64.Vec3{1, 0, 0}, p.Range)
}

// FrameKind implements Payload.
func (c *CameraImage) FrameKind() string { return KindImage }

// Encode implements Payload: info is the FrameInfo's JSON, data the
// pixels as RGB 8-bit, rows from the top.
func (c *CameraImage) Encode() (info, data []byte, err error) {
	info, err = json.Marshal(c.Info)
	px := c.Image.Pix
	data = make([]byte, 0, len(px)/4*3)
	for i := 0; i < len(px); i += 4 {
		data = append(data, px[i], px[i+1], px[i+2])
	}
	return info, data, err
}

// WriteFiles implements Payload: base.png and base.json.
func (c *CameraImage) WriteFiles(base string) ([]string, error) {
	if err := WritePNG(base+".png", c.Image); err != nil {
		return nil, err
	}
	return []string{base + ".png", base + ".json"}, writeJSONFile(base+".json", c.Info)
}

// FrameKind implements Payload.
func (im *DepthImage) FrameKind() string { return KindDepth }

// Encode implements Payload: info is the FrameInfo's JSON, data the
// depths as float32 meters, rows from the top.
func (im *DepthImage) Encode() (info, data []byte, err error) {
	info, err = json.Marshal(im.Info)
	return info, float32Bytes(im.Depth), err
}

// WriteFiles implements Payload: base.depth.png (millimeters),
// base.depth.f32 (meters), base.preview.png and base.json.
func (im *DepthImage) WriteFiles(base string) ([]string, error) {
	files := []string{base + ".depth.png", base + ".depth.f32", base + ".json"}
	if err := WritePNG(files[0], im.Millimeters()); err != nil {
		return nil, err
	}
	if err := writeAtomic(files[1], func(w io.Writer) error {
		_, err := w.Write(float32Bytes(im.Depth))
		return err
	}); err != nil {
		return nil, err
	}
	// The colour-mapped preview for people goes before the JSON, which stays last.
	if err := WriteDepthPreview(base+".preview.png", im); err != nil {
		return nil, err
	}
	return []string{files[0], files[1], base + ".preview.png", files[2]}, writeJSONFile(files[2], im.Info)
}

// FrameKind implements Payload.
func (cl *Cloud) FrameKind() string { return KindCloud }

// cloudInfo describes a cloud's binary payload.
type cloudInfo struct {
	Sensor string   `json:"sensor"`
	Stamp  *Stamp   `json:"stamp,omitempty"`
	Width  int      `json:"width"`
	Height int      `json:"height"`
	Pose   jsonPose `json:"pose"`
}

// Encode implements Payload: info is the sensor, stamp, size and pose,
// data float32 x y z per point (NaN no return).
func (cl *Cloud) Encode() (info, data []byte, err error) {
	info, err = json.Marshal(cloudInfo{Sensor: cl.Sensor, Stamp: cl.Stamp, Width: cl.Width, Height: cl.Height, Pose: finitePose(cl.Pose)})
	data = make([]byte, 12*len(cl.Points))
	for i, p := range cl.Points {
		for k := 0; k < 3; k++ {
			binary.LittleEndian.PutUint32(data[12*i+4*k:], math.Float32bits(float32(p[k])))
		}
	}
	return info, data, err
}

// WriteFiles implements Payload: base.pcd.
func (cl *Cloud) WriteFiles(base string) ([]string, error) {
	return []string{base + ".pcd"}, cl.WritePCD(base + ".pcd")
}

func (cl *Cloud) addReturns(rt *scene.Returns) {
	m := cl.Pose.Matrix()
	rt.Origin = m.Col(3).Vec3()
	rt.Points = make([]mgl64.Vec3, 0, len(cl.Points))
	for _, p := range cl.Points {
		if !(math.IsNaN(p[0]) || math.IsInf(p[0], 0)) {
			rt.Points = append(rt.Points, m.Mul4x1(p.Vec4(1)).Vec3())
		}
	}
}

// FrameKind implements Payload.
func (im *SegmentationImage) FrameKind() string { return KindSegmentation }
