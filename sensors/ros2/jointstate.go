package ros2

// TypeJointState is sensor_msgs/msg/JointState, what robot_state_publisher
// and RViz read a robot's joint positions from.
const TypeJointState = "sensor_msgs/msg/JointState"

// SuffixJointStates is the joint states' topic under a robot's namespace
// ("" for the robot whose frames are its link names: /joint_states).
const SuffixJointStates = "/joint_states"

func init() {
	defs[TypeJointState] = msgDef{"std_msgs/Header header\nstring[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n",
		[]string{TypeHeader}}
}

// JointState is sensor_msgs/msg/JointState: Name[i] is at Position[i]
// (radians, meters). simvis knows positions only: Velocity and Effort
// stay empty, which the message allows.
type JointState struct {
	Header           Header
	Name             []string
	Position         []float64
	Velocity, Effort []float64
}

// Marshal returns the message as CDR with its encapsulation header.
func (m *JointState) Marshal() []byte {
	w := newWriter(64 + 24*len(m.Name))
	w.header(m.Header)
	w.u32(uint32(len(m.Name)))
	for _, n := range m.Name {
		w.str(n)
	}
	w.f64seq(m.Position)
	w.f64seq(m.Velocity)
	w.f64seq(m.Effort)
	return w.b
}

// DecodeJointState reads a JointState.
func DecodeJointState(data []byte) (*JointState, error) {
	r, err := newReader(data)
	if err != nil {
		return nil, err
	}
	m := &JointState{Header: r.header()}
	n := r.count(5) // the least a name takes: its length and NUL
	for i := 0; i < n && r.err == nil; i++ {
		m.Name = append(m.Name, r.str())
	}
	m.Position = r.f64seq()
	m.Velocity = r.f64seq()
	m.Effort = r.f64seq()
	return m, r.done(TypeJointState)
}
