package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
	"github.com/simvis/simvis/sensors/ros2"
)

// simvis's own channels: CDR messages of the simvis_msgs types
// (sensors/ros2), whose ros2msg definitions the file carries like any
// other schema. Recordings made before those types carried JSON with
// jsonschema schemas; Read reads both.
const (
	TopicChanges = "/simvis/changes" // one Change per change-log command
	TopicValues  = "/simvis/values"  // Values: the parameters that changed in a cycle
	TopicTF      = "/tf"
	TopicStatic  = ros2.TopicStatic
	// MetadataName is the MCAP metadata record that holds Meta.
	MetadataName = "simvis"
	// MetadataPackages is the metadata record that lists, as JSON under
	// "json", the entries of the package search path (Options.PackagePath)
	// that lie inside the recording's base directory, relative to it and
	// slash-separated: where a player finds the attached packages that
	// URDF parts name by package:// URIs.
	MetadataPackages = "simvis_packages"
	// MetadataROSBag2 is the metadata record rosbag2 writes when it closes
	// a bag: key "serialized_metadata", the bag's metadata.yaml.
	MetadataROSBag2 = "rosbag2"
	// SuffixLabels is the channel of a segmentation sensor's Labels, under
	// its topic namespace (/NAME/labels).
	SuffixLabels = "/labels"
	// TypeLabels is the schema name of the labels channels.
	TypeLabels = ros2.TypeLabels
	// typeLabelsJSON is the labels channels' schema name in recordings
	// that carried them as JSON.
	typeLabelsJSON = "simvis/Labels"
)

// Labels is one /NAME/labels message: what a segmentation sensor's ids
// mean (NAME.labels.json without the per-frame pixel counts, which the
// instance image gives). It is written before the sensor's first frame
// and again before a frame whose labels differ, at that frame's log time:
// a frame's labels are the last message at or before its log time.
type Labels struct {
	Sensor string `json:"sensor"`
	// Instances by id (decimal, from "1"): the part or element, its class
	// ("" none) and class id (0 none).
	Instances map[string]InstanceLabel `json:"instances"`
	Classes   map[string]string        `json:"classes"` // class name by class id
}

// InstanceLabel is one instance of Labels.
type InstanceLabel struct {
	Name    string `json:"name"`
	Class   string `json:"class,omitempty"`
	ClassID int    `json:"class_id"`
}

// Change is one change-log command as /simvis/changes carries it.
type Change struct {
	Seq    int    `json:"seq"`    // 1, 2, ... in execution order
	Source string `json:"source"` // "FILE:LINE" of the command
	// Dir is the directory its relative file paths resolve against,
	// relative to the recording's base directory (the first command's):
	// "." for the base itself; attachments are named Dir/PATH.
	Dir string `json:"dir"`
	XML string `json:"xml"`
	// Reset marks the first command of a new scene: the scene recorded
	// before it is gone and this command and those after it (Seq from 1
	// again) build its replacement from nothing (a mirror whose host
	// restarted with a different scene). Values, /tf_static and labels are
	// recorded anew after it.
	Reset bool `json:"reset,omitempty"`
}

// Values is one /simvis/values message: every parameter whose value
// changed since the previous message (all of them in the first), keyed
// ELEMENT.PARAM.
type Values struct {
	Values map[string]float64 `json:"values"`
}

// Meta is the recording's "simvis" metadata record.
type Meta struct {
	Scene    string  `json:"scene"`    // the scene file the host or capture loaded
	Rate     float64 `json:"rate"`     // host cycles (capture: frames) per second
	EpochNs  int64   `json:"epoch_ns"` // log time of scene time 0
	Realtime bool    `json:"realtime"` // stamps are wall clock, not scene time
}

// Options configure a Writer.
type Options struct {
	Meta
	// Compression is "zstd" (default) or "lz4".
	Compression string
	// ChunkBytes is the uncompressed size at which a chunk is closed
	// (default 4 MiB).
	ChunkBytes int64
	// ChunkInterval closes a chunk at least this often (default 1 s): what
	// a process killed mid-recording loses at most.
	ChunkInterval time.Duration
	// Limits bound each model file attached (zero fields: models.DefaultLimits).
	Limits models.Limits
	// PackagePath is where URDF parts' package:// files are found, as the
	// scene recorded found them (nil: models.DefaultPackagePath).
	PackagePath []string
	// Descriptions records, before each frame's ROS 2 messages, its
	// FrameDescription on /NAME/simvis_frame: the JSON description the
	// host publishes, which the messages hold only in part (float32
	// ranges, no pose, the stamp rounded to nanoseconds), so that Frames
	// gives a player each frame byte for byte as the host published it.
	// Off, a recording has the channels it always had.
	Descriptions bool
}

// Writer records a scene's cycles and sensor frames into an MCAP file. It is
// not safe for concurrent use.
type Writer struct {
	f        *os.File
	w        *mcap.Writer
	mo       *mcap.WriterOptions
	opts     Options
	schemas  map[string]uint16 // by schema name
	channels map[string]uint16 // by topic
	seq      map[uint16]uint32
	lastLog  uint64
	flushed  time.Time

	baseDir  string
	scene    *scene.Scene      // the scene Cycle saw last
	logged   int               // commands of scene.Log() recorded
	recorded []string          // those commands as recorded (dir and XML), to compare a replacement with
	reset    bool              // the next command recorded starts a new scene
	attached map[string]string // attachment name: its content's SHA-256
	current  map[string]bool   // attachments the current scene loads
	names    []string          // ELEMENT.PARAM per table index, as last seen
	values   []float64         // as last recorded
	topics   ros2.Namespaces   // each sensor's topic namespace
	labels   map[string][]byte // each segmentation sensor's Labels as last written
	static   []byte            // the /tf_static transforms last written (unstamped), to write again when they change
	joints   map[string][]byte // each joint_states topic's message as last written (unstamped)
	robots   map[string]string // each robot_description topic's part and file as last written
	start    time.Time
	// The stamp of the cycle last recorded, for its frames: with
	// Realtime, one wall-clock reading per cycle.
	cycleT     float64
	cycleStamp ros2.Time
	inCycle    bool

	path      string
	order     []topicInfo // channels in the order written
	firstLog  uint64      // the first message's log time
	messages  uint64
	files     map[*scene.Command][]string // modelFiles of the commands not yet recorded
	tfSent    map[string]mgl64.Mat4       // each moving edge as last written on /tf, by child
	tfStamp   uint64                      // log time of the last /tf message
	tfPending []ros2.Transform            // the moving edges as of the cycle, for a frame's stamp
}

type topicInfo struct {
	topic, typ string
	id         uint16
}

// Create starts a recording at path (replacing a file there).
func Create(path string, opts Options) (*Writer, error) {
	comp := mcap.CompressionZSTD
	switch opts.Compression {
	case "", "zstd":
	case "lz4":
		comp = mcap.CompressionLZ4
	default:
		return nil, fmt.Errorf("recording compression %q: want zstd or lz4", opts.Compression)
	}
	if opts.ChunkBytes <= 0 {
		opts.ChunkBytes = 4 << 20
	}
	if opts.ChunkInterval <= 0 {
		opts.ChunkInterval = time.Second
	}
	if opts.Limits.FileBytes == 0 {
		opts.Limits.FileBytes = models.DefaultLimits.FileBytes
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	mo := &mcap.WriterOptions{Chunked: true, ChunkSize: opts.ChunkBytes, Compression: comp, IncludeCRC: true}
	if comp == mcap.CompressionLZ4 {
		// The library's default lz4 level is a high-compression one, six
		// times slower than zstd here: lz4 is chosen for speed.
		mo.CompressionLevel = mcap.CompressionLevelFastest
	}
	mw, err := mcap.NewWriter(f, mo)
	if err == nil {
		err = mw.WriteHeader(&mcap.Header{Profile: ros2.Profile, Library: "simvis"})
	}
	if err == nil {
		var meta []byte
		meta, err = json.Marshal(opts.Meta)
		if err == nil {
			err = mw.WriteMetadata(&mcap.Metadata{Name: MetadataName, Metadata: map[string]string{"json": string(meta)}})
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Writer{f: f, w: mw, mo: mo, opts: opts, schemas: map[string]uint16{}, channels: map[string]uint16{},
		seq: map[uint16]uint32{}, attached: map[string]string{}, current: map[string]bool{},
		flushed: time.Now(), start: time.Now(), path: path}, nil
}

// Stamp returns the stamp of scene time t (seconds): the epoch plus t, or
// the wall clock with Realtime.
func (w *Writer) Stamp(t float64) ros2.Time {
	if w.opts.Realtime {
		return ros2.TimeFromNanos(time.Now().UnixNano())
	}
	return ros2.TimeFromNanos(w.opts.EpochNs + int64(math.Round(t*1e9)))
}

// channel returns the channel of topic, writing its schema and channel
// records the first time: every channel is cdr with a ros2msg schema and
// rosbag2's offered_qos_profiles metadata (ros2.OfferedQoS, ros2.Latched).
func (w *Writer) channel(topic, typ string) (uint16, error) {
	if id, ok := w.channels[topic]; ok {
		return id, nil
	}
	sid, ok := w.schemas[typ]
	if !ok {
		sid = uint16(len(w.schemas) + 1)
		data, err := ros2.Schema(typ)
		if err != nil {
			return 0, err
		}
		if err := w.w.WriteSchema(&mcap.Schema{ID: sid, Name: typ, Encoding: ros2.SchemaEncoding, Data: data}); err != nil {
			return 0, err
		}
		w.schemas[typ] = sid
	}
	if len(w.channels) >= math.MaxUint16-1 {
		return 0, errors.New("recording: too many channels")
	}
	id := uint16(len(w.channels) + 1)
	qos := ros2.OfferedQoS(topic, typ)
	if err := w.w.WriteChannel(&mcap.Channel{ID: id, SchemaID: sid, Topic: topic, MessageEncoding: ros2.MessageEncoding,
		Metadata: map[string]string{"offered_qos_profiles": qos}}); err != nil {
		return 0, err
	}
	w.channels[topic] = id
	w.order = append(w.order, topicInfo{topic, typ, id})
	return id, nil
}

func (w *Writer) write(topic, typ string, data []byte, t ros2.Time) error {
	id, err := w.channel(topic, typ)
	if err != nil {
		return err
	}
	ns := uint64(max(t.Nanos(), 0))
	if ns < w.lastLog {
		ns = w.lastLog // log times in order, also when a wall clock steps back
	}
	w.lastLog = ns
	if w.messages == 0 {
		w.firstLog = ns
	}
	w.messages++
	// The MCAP writer closes a chunk only when it outgrows ChunkSize; a
	// chunk older than ChunkInterval is closed after this message by
	// making its size limit 0 for it (the writer reads its options per
	// message).
	force := time.Since(w.flushed) >= w.opts.ChunkInterval
	if force {
		w.mo.ChunkSize = 0
	}
	err = w.w.WriteMessage(&mcap.Message{ChannelID: id, Sequence: w.seq[id], LogTime: ns, PublishTime: ns, Data: data})
	w.seq[id]++
	if force {
		w.mo.ChunkSize = w.opts.ChunkBytes
		w.flushed = time.Now()
	}
	return err
}

// Cycle records the scene at scene time t (seconds): the change-log
// commands executed since the last call (and the model files they load,
// as attachments), the parameter values that changed, the moving frames on
// /tf and, at the start and whenever frames were added, every static frame
// on /tf_static, the joint states (ros2.JointStates) where a joint
// moved, and each URDF robot's description (ros2.RobotParts) when the
// robot appears. Call it once per cycle, before the cycle's frames.
func (w *Writer) Cycle(s *scene.Scene, t float64) error {
	stamp := w.Stamp(t)
	w.cycleT, w.cycleStamp, w.inCycle = t, stamp, true
	log := s.Log()
	if w.scene != nil && s != w.scene {
		w.replaced(s)
	}
	w.scene = s
	if w.baseDir == "" && w.logged < len(log) {
		if err := w.chooseBase(log[w.logged:]); err != nil {
			return err
		}
	}
	for ; w.logged < len(log); w.logged++ {
		if err := w.change(log[w.logged], stamp); err != nil {
			return err
		}
	}
	if err := w.recordValues(s, stamp); err != nil {
		return err
	}
	static, moving, err := ros2.SceneTransforms(s)
	if err != nil {
		return fmt.Errorf("recording: %w", err)
	}
	if err := w.recordTF(static, moving, stamp); err != nil {
		return err
	}
	if err := w.recordJoints(s, stamp); err != nil {
		return err
	}
	if err := w.recordRobots(s, stamp); err != nil {
		return err
	}
	for _, se := range s.Sensors() {
		if _, err := w.topics.Of(se.Name); err != nil {
			return fmt.Errorf("recording: %w", err)
		}
	}
	return nil
}

// recordTF writes the static transforms on /tf_static when they differ
// from those written last (at the start, and when commands add, remove or
// reattach frames): each message holds them all, as a latched topic of
// depth 1 must. Moving transforms go on /tf when they move: those whose
// value differs from the one last written. A sensor frame recorded at a
// later stamp than the last /tf brings every moving transform again at its
// stamp (Frame), so that tf2 finds the tree at the time of every message
// (it does not extrapolate a dynamic transform past its newest stamp).
func (w *Writer) recordTF(static, moving []ros2.Transform, stamp ros2.Time) error {
	key := ros2.TF(static, ros2.Time{})
	if data := key.Marshal(); !bytes.Equal(data, w.static) {
		w.static = data
		tf := ros2.TF(static, stamp)
		if err := w.write(TopicStatic, ros2.TypeTFMessage, tf.Marshal(), stamp); err != nil {
			return err
		}
	}
	if w.tfSent == nil {
		w.tfSent = map[string]mgl64.Mat4{}
	}
	var changed []ros2.Transform
	for _, t := range moving {
		if last, ok := w.tfSent[t.Child]; !ok || last != t.Matrix {
			changed = append(changed, t)
		}
	}
	w.tfPending = moving
	if len(changed) == 0 {
		return nil
	}
	return w.writeTF(changed, stamp)
}

// recordJoints writes each joint_states topic's message (ros2.JointStates:
// every joint of its robots) in the cycles where one of its positions
// changed, the first cycle included, as /simvis/values records values:
// /tf carries the links' poses every time they move, so a reader needs no
// joint state between changes.
func (w *Writer) recordJoints(s *scene.Scene, stamp ros2.Time) error {
	for _, js := range ros2.JointStates(s, stamp) {
		key := js.Msg
		key.Header.Stamp = ros2.Time{}
		data := key.Marshal()
		if bytes.Equal(data, w.joints[js.Topic]) {
			continue
		}
		if w.joints == nil {
			w.joints = map[string][]byte{}
		}
		w.joints[js.Topic] = data
		if err := w.write(js.Topic, ros2.TypeJointState, js.Msg.Marshal(), stamp); err != nil {
			return err
		}
	}
	return nil
}

// recordRobots writes a URDF robot's description on its robot_description
// topic (transient local, depth 1: a late subscriber gets it) in the cycle
// the robot appears: the first, or one where commands added it or gave its
// topic to another robot. The file is read then, not every cycle.
func (w *Writer) recordRobots(s *scene.Scene, stamp ros2.Time) error {
	for _, r := range ros2.RobotParts(s) {
		key := r.Part + "\n" + r.File
		if w.robots[r.Topic] == key {
			continue
		}
		m, err := r.Description()
		if err != nil {
			return fmt.Errorf("recording: %w", err)
		}
		if w.robots == nil {
			w.robots = map[string]string{}
		}
		w.robots[r.Topic] = key
		if err := w.write(r.Topic, ros2.TypeString, m.Marshal(), stamp); err != nil {
			return err
		}
	}
	return nil
}

func (w *Writer) writeTF(ts []ros2.Transform, stamp ros2.Time) error {
	for _, t := range ts {
		w.tfSent[t.Child] = t.Matrix
	}
	tf := ros2.TF(ts, stamp)
	if err := w.write(TopicTF, ros2.TypeTFMessage, tf.Marshal(), stamp); err != nil {
		return err
	}
	w.tfStamp = w.lastLog
	return nil
}

// replaced handles a scene that took the place of the one recorded (a
// mirror's replica rebuilt after a host restart). A scene whose change log
// starts with every command recorded so far is the same scene, maybe
// further along: only its later commands are recorded. Any other scene
// (the host restarted with another scene file, or without commands a
// client had added) is recorded whole after a Reset marker, with its
// values, static frames, labels and robot descriptions, so that play
// shows what replaced the old one.
func (w *Writer) replaced(s *scene.Scene) {
	log := s.Log()
	same := len(log) >= len(w.recorded)
	for i := 0; same && i < len(w.recorded); i++ {
		key, err := w.dirKey(log[i])
		same = err == nil && key+"\n"+log[i].String() == w.recorded[i]
	}
	if same {
		return
	}
	w.logged, w.recorded, w.reset, w.current = 0, nil, true, map[string]bool{}
	w.names, w.values, w.static, w.labels, w.tfSent, w.joints, w.robots = nil, nil, nil, nil, nil, nil, nil
}

// chooseBase sets the recording's base directory from the first commands
// recorded (the scene file the user started): the deepest directory that
// holds their own directory and every file they load, wherever those lie
// (confinement is for requests, not for the user's own scene). A scene
// whose models lie in its own folder has that folder as its base; the
// showcase, whose world is ../quickstart/world.gltf, has scenes/. Change.Dir
// and the attachments' names are relative to it. The files found are kept
// for change.
func (w *Writer) chooseBase(cmds []*scene.Command) error {
	w.files = map[*scene.Command][]string{}
	var base string
	widen := func(dir string) {
		if base == "" {
			base = dir
			return
		}
		for {
			rel, err := filepath.Rel(base, dir)
			if err == nil && (rel == "." || filepath.IsLocal(rel)) {
				return
			}
			up := filepath.Dir(base)
			if up == base {
				return
			}
			base = up
		}
	}
	for _, c := range cmds {
		dir, err := filepath.Abs(c.Dir)
		if err != nil {
			return err
		}
		widen(dir)
		files, err := modelFiles(c, w.opts.Limits, w.opts.PackagePath)
		if err != nil {
			return fmt.Errorf("recording: %s:%d: %w", c.File, c.Line, err)
		}
		w.files[c] = files
		for _, rel := range files {
			widen(filepath.Dir(filepath.Join(dir, filepath.FromSlash(rel))))
		}
	}
	w.baseDir = base
	return w.writePackages()
}

// writePackages records the package search path entries inside the base
// directory (MetadataPackages), once the base is chosen; entries outside
// it hold no attached file.
func (w *Writer) writePackages() error {
	var inside []string
	for _, p := range w.opts.PackagePath {
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(w.baseDir, abs); err == nil && (rel == "." || filepath.IsLocal(rel)) {
			inside = append(inside, filepath.ToSlash(rel))
		}
	}
	if len(inside) == 0 {
		return nil
	}
	data, err := json.Marshal(inside)
	if err != nil {
		return err
	}
	return w.w.WriteMetadata(&mcap.Metadata{Name: MetadataPackages, Metadata: map[string]string{"json": string(data)}})
}

// dirKey is the directory of c relative to the recording's base (the
// first command's), slash-separated.
func (w *Writer) dirKey(c *scene.Command) (string, error) {
	dir, err := filepath.Abs(c.Dir)
	if err != nil {
		return "", err
	}
	if w.baseDir == "" {
		w.baseDir = dir
	}
	key, err := filepath.Rel(w.baseDir, dir)
	if err != nil || !filepath.IsLocal(key) && key != "." {
		return "", fmt.Errorf("recording: %s:%d: its directory %s is outside the scene's %s, which a recording cannot replay", c.File, c.Line, dir, w.baseDir)
	}
	return filepath.ToSlash(key), nil
}

func (w *Writer) change(c *scene.Command, stamp ros2.Time) error {
	key, err := w.dirKey(c)
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(c.Dir)
	if err != nil {
		return err
	}
	files, ok := w.files[c]
	if ok {
		delete(w.files, c)
	} else if files, err = modelFiles(c, w.opts.Limits, w.opts.PackagePath); err != nil {
		return fmt.Errorf("recording: %s:%d: %w", c.File, c.Line, err)
	}
	for _, rel := range files {
		name := path.Join(key, rel)
		if !filepath.IsLocal(filepath.FromSlash(name)) {
			return fmt.Errorf("recording: %s:%d: model file %s is outside the recording's base directory %s (the directory of the first scene's files), which a recording cannot replay", c.File, c.Line, filepath.Join(dir, filepath.FromSlash(rel)), w.baseDir)
		}
		if w.current[name] {
			continue // this scene's file, read once
		}
		sum, seen := w.attached[name]
		data, err := models.ReadRegular(filepath.Join(dir, filepath.FromSlash(rel)), w.opts.Limits.FileBytes)
		if err != nil {
			return fmt.Errorf("recording: %s:%d: %w", c.File, c.Line, err)
		}
		h := sha256.Sum256(data)
		if seen {
			// A replacing scene may load another file under a recorded
			// name; play has one file per name.
			if sum != string(h[:]) {
				return fmt.Errorf("recording: %s:%d: model file %s differs from the one recorded under that name before the scene was replaced; a recording holds one file per name", c.File, c.Line, name)
			}
			w.current[name] = true
			continue
		}
		ns := uint64(stamp.Nanos())
		if err := w.w.WriteAttachment(&mcap.Attachment{Name: name, MediaType: mediaType(name), LogTime: ns, CreateTime: ns,
			DataSize: uint64(len(data)), Data: bytes.NewReader(data)}); err != nil {
			return err
		}
		w.attached[name] = string(h[:])
		w.current[name] = true
	}
	w.recorded = append(w.recorded, key+"\n"+c.String())
	reset := w.reset
	w.reset = false
	m := ros2.Change{Seq: uint32(w.logged + 1), Source: fmt.Sprintf("%s:%d", filepath.Base(c.File), c.Line), Dir: key, XML: c.String(), Reset: reset}
	return w.write(TopicChanges, ros2.TypeChange, m.Marshal(), stamp)
}

func mediaType(name string) string {
	switch filepath.Ext(name) {
	case ".gltf":
		return "model/gltf+json"
	case ".glb":
		return "model/gltf-binary"
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".stl":
		return "model/stl"
	case ".obj":
		return "model/obj"
	case ".dae":
		return "model/vnd.collada+xml"
	case ".urdf", ".xml":
		return "application/xml"
	}
	return "application/octet-stream"
}

func (w *Writer) recordValues(s *scene.Scene, stamp ros2.Time) error {
	tab := s.Values()
	for _, e := range s.Elements() {
		for i, p := range e.Params {
			for len(w.names) <= e.Start+i {
				w.names = append(w.names, "")
			}
			w.names[e.Start+i] = e.Name + "." + p.Name
		}
	}
	var changed ros2.Values // in parameter table order
	for i, v := range tab {
		if i >= len(w.names) || w.names[i] == "" {
			continue
		}
		if i >= len(w.values) || math.Float64bits(w.values[i]) != math.Float64bits(v) {
			changed.Names = append(changed.Names, w.names[i])
			changed.Values = append(changed.Values, v)
		}
	}
	w.values = append(w.values[:0], tab...)
	if len(changed.Names) == 0 {
		return nil
	}
	return w.write(TopicValues, ros2.TypeValues, changed.Marshal(), stamp)
}

// Frame records a frame rendered at scene time t (seconds) as its ROS 2
// messages (ros2.FrameMessages) under its sensor's namespace.
func (w *Writer) Frame(f *sensors.Frame, t float64) error {
	ns, ok := w.topics.Known(f.Sensor)
	if !ok {
		return fmt.Errorf("recording: sensor %q is not in the scene Cycle saw", f.Sensor)
	}
	stamp := w.cycleStamp
	if !w.inCycle || t != w.cycleT {
		stamp = w.Stamp(t)
	}
	msgs, err := ros2.FrameMessages(f, ns, stamp)
	if err != nil {
		return err
	}
	if len(w.tfPending) > 0 && uint64(max(stamp.Nanos(), 0)) > w.tfStamp {
		if err := w.writeTF(w.tfPending, stamp); err != nil {
			return err
		}
	}
	if sg, ok := f.Payload().(*sensors.SegmentationImage); ok {
		if err := w.recordLabels(sg, ns, stamp); err != nil {
			return err
		}
	}
	if w.opts.Descriptions {
		info, _, err := f.Encode() // what the host's NATS publisher sends
		if err != nil {
			return fmt.Errorf("recording: sensor %q: %w", f.Sensor, err)
		}
		d := ros2.FrameDescription{Sensor: f.Sensor, Kind: f.Kind, Info: string(info)}
		if err := w.write(ns+ros2.SuffixDescription, ros2.TypeFrameDescription, d.Marshal(), stamp); err != nil {
			return err
		}
	}
	for _, m := range msgs {
		if err := w.write(m.Topic, m.Type, m.Data, stamp); err != nil {
			return err
		}
	}
	return nil
}

// recordLabels writes a segmentation frame's labels on NS/labels when they
// differ from those last written for its sensor.
func (w *Writer) recordLabels(sg *sensors.SegmentationImage, ns string, stamp ros2.Time) error {
	l := ros2.Labels{Sensor: sg.Labels.Sensor}
	for id, in := range sg.Labels.Instances {
		n, err := strconv.Atoi(id)
		if err != nil || n < 1 || n > math.MaxUint16 || in.ClassID < 0 || in.ClassID > math.MaxUint16 {
			return fmt.Errorf("recording: sensor %q: instance %q (class id %d) out of the uint16 range", l.Sensor, id, in.ClassID)
		}
		l.Instances = append(l.Instances, ros2.LabelInstance{ID: uint16(n), Name: in.Name, ClassName: in.Class, ClassID: uint16(in.ClassID)})
	}
	for id, name := range sg.Labels.Classes {
		n, err := strconv.Atoi(id)
		if err != nil || n < 1 || n > math.MaxUint16 {
			return fmt.Errorf("recording: sensor %q: class %q out of the uint16 range", l.Sensor, id)
		}
		l.Classes = append(l.Classes, ros2.LabelClass{ID: uint16(n), Name: name})
	}
	// Sorted by id: equal labels, equal bytes.
	sort.Slice(l.Instances, func(i, j int) bool { return l.Instances[i].ID < l.Instances[j].ID })
	sort.Slice(l.Classes, func(i, j int) bool { return l.Classes[i].ID < l.Classes[j].ID })
	data := l.Marshal()
	if w.labels == nil {
		w.labels = map[string][]byte{}
	}
	if bytes.Equal(w.labels[l.Sensor], data) {
		return nil
	}
	w.labels[l.Sensor] = data
	return w.write(ns+SuffixLabels, TypeLabels, data, stamp)
}

// Close ends the recording: the last chunk, rosbag2's metadata record,
// the summary and the index (its statistics' start time made the first
// message's: see fixStatistics).
func (w *Writer) Close() error {
	err := w.w.WriteMetadata(&mcap.Metadata{Name: MetadataROSBag2, Metadata: map[string]string{"serialized_metadata": w.bagMetadata()}})
	if cerr := w.w.Close(); err == nil {
		err = cerr
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil && w.messages > 0 {
		err = fixStatistics(w.path, w.firstLog)
	}
	return err
}

// Abort ends a recording that failed: the file is closed and removed, so
// that no half recording is left behind.
func (w *Writer) Abort() {
	w.w.Close()
	w.f.Close()
	os.Remove(w.path)
}
