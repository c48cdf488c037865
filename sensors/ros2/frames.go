package ros2

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/simvis/simvis/sensors"
)

// Message is one encoded message for a topic.
type Message struct {
	Topic string // e.g. "/front_laser/scan"
	Type  string // the schema name, e.g. TypeLaserScan
	Data  []byte // CDR with its encapsulation header
}

// SensorTopic returns the topic namespace of a sensor: "/" and the name
// made a valid ROS 2 name: characters other than letters, digits, '_' and
// '/' become '_', runs of '_' or '/' become one, '/' at either end is
// dropped and a token that starts with a digit gets a leading '_'
// ("arm/cam 1" -> "/arm/cam_1", "2d" -> "/_2d"). Two sensors may map to the
// same namespace: callers that publish several must check (Namespaces).
func SensorTopic(sensor string) string {
	var b strings.Builder
	for _, tok := range strings.Split(sensor, "/") {
		var t strings.Builder
		for _, r := range tok {
			ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
			if !ok {
				r = '_'
			}
			if r == '_' && strings.HasSuffix(t.String(), "_") {
				continue
			}
			t.WriteRune(r)
		}
		s := t.String()
		if s == "" || s == "_" {
			continue
		}
		if s[0] >= '0' && s[0] <= '9' {
			s = "_" + s
		}
		b.WriteString("/" + s)
	}
	if b.Len() == 0 {
		return "/sensor"
	}
	return b.String()
}

// Namespaces gives sensors their topic namespaces (SensorTopic) as they
// come, refusing a sensor whose namespace another one took first: the
// recorder and the Foxglove server publish each sensor under its own.
// The zero value is ready to use.
type Namespaces struct{ ns, owner map[string]string }

// Of returns sensor's namespace, or an error naming the sensor that took
// it first.
func (n *Namespaces) Of(sensor string) (string, error) {
	if ns, ok := n.ns[sensor]; ok {
		return ns, nil
	}
	ns := SensorTopic(sensor)
	if other, ok := n.owner[ns]; ok {
		return "", fmt.Errorf("sensors %q and %q both map to the topics %s/...: rename one", other, sensor, ns)
	}
	if n.ns == nil {
		n.ns, n.owner = map[string]string{}, map[string]string{}
	}
	n.ns[sensor], n.owner[ns] = ns, sensor
	return ns, nil
}

// Known returns the namespace Of gave sensor, if it did.
func (n *Namespaces) Known(sensor string) (string, bool) {
	ns, ok := n.ns[sensor]
	return ns, ok
}

// OpticalFrame returns the frame id of a camera's optical frame (REP-103:
// z forward, x right, y down, at the sensor frame's origin).
func OpticalFrame(sensor string) string { return FrameID(sensor) + "_optical" }

// FrameID returns the tf frame id of a simvis frame: its name made a valid
// ROS name as SensorTopic makes a namespace, without the leading '/' that
// tf2 refuses: letters, digits and '_' kept, '/' separating tokens
// ("MARVIN/FRONT_SCANNER" stays as it is), any other character '_' ("arm
// cam" -> "arm_cam"), a token that starts with a digit prefixed with '_'.
// "world" stays "world".
func FrameID(name string) string {
	if name == "world" {
		return name
	}
	return strings.TrimPrefix(SensorTopic(name), "/")
}

// Topic suffixes by frame kind, after the sensor's namespace.
const (
	SuffixScan          = "/scan"
	SuffixRange         = "/range"
	SuffixPoints        = "/points"
	SuffixImage         = "/image_raw"
	SuffixCameraInfo    = "/camera_info"
	SuffixDepthImage    = "/depth/image_raw"
	SuffixDepthInfo     = "/depth/camera_info"
	SuffixInstanceImage = "/instance/image_raw"
	SuffixClassImage    = "/class/image_raw"
)

// Encoder is a frame payload (sensors.Payload) that gives its own ROS 2
// messages: a sensor type of one's own makes its frames recordable and
// publishable to ROS 2 tools by implementing it. ns is the sensor's topic
// namespace, body and optical the headers of its sensor frame and its
// optical frame (REP-103), both stamped.
type Encoder interface {
	ROS2Messages(ns string, body, optical Header) ([]Message, error)
}

// FrameMessages encodes a rendered frame as its ROS 2 messages, stamped
// stamp, under ns (the sensor's namespace, SensorTopic(f.Sensor) unless the
// caller disambiguated): a scan as LaserScan (frame: the sensor), a PSD
// reading as Range (infrared, field of view 0: one beam), a cloud as an
// organized PointCloud2 in the sensor frame (x y z float32, ring uint16 the
// layer from the lowest, time float32 seconds after the stamp, 0 for a
// depth-buffer scan that sees all at once; NaN points no return), a camera
// image as rgb8 Image plus CameraInfo, a depth image as 32FC1 meters
// (+Inf nothing in range, -Inf too close) plus CameraInfo, a segmentation
// as mono16 instance and class id Images plus CameraInfo, all images in
// the sensor's optical frame; a payload of another type through its
// Encoder.
func FrameMessages(f *sensors.Frame, ns string, stamp Time) ([]Message, error) {
	body := Header{Stamp: stamp, FrameID: FrameID(f.Sensor)}
	optical := Header{Stamp: stamp, FrameID: OpticalFrame(f.Sensor)}
	switch p := f.Payload().(type) {
	case Encoder:
		return p.ROS2Messages(ns, body, optical)
	case *sensors.Scan:
		sc := p
		m := LaserScan{Header: body, AngleMin: float32(sc.AngleMin), AngleMax: float32(sc.AngleMax),
			AngleIncrement: float32(sc.AngleIncrement), RangeMin: float32(sc.RangeMin), RangeMax: float32(sc.RangeMax),
			Ranges: make([]float32, len(sc.Ranges))}
		for i, r := range sc.Ranges {
			m.Ranges[i] = float32(r)
		}
		return []Message{{ns + SuffixScan, TypeLaserScan, m.Marshal()}}, nil
	case *sensors.Reading:
		rd := p
		m := Range{Header: body, RadiationType: Infrared, MinRange: float32(rd.RangeMin), MaxRange: float32(rd.RangeMax), Range: float32(rd.Range)}
		return []Message{{ns + SuffixRange, TypeRange, m.Marshal()}}, nil
	case *sensors.Cloud:
		m := cloudMessage(p, body)
		return []Message{{ns + SuffixPoints, TypePointCloud2, m.Marshal()}}, nil
	case *sensors.CameraImage:
		img, info := p.Image, p.Info
		w, h := info.Intrinsics.Width, info.Intrinsics.Height
		data := make([]byte, 0, 3*w*h)
		for y := 0; y < h; y++ {
			row := img.Pix[y*img.Stride : y*img.Stride+4*w]
			for i := 0; i < len(row); i += 4 {
				data = append(data, row[i], row[i+1], row[i+2])
			}
		}
		m := Image{Header: optical, Height: uint32(h), Width: uint32(w), Encoding: "rgb8", Step: uint32(3 * w), Data: data}
		ci := cameraInfo(info.Intrinsics, optical)
		return []Message{{ns + SuffixImage, TypeImage, m.Marshal()}, {ns + SuffixCameraInfo, TypeCameraInfo, ci.Marshal()}}, nil
	case *sensors.DepthImage:
		d := p
		in := d.Info.Intrinsics
		data := make([]byte, 4*len(d.Depth))
		for i, z := range d.Depth {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(z))
		}
		m := Image{Header: optical, Height: uint32(in.Height), Width: uint32(in.Width), Encoding: "32FC1", Step: uint32(4 * in.Width), Data: data}
		ci := cameraInfo(in, optical)
		return []Message{{ns + SuffixDepthImage, TypeImage, m.Marshal()}, {ns + SuffixDepthInfo, TypeCameraInfo, ci.Marshal()}}, nil
	case *sensors.SegmentationImage:
		sg := p
		in := sg.Info.Intrinsics
		out := make([]Message, 0, 3)
		for _, im := range []struct {
			suffix string
			ids    []uint16
		}{{SuffixInstanceImage, sg.Instance}, {SuffixClassImage, sg.Class}} {
			data := make([]byte, 2*len(im.ids))
			for i, id := range im.ids {
				binary.LittleEndian.PutUint16(data[2*i:], id)
			}
			m := Image{Header: optical, Height: uint32(in.Height), Width: uint32(in.Width), Encoding: "mono16", Step: uint32(2 * in.Width), Data: data}
			out = append(out, Message{ns + im.suffix, TypeImage, m.Marshal()})
		}
		ci := cameraInfo(in, optical)
		return append(out, Message{ns + SuffixCameraInfo, TypeCameraInfo, ci.Marshal()}), nil
	}
	return nil, fmt.Errorf("ros2: sensor %q: frame of kind %q has no ROS 2 message", f.Sensor, f.Kind)
}

func cameraInfo(in sensors.Intrinsics, h Header) CameraInfo {
	ci := in.CameraInfo()
	return CameraInfo{Header: h, Height: uint32(ci.Height), Width: uint32(ci.Width), DistortionModel: ci.DistortionModel,
		D: ci.D, K: ci.K, R: ci.R, P: ci.P}
}

// cloudPointStep is the size of one PointCloud2 point: x y z float32 at 0,
// 4, 8, ring uint16 at 12, two bytes padding, time float32 at 16.
const cloudPointStep = 20

// CloudFields are the fields of simvis's PointCloud2 points.
var CloudFields = []PointField{
	{"x", 0, Float32, 1}, {"y", 4, Float32, 1}, {"z", 8, Float32, 1},
	{"ring", 12, Uint16, 1}, {"time", 16, Float32, 1},
}

func cloudMessage(cl *sensors.Cloud, h Header) PointCloud2 {
	m := PointCloud2{Header: h, Height: uint32(cl.Height), Width: uint32(cl.Width), Fields: CloudFields,
		PointStep: cloudPointStep, RowStep: uint32(cloudPointStep * cl.Width), IsDense: true,
		Data: make([]byte, cloudPointStep*len(cl.Points))}
	for i, p := range cl.Points {
		b := m.Data[cloudPointStep*i:]
		for k := 0; k < 3; k++ {
			if math.IsNaN(p[k]) {
				m.IsDense = false
			}
			binary.LittleEndian.PutUint32(b[4*k:], math.Float32bits(float32(p[k])))
		}
		if cl.Width > 0 {
			binary.LittleEndian.PutUint16(b[12:], uint16(i/cl.Width))
		}
		// time (b[16:20]) stays 0: every beam of a frame sees the same instant.
	}
	return m
}
