package sensors

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/simvis/simvis/scene"
)

// Frame is one rendered sensor output: what capture writes as files and
// what a transport publishes as a message (Encode), rendered once for both.
// What it carries is its Payload, one Go type per kind: consumers call
// the payload's methods (or convert by its type), they do not switch on
// Kind.
type Frame struct {
	Sensor string
	Kind   string // the payload's FrameKind: "scan", "psd", "image", "depth", "cloud" or "segmentation"

	payload Payload
	stamp   *Stamp

	// The payload's encoding, made once: a frame goes to several sinks
	// (NATS, the recording's description, a player), each asking for it.
	encoded          bool
	encInfo, encData []byte
	encErr           error
}

// The frame kinds of the built-in sensors, as Frame.Kind, the payloads'
// FrameKind and the sensors' (scene.FrameKinder) give them.
const (
	KindScan         = "scan"         // *Scan
	KindPSD          = "psd"          // *Reading
	KindImage        = "image"        // *CameraImage
	KindDepth        = "depth"        // *DepthImage
	KindCloud        = "cloud"        // *Cloud
	KindSegmentation = "segmentation" // *SegmentationImage
)

// Payload is what a frame carries: *Scan, *Reading, *CameraImage,
// *DepthImage, *Cloud or *SegmentationImage for the built-in sensors.
// Encode returns it as a message (see Frame.Encode), WriteFiles writes it
// as capture does under base and returns the files written.
type Payload interface {
	FrameKind() string
	Encode() (info, data []byte, err error)
	WriteFiles(base string) ([]string, error)
}

// NewFrame returns sensor's frame carrying p, stamped st (may be nil);
// its Kind is p's FrameKind.
func NewFrame(sensor string, p Payload, st *Stamp) *Frame {
	return &Frame{Sensor: sensor, Kind: p.FrameKind(), payload: p, stamp: st}
}

// Payload returns what the frame carries (nil for a zero Frame).
func (f *Frame) Payload() Payload { return f.payload }

// framer is a sensor that renders Frames; every built-in type is one.
type framer interface {
	renderFrame(r *Renderer, s *scene.Scene, st *Stamp) (*Frame, error)
}

// FrameRenderer is a sensor type of one's own (scene.RegisterSensor) that
// renders frames: what capture, hosts, mirrors, recordings and transports
// take from every sensor. RenderFrame renders one frame at the scene's
// current state, stamped st (may be nil), with r's views (RenderRGBA,
// RenderDepth...) or any other means, and returns it as NewFrame makes it
// from a Payload of its own or of this package.
type FrameRenderer interface {
	RenderFrame(r *Renderer, s *scene.Scene, st *Stamp) (*Frame, error)
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
	switch f := se.Sensor.(type) {
	case framer:
		fr, err = f.renderFrame(r, s, st)
	case FrameRenderer:
		if fr, err = f.RenderFrame(r, s, st); err == nil && fr == nil {
			err = errors.New("RenderFrame returned no frame")
		}
	default:
		return nil, fmt.Errorf("sensor %q (%s) cannot be rendered into frames (a sensor type of one's own implements sensors.FrameRenderer)", se.Name, se.Type)
	}
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

// returner is a payload of ranges: it adds its hits, in world
// coordinates, and its origin to rt.
type returner interface {
	addReturns(rt *scene.Returns)
}

// returns gives a range frame's hits in world coordinates (none for frames
// that are not ranges).
func (f *Frame) returns() *scene.Returns {
	rt, _ := f.Returns()
	return rt
}

// Returns are a range frame's returns in world coordinates, what the scan
// overlay draws; ok is false for frames without returns (a camera's).
func (f *Frame) Returns() (rt *scene.Returns, ok bool) {
	rt = &scene.Returns{Sensor: f.Sensor}
	r, ok := f.payload.(returner)
	if ok {
		r.addReturns(rt)
	}
	return rt, ok
}

// WriteFiles writes the frame as capture does: base plus ".scan.json",
// ".psd.json", ".png" and ".json", ".depth.png", ".depth.f32" and ".json",
// or ".pcd" (the payload's WriteFiles).
func (f *Frame) WriteFiles(base string) ([]string, error) {
	if f.payload == nil {
		return nil, fmt.Errorf("frame of unknown kind %q", f.Kind)
	}
	return f.payload.WriteFiles(base)
}

func float32Bytes(v []float32) []byte {
	raw := make([]byte, 4*len(v))
	for i, z := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(z))
	}
	return raw
}

// Encode returns the frame as a message: info is JSON (the whole reading
// for scans and PSD, which have no data; for cameras and depth cameras the
// FrameInfo their NAME.json holds: calibration as sensor_msgs/CameraInfo,
// body and optical poses, stamp; size, pose and stamp for clouds) and data the binary payload, little-endian, rows from the
// top: RGB 8-bit for images, float32 meters for depth (+Inf nothing in
// range, -Inf too close), float32 x y z per point for clouds (NaN no
// return); for segmentation see SegmentationImage.Encode. The encoding is
// made once and shared by every caller, which must not modify it; a frame
// is one goroutine's at a time.
func (f *Frame) Encode() (info, data []byte, err error) {
	if f.payload == nil {
		return nil, nil, fmt.Errorf("frame of unknown kind %q", f.Kind)
	}
	if !f.encoded {
		f.encInfo, f.encData, f.encErr = f.payload.Encode()
		f.encoded = true
	}
	return f.encInfo, f.encData, f.encErr
}

func (l *Laser) renderFrame(r *Renderer, s *scene.Scene, st *Stamp) (*Frame, error) {
	sc, err := l.Scan(r, s)
	if err != nil {
		return nil, err
	}
	sc.Stamp = st
	return NewFrame(l.name, sc, st), nil
}

func (p *PSD) renderFrame(r *Renderer, s *scene.Scene, st *Stamp) (*Frame, error) {
	rd, err := p.Measure(r, s)
	if err != nil {
		return nil, err
	}
	rd.Stamp = st
	return NewFrame(p.name, rd, st), nil
}

// drawAlone draws a picture sensor's frame on its own, its read waited
// for at once.
func drawAlone(b pictureBeginner, r *Renderer, s *scene.Scene, st *Stamp) (*Frame, error) {
	p, err := b.beginPicture(r, s, st, nil)
	if err != nil {
		return nil, err
	}
	return p.finish(0)
}

func (c *Camera) renderFrame(r *Renderer, s *scene.Scene, st *Stamp) (*Frame, error) {
	return drawAlone(c, r, s, st)
}

// beginPicture draws the camera's picture (when q is flushed, where q is
// not nil) and starts reading it back; the frame is made when RenderFrames
// has drawn the others (later).
func (c *Camera) beginPicture(r *Renderer, s *scene.Scene, st *Stamp, q *drawQueue) (pendingFrame, error) {
	start := time.Now()
	finish, err := c.startImage(r, s, q)
	if err != nil {
		return pendingFrame{}, err
	}
	v := c.View()
	info := FrameInfo{Sensor: c.name, Stamp: st, Intrinsics: c.Intrinsics(), Pose: scene.PoseFromMatrix(v.Pose)}
	return pendingFrame{start: start, later: true, finish: func(time.Duration) (*Frame, error) {
		img, err := finish()
		if err != nil {
			return nil, err
		}
		return NewFrame(c.name, &CameraImage{Image: img, Info: info}, st), nil
	}}, nil
}

func (sg *Segmentation) renderFrame(r *Renderer, s *scene.Scene, st *Stamp) (*Frame, error) {
	return drawAlone(sg, r, s, st)
}

// beginPicture draws the ids and starts reading them back, as a camera's.
func (sg *Segmentation) beginPicture(r *Renderer, s *scene.Scene, st *Stamp, q *drawQueue) (pendingFrame, error) {
	start := time.Now()
	finish, err := sg.startSegment(r, s, q)
	if err != nil {
		return pendingFrame{}, err
	}
	return pendingFrame{start: start, later: true, finish: func(time.Duration) (*Frame, error) {
		im, err := finish()
		if err != nil {
			return nil, err
		}
		im.Info.Stamp, im.Labels.Stamp = st, st
		return NewFrame(sg.name, im, st), nil
	}}, nil
}

func (d *DepthCamera) renderFrame(r *Renderer, s *scene.Scene, st *Stamp) (*Frame, error) {
	img, err := d.Depth(r, s)
	if err != nil {
		return nil, err
	}
	img.Info.Stamp = st
	return NewFrame(img.Info.Sensor, img, st), nil
}

func (l *Laser3D) renderFrame(r *Renderer, s *scene.Scene, st *Stamp) (*Frame, error) {
	cl, err := l.Scan(r, s)
	if err != nil {
		return nil, err
	}
	cl.Sensor, cl.Stamp = l.name, st
	return NewFrame(l.name, cl, st), nil
}
