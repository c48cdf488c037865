package record

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
	"github.com/simvis/simvis/sensors/ros2"
)

// Frame is one sensor frame read back from a recording: what the host's
// sensors.Frame.Encode gave it, for a player to publish through the same
// transport encoder the live host uses (natsipc.Publisher.PublishSensor).
type Frame struct {
	Sensor  string // the simvis sensor name
	Kind    string // "scan", "psd", "image", "depth", "cloud" or "segmentation"
	LogTime int64  // ns, the frame's log time (Meta.EpochNs + scene time)
	// Info and Data are as sensors.Frame.Encode returns them.
	Info, Data []byte
	// Exact is true for a frame recorded with its description
	// (Options.Descriptions): Info and Data are byte for byte what the host
	// published. Otherwise Info is rebuilt from the ROS 2 messages and the
	// scene: ranges at the float32 a LaserScan or Range holds, the stamp's
	// time from the log time, its frame counted from the first frame read,
	// the pose the scene's at its current values, a depth image without
	// near and far.
	Exact bool
}

// Encode returns the frame's info and data, like sensors.Frame.Encode.
func (f *Frame) Encode() (info, data []byte, err error) { return f.Info, f.Data, nil }

// Frames turns a recording's messages, in log order, into the sensor
// frames they were recorded from. Not safe for concurrent use.
type Frames struct {
	rec     *Recording
	s       *scene.Scene
	routes  map[string]route // by topic
	sensors int              // the scene's sensors when routes were made
	pending map[string]*partial
	counts  map[string]int // frames by sensor, for stamps without a description
	// Dropped counts frames given up because a message of a later frame
	// of their sensor came before all of theirs.
	Dropped int
}

// route is the sensor a topic belongs to and its part of a frame.
type route struct {
	se     *scene.SensorEntry
	kind   string
	suffix string
}

// partial is a frame whose messages are still coming.
type partial struct {
	time int64
	kind string
	desc *ros2.FrameDescription
	msgs map[string][]byte
}

// NewFrames returns Frames for rec (as ReadWith read it: labels and meta)
// played in s, the scene rebuilt from rec's change log and values: its
// sensors route the topics, and it gives frames without a description
// their pose and intrinsics.
func NewFrames(rec *Recording, s *scene.Scene) *Frames {
	return &Frames{rec: rec, s: s, pending: map[string]*partial{}, counts: map[string]int{}}
}

// Reset forgets frames partly read (not counted as dropped): call it after
// seeking.
func (fs *Frames) Reset() { clear(fs.pending) }

// route maps the topics of the scene's sensors (recorded commands may add
// sensors) to them.
func (fs *Frames) route() {
	list := fs.s.Sensors()
	if fs.routes != nil && len(list) == fs.sensors {
		return
	}
	fs.routes, fs.sensors = map[string]route{}, len(list)
	for _, se := range list {
		// The sensor says what it renders; a kind the codec does not know
		// has no topics to route.
		fk, ok := se.Sensor.(scene.FrameKinder)
		if !ok {
			continue
		}
		kind := fk.FrameKind()
		suffixes := ros2.FrameSuffixes(kind)
		if suffixes == nil {
			continue
		}
		ns := ros2.SensorTopic(se.Name)
		for _, suffix := range append(suffixes, ros2.SuffixDescription) {
			fs.routes[ns+suffix] = route{se, kind, suffix}
		}
	}
}

// FrameSpan returns the log times (ns) of the first and the last frame of
// sensor se the recording holds (the last message of each of its frames,
// on its topic), and false where it holds none. Between the two a player
// shows those frames rather than render the sensor anew; before and
// after, the sensor has none to show.
func (r *Recording) FrameSpan(se *scene.SensorEntry) (first, last int64, ok bool) {
	fk, ok := se.Sensor.(scene.FrameKinder)
	if !ok {
		return 0, 0, false
	}
	suffixes := ros2.FrameSuffixes(fk.FrameKind())
	if len(suffixes) == 0 {
		return 0, 0, false
	}
	topic := ros2.SensorTopic(se.Name) + suffixes[len(suffixes)-1]
	i, found := slices.BinarySearchFunc(r.Topics, topic, func(t TopicStats, topic string) int { return strings.Compare(t.Topic, topic) })
	if !found || r.Topics[i].Messages == 0 {
		return 0, 0, false
	}
	return r.Topics[i].First, r.Topics[i].Last, true
}

// Add takes the next message of the recording on topic. It returns a frame
// once its last message is read, nil for a message of no sensor frame or
// one whose frame is not complete yet, and an error for a message that
// does not decode or a frame whose messages do not fit together (the
// frame is dropped).
func (fs *Frames) Add(topic string, m *mcap.Message) (*Frame, error) {
	fs.route()
	r, ok := fs.routes[topic]
	if !ok {
		return nil, nil
	}
	t := int64(m.LogTime)
	name := r.se.Name
	p := fs.pending[name]
	if p != nil && p.time != t {
		fs.Dropped++
		p = nil
	}
	if p == nil {
		p = &partial{time: t, kind: r.kind, msgs: map[string][]byte{}}
		fs.pending[name] = p
	}
	if r.suffix == ros2.SuffixDescription {
		d, err := ros2.DecodeFrameDescription(m.Data)
		if err != nil {
			delete(fs.pending, name)
			return nil, fmt.Errorf("%s: %w", topic, err)
		}
		if d.Sensor != name || d.Kind != r.kind {
			delete(fs.pending, name)
			return nil, fmt.Errorf("%s: a description of sensor %q, kind %q: want %q, %q", topic, d.Sensor, d.Kind, name, r.kind)
		}
		p.desc = d
		return nil, nil
	}
	p.msgs[r.suffix] = m.Data
	suffixes := ros2.FrameSuffixes(r.kind)
	if len(p.msgs) < len(suffixes) || r.suffix != suffixes[len(suffixes)-1] {
		return nil, nil
	}
	delete(fs.pending, name)
	f, err := fs.frame(r.se, p)
	if err != nil {
		return nil, fmt.Errorf("sensor %q, frame at %d ns: %w", name, t, err)
	}
	return f, nil
}

// frame makes a complete partial frame a Frame.
func (fs *Frames) frame(se *scene.SensorEntry, p *partial) (*Frame, error) {
	data, err := ros2.FramePayload(p.kind, p.msgs)
	if err != nil {
		return nil, err
	}
	f := &Frame{Sensor: se.Name, Kind: p.kind, LogTime: p.time, Data: data}
	st := &sensors.Stamp{Frame: fs.counts[se.Name], Time: float64(p.time-fs.rec.Meta.EpochNs) / 1e9}
	fs.counts[se.Name]++
	if p.desc != nil {
		if !json.Valid([]byte(p.desc.Info)) {
			return nil, fmt.Errorf("its description is not JSON")
		}
		f.Info, f.Exact = []byte(p.desc.Info), true
		return f, nil
	}
	f.Info, err = fs.rebuild(se, p, st, data)
	return f, err
}

// rebuild makes the info of a frame recorded without its description
// from its ROS 2 messages and the scene, through the sensors' own types
// (and their JSON: non-finite numbers null, as the host writes them).
func (fs *Frames) rebuild(se *scene.SensorEntry, p *partial, st *sensors.Stamp, data []byte) ([]byte, error) {
	world, err := fs.s.Transform(se.Name, scene.WorldFrame)
	if err != nil {
		return nil, err
	}
	pose := scene.PoseFromMatrix(world)
	intrinsics := func() (sensors.FrameInfo, error) {
		in, ok := se.Sensor.(interface{ Intrinsics() sensors.Intrinsics })
		if !ok {
			return sensors.FrameInfo{}, fmt.Errorf("sensor %q has no intrinsics", se.Name)
		}
		fi := sensors.FrameInfo{Sensor: se.Name, Stamp: st, Intrinsics: in.Intrinsics(), Pose: pose}
		// Every image of the frame was checked against its camera info.
		ci, err := ros2.DecodeCameraInfo(p.msgs[ros2.FrameSuffixes(p.kind)[len(ros2.FrameSuffixes(p.kind))-1]])
		if err != nil {
			return fi, err
		}
		if int(ci.Width) != fi.Intrinsics.Width || int(ci.Height) != fi.Intrinsics.Height {
			return fi, fmt.Errorf("recorded image %dx%d, the sensor's is %dx%d", ci.Width, ci.Height, fi.Intrinsics.Width, fi.Intrinsics.Height)
		}
		return fi, nil
	}
	switch p.kind {
	case "scan":
		m, err := ros2.DecodeLaserScan(p.msgs[ros2.SuffixScan])
		if err != nil {
			return nil, err
		}
		sc := &sensors.Scan{Sensor: se.Name, Stamp: st, AngleMin: float64(m.AngleMin), AngleMax: float64(m.AngleMax),
			AngleIncrement: float64(m.AngleIncrement), RangeMin: float64(m.RangeMin), RangeMax: float64(m.RangeMax),
			Ranges: make([]float64, len(m.Ranges)), Pose: pose}
		for i, r := range m.Ranges {
			sc.Ranges[i] = float64(r)
		}
		return json.Marshal(sc)
	case "psd":
		m, err := ros2.DecodeRange(p.msgs[ros2.SuffixRange])
		if err != nil {
			return nil, err
		}
		return json.Marshal(&sensors.Reading{Sensor: se.Name, Stamp: st, Range: float64(m.Range),
			RangeMin: float64(m.MinRange), RangeMax: float64(m.MaxRange), Pose: pose})
	case "image", "depth":
		fi, err := intrinsics()
		if err != nil {
			return nil, err
		}
		return json.Marshal(fi)
	case "cloud":
		m, err := ros2.DecodePointCloud2(p.msgs[ros2.SuffixPoints])
		if err != nil {
			return nil, err
		}
		// The pose as the sensors' JSON writes one (null where not finite).
		var r struct{ Pose json.RawMessage }
		raw, err := json.Marshal(&sensors.Reading{Pose: pose})
		if err == nil {
			err = json.Unmarshal(raw, &r)
		}
		if err != nil {
			return nil, err
		}
		return json.Marshal(struct {
			Sensor string          `json:"sensor"`
			Stamp  *sensors.Stamp  `json:"stamp,omitempty"`
			Width  uint32          `json:"width"`
			Height uint32          `json:"height"`
			Pose   json.RawMessage `json:"pose"`
		}{se.Name, st, m.Width, m.Height, r.Pose})
	case "segmentation":
		fi, err := intrinsics()
		if err != nil {
			return nil, err
		}
		d := se.Sensor.Describe()
		fi.Near, _ = d["near"].(float64)
		fi.Far, _ = d["far"].(float64)
		topic := ros2.SensorTopic(se.Name) + SuffixLabels
		labels, ok := fs.rec.LabelsAt(topic, p.time)
		if !ok {
			return nil, fmt.Errorf("no %s recorded at or before it", topic)
		}
		n := len(data) / 4
		im := &sensors.SegmentationImage{Info: fi, Instance: make([]uint16, n), Class: make([]uint16, n),
			Labels: sensors.Labels{Sensor: se.Name, Stamp: st, Instances: map[string]sensors.Label{}, Classes: labels.Classes}}
		count := map[uint16]int{}
		for i := range n {
			im.Instance[i] = binary.LittleEndian.Uint16(data[2*i:])
			im.Class[i] = binary.LittleEndian.Uint16(data[2*(n+i):])
			count[im.Instance[i]]++
		}
		for id, l := range labels.Instances {
			k, err := strconv.ParseUint(id, 10, 16)
			if err != nil {
				return nil, fmt.Errorf("instance id %q", id)
			}
			im.Labels.Instances[id] = sensors.Label{Name: l.Name, Class: l.Class, ClassID: l.ClassID, Pixels: count[uint16(k)]}
			delete(count, uint16(k))
		}
		delete(count, 0) // background
		for id := range count {
			return nil, fmt.Errorf("it shows instance %d, which its labels do not name", id)
		}
		info, _, err := im.Encode()
		return info, err
	}
	return nil, fmt.Errorf("frame kind %q", p.kind)
}
