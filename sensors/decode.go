package sensors

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"math"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

// DecodeFrame is Frame.Encode's inverse for the kinds others draw from a
// recording (a player's web pages): "scan", "psd" and "cloud", whose
// Returns are their hits, and "image", whose ImageData is its pixels. The
// numbers JSON writes as null come back as they went (a range +Inf, a
// too_close beam -Inf, a pose field NaN). Other kinds are ErrNotDecoded.
func DecodeFrame(sensor, kind string, info, data []byte) (*Frame, error) {
	var p Payload
	var err error
	switch kind {
	case KindScan:
		p, err = decodeScan(info)
	case KindPSD:
		p, err = decodeReading(info)
	case KindCloud:
		p, err = decodeCloud(info, data)
	case KindImage:
		p, err = decodeImage(info, data)
	default:
		return nil, fmt.Errorf("sensor %q, kind %q: %w", sensor, kind, ErrNotDecoded)
	}
	if err != nil {
		return nil, fmt.Errorf("sensor %q: a %s frame: %w", sensor, kind, err)
	}
	return NewFrame(sensor, p, nil), nil
}

// sizeFits reports whether w x h elements of size bytes each are exactly n
// bytes, without overflowing: a recording's header is hostile, and a
// product that wrapped around would pass for a small one.
func sizeFits(w, h, size, n int) bool {
	if w < 0 || h < 0 {
		return false
	}
	if w == 0 || h == 0 {
		return n == 0
	}
	return w <= n/size && h <= n/size/w && w*h*size == n
}

// ErrNotDecoded is DecodeFrame's error for a kind it does not decode.
var ErrNotDecoded = errors.New("frames of this kind are not decoded")

// nullable is a number JSON may hold as null (not finite when written).
type nullable *float64

func orNaN(f nullable) float64 {
	if f == nil {
		return math.NaN()
	}
	return *f
}

// poseIn is a pose as jsonPose writes it.
type poseIn struct {
	X, Y, Z, Roll, Pitch, Yaw nullable
}

func (p poseIn) pose() scene.Pose {
	return scene.Pose{X: orNaN(p.X), Y: orNaN(p.Y), Z: orNaN(p.Z), Roll: orNaN(p.Roll), Pitch: orNaN(p.Pitch), Yaw: orNaN(p.Yaw)}
}

func decodeScan(info []byte) (*Scan, error) {
	var v struct {
		Sensor         string     `json:"sensor"`
		Stamp          *Stamp     `json:"stamp"`
		AngleMin       float64    `json:"angle_min"`
		AngleMax       float64    `json:"angle_max"`
		AngleIncrement float64    `json:"angle_increment"`
		RangeMin       float64    `json:"range_min"`
		RangeMax       float64    `json:"range_max"`
		Ranges         []*float64 `json:"ranges"`
		TooClose       []int      `json:"too_close"`
		Pose           poseIn     `json:"pose"`
	}
	if err := json.Unmarshal(info, &v); err != nil {
		return nil, err
	}
	sc := &Scan{Sensor: v.Sensor, Stamp: v.Stamp, AngleMin: v.AngleMin, AngleMax: v.AngleMax, AngleIncrement: v.AngleIncrement,
		RangeMin: v.RangeMin, RangeMax: v.RangeMax, Ranges: make([]float64, len(v.Ranges)), Pose: v.Pose.pose()}
	for i, r := range v.Ranges {
		sc.Ranges[i] = math.Inf(1)
		if r != nil {
			sc.Ranges[i] = *r
		}
	}
	for _, i := range v.TooClose {
		if i < 0 || i >= len(sc.Ranges) {
			return nil, fmt.Errorf("too_close beam %d of %d", i, len(sc.Ranges))
		}
		sc.Ranges[i] = math.Inf(-1)
	}
	return sc, nil
}

func decodeReading(info []byte) (*Reading, error) {
	var v struct {
		Sensor   string   `json:"sensor"`
		Stamp    *Stamp   `json:"stamp"`
		Range    *float64 `json:"range"`
		TooClose bool     `json:"too_close"`
		RangeMin float64  `json:"range_min"`
		RangeMax float64  `json:"range_max"`
		Pose     poseIn   `json:"pose"`
	}
	if err := json.Unmarshal(info, &v); err != nil {
		return nil, err
	}
	rd := &Reading{Sensor: v.Sensor, Stamp: v.Stamp, Range: math.Inf(1), RangeMin: v.RangeMin, RangeMax: v.RangeMax, Pose: v.Pose.pose()}
	switch {
	case v.TooClose:
		rd.Range = math.Inf(-1)
	case v.Range != nil:
		rd.Range = *v.Range
	}
	return rd, nil
}

// gridInfo is the part of a cloud's or a picture's info that decoding
// needs: its size (a picture's is CameraInfo's, at the top level; the rest
// of its FrameInfo is not needed to show it).
type gridInfo struct {
	Sensor        string `json:"sensor"`
	Stamp         *Stamp `json:"stamp"`
	Width, Height int
	Pose          poseIn `json:"pose"`
}

func decodeCloud(info, data []byte) (*Cloud, error) {
	var v gridInfo
	if err := json.Unmarshal(info, &v); err != nil {
		return nil, err
	}
	if !sizeFits(v.Width, v.Height, 12, len(data)) {
		return nil, fmt.Errorf("%d bytes of points for %dx%d", len(data), v.Width, v.Height)
	}
	cl := &Cloud{Sensor: v.Sensor, Stamp: v.Stamp, Width: v.Width, Height: v.Height, Points: make([]mgl64.Vec3, len(data)/12), Pose: v.Pose.pose()}
	for i := range cl.Points {
		for k := range 3 {
			cl.Points[i][k] = float64(math.Float32frombits(binary.LittleEndian.Uint32(data[12*i+4*k:])))
		}
	}
	return cl, nil
}

func decodeImage(info, data []byte) (*CameraImage, error) {
	var v gridInfo
	if err := json.Unmarshal(info, &v); err != nil {
		return nil, err
	}
	if v.Width <= 0 || v.Height <= 0 || !sizeFits(v.Width, v.Height, 3, len(data)) {
		return nil, fmt.Errorf("%d bytes of RGB for %dx%d", len(data), v.Width, v.Height)
	}
	img := image.NewRGBA(image.Rect(0, 0, v.Width, v.Height))
	for i, px := 0, img.Pix; i < v.Width*v.Height; i++ {
		px[4*i], px[4*i+1], px[4*i+2], px[4*i+3] = data[3*i], data[3*i+1], data[3*i+2], 255
	}
	fi := FrameInfo{Sensor: v.Sensor, Stamp: v.Stamp, Pose: v.Pose.pose()}
	fi.Intrinsics.Width, fi.Intrinsics.Height = v.Width, v.Height
	return &CameraImage{Image: img, Info: fi}, nil
}
