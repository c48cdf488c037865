package ros2

import "fmt"

// simvis's own streams, as ROS 2 messages of the package simvis_msgs,
// whose ros2msg definitions every recording carries in its schemas: ROS 2
// readers decode them like any message (rosbags, Foxglove), and a player
// without the package's type support skips them (rosbag2 warns and
// ignores a topic whose type it cannot load).
const (
	TypeChange        = "simvis_msgs/msg/Change"
	TypeValues        = "simvis_msgs/msg/Values"
	TypeLabels        = "simvis_msgs/msg/Labels"
	TypeLabelInstance = "simvis_msgs/msg/LabelInstance"
	TypeLabelClass    = "simvis_msgs/msg/LabelClass"
)

func init() {
	defs[TypeChange] = msgDef{"uint32 seq\nstring source\nstring dir\nstring xml\nbool reset\n", nil}
	defs[TypeValues] = msgDef{"string[] names\nfloat64[] values\n", nil}
	defs[TypeLabelInstance] = msgDef{"uint16 id\nstring name\nstring class_name\nuint16 class_id\n", nil}
	defs[TypeLabelClass] = msgDef{"uint16 id\nstring name\n", nil}
	defs[TypeLabels] = msgDef{"string sensor\nsimvis_msgs/LabelInstance[] instances\nsimvis_msgs/LabelClass[] classes\n",
		[]string{TypeLabelInstance, TypeLabelClass}}
}

// Change is one change-log command (simvis_msgs/msg/Change).
type Change struct {
	Seq    uint32
	Source string // FILE:LINE
	Dir    string // its directory, relative to the recording's base
	XML    string
	Reset  bool // the first command of a scene that replaced the one before
}

// Marshal encodes the message as CDR.
func (m *Change) Marshal() []byte {
	w := newWriter(32 + len(m.Source) + len(m.Dir) + len(m.XML))
	w.u32(m.Seq)
	w.str(m.Source)
	w.str(m.Dir)
	w.str(m.XML)
	w.boolean(m.Reset)
	return w.b
}

// DecodeChange reads a Change.
func DecodeChange(data []byte) (*Change, error) {
	r, err := newReader(data)
	if err != nil {
		return nil, err
	}
	m := &Change{Seq: r.u32(), Source: r.str(), Dir: r.str(), XML: r.str()}
	m.Reset = r.boolean()
	return m, r.done(TypeChange)
}

// Values are parameter values by ELEMENT.PARAM name (simvis_msgs/msg/Values):
// Names[i] has Values[i].
type Values struct {
	Names  []string
	Values []float64
}

// Marshal encodes the message as CDR.
func (m *Values) Marshal() []byte {
	w := newWriter(16 * len(m.Names))
	w.u32(uint32(len(m.Names)))
	for _, n := range m.Names {
		w.str(n)
	}
	w.f64seq(m.Values)
	return w.b
}

// DecodeValues reads a Values, refusing names and values of different counts.
func DecodeValues(data []byte) (*Values, error) {
	r, err := newReader(data)
	if err != nil {
		return nil, err
	}
	m := &Values{}
	n := r.count(5) // the least a string takes
	for i := 0; i < n && r.err == nil; i++ {
		m.Names = append(m.Names, r.str())
	}
	k := r.count(8)
	for i := 0; i < k && r.err == nil; i++ {
		m.Values = append(m.Values, r.f64())
	}
	if err := r.done(TypeValues); err != nil {
		return nil, err
	}
	if len(m.Names) != len(m.Values) {
		return nil, fmt.Errorf("ros2: %s: %d names, %d values", TypeValues, len(m.Names), len(m.Values))
	}
	return m, nil
}

// LabelInstance is one instance id of a segmentation sensor's labels.
type LabelInstance struct {
	ID        uint16
	Name      string // the part or element
	ClassName string // "" none
	ClassID   uint16 // 0 none
}

// LabelClass is one class id of a segmentation sensor's labels.
type LabelClass struct {
	ID   uint16
	Name string
}

// Labels are what a segmentation sensor's ids mean (simvis_msgs/msg/Labels).
type Labels struct {
	Sensor    string
	Instances []LabelInstance
	Classes   []LabelClass
}

// Marshal encodes the message as CDR.
func (m *Labels) Marshal() []byte {
	w := newWriter(64 + 32*len(m.Instances) + 16*len(m.Classes))
	w.str(m.Sensor)
	w.u32(uint32(len(m.Instances)))
	for _, in := range m.Instances {
		w.u16(in.ID)
		w.str(in.Name)
		w.str(in.ClassName)
		w.u16(in.ClassID)
	}
	w.u32(uint32(len(m.Classes)))
	for _, c := range m.Classes {
		w.u16(c.ID)
		w.str(c.Name)
	}
	return w.b
}

// DecodeLabels reads a Labels.
func DecodeLabels(data []byte) (*Labels, error) {
	r, err := newReader(data)
	if err != nil {
		return nil, err
	}
	m := &Labels{Sensor: r.str()}
	n := r.count(14)
	for i := 0; i < n && r.err == nil; i++ {
		m.Instances = append(m.Instances, LabelInstance{ID: r.u16(), Name: r.str(), ClassName: r.str(), ClassID: r.u16()})
	}
	k := r.count(6)
	for i := 0; i < k && r.err == nil; i++ {
		m.Classes = append(m.Classes, LabelClass{ID: r.u16(), Name: r.str()})
	}
	return m, r.done(TypeLabels)
}

// TypeFrameDescription is the schema name of FrameDescription.
const TypeFrameDescription = "simvis_msgs/msg/FrameDescription"

func init() {
	defs[TypeFrameDescription] = msgDef{"string sensor\nstring kind\nstring info\n", nil}
}

// FrameDescription is what a frame's ROS 2 messages cannot hold of what
// the host published (simvis_msgs/msg/FrameDescription): the sensor's
// simvis name (topics are made valid ROS names, which loses it), the
// frame kind and the JSON description sensors.Frame.Encode gave it, with
// its stamp, pose and float64 values (a LaserScan or Range holds float32).
// With the binary payload that FramePayload rebuilds from the frame's
// messages, a player republishes the frame byte for byte.
type FrameDescription struct {
	Sensor, Kind, Info string
}

// Marshal encodes the message as CDR.
func (m *FrameDescription) Marshal() []byte {
	w := newWriter(16 + len(m.Sensor) + len(m.Kind) + len(m.Info))
	w.str(m.Sensor)
	w.str(m.Kind)
	w.str(m.Info)
	return w.b
}

// DecodeFrameDescription reads a FrameDescription.
func DecodeFrameDescription(data []byte) (*FrameDescription, error) {
	r, err := newReader(data)
	if err != nil {
		return nil, err
	}
	m := &FrameDescription{Sensor: r.str(), Kind: r.str(), Info: r.str()}
	return m, r.done(TypeFrameDescription)
}
