package ros2

import (
	"path/filepath"
	"strings"

	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// URDF robots on tf (docs/urdf.md, "tf and joint states"): a robot's links
// are frames of their own in ROS, named by the robot description, so a
// robot's link LINK (simvis frame R/LINK of part R) is on tf as LINK, as
// robot_state_publisher names it, unless that name is taken. Then, as ROS
// runs several robots (a namespace and a frame_prefix each), all of the
// robot's links keep their simvis names R/LINK (frame_prefix "R/") and its
// joint states go on /R/joint_states instead of /joint_states. Taken means:
// the id of another frame (every frame but a link keeps the id FrameID
// gives it, so scenes without robots are named as before), a link or joint
// name of a robot whose part was added earlier (robots are named in the
// order of the scene's parts: one added later never renames an earlier
// one), or a name twice in one robot.

// naming is how a scene's frames are named on tf and where its joints'
// states go.
type naming struct {
	ids   map[string]string // tf id by simvis frame name, where it is not FrameID's
	robot map[string]string // the robot (part name) of each link, by frame name
	ns    map[string]string // each robot's topic namespace ("" for /joint_states)
}

// id returns the tf frame id of a simvis frame.
func (nm *naming) id(name string) string {
	if id, ok := nm.ids[name]; ok {
		return id
	}
	return FrameID(name)
}

// isRobot reports whether a model is a robot whose node names are frame
// names in their own right: a URDF's links. The model does not say so
// itself (models.Model has no field for it; the URDF reader setting one
// would pay this off).
func isRobot(m *models.Model) bool {
	return m != nil && strings.EqualFold(filepath.Ext(m.Path), ".urdf")
}

// linkOf returns the robot (part name) and URDF link name of the
// insertion point n named name, or "" where it is no robot's link: an
// insertion point of a URDF part's model, below its model node with only
// the model's nodes and elements' transforms between.
func linkOf(n *scene.Node, name string) (robot, link string) {
	link, ok := strings.CutPrefix(name, n.Owner+"/")
	if n.Owner == "" || !ok || strings.Contains(link, "/") {
		return "", ""
	}
	for p := n.Parent(); p != nil; p = p.Parent() {
		switch p.Kind {
		case scene.KindModelNode, scene.KindTransform, scene.KindProperty, scene.KindCustom:
			continue
		case scene.KindModel:
			if isRobot(p.Model()) {
				return n.Owner, link
			}
		}
		break
	}
	return "", ""
}

// nameFrames names the scene's frames and joints (see above).
func nameFrames(s *scene.Scene) *naming {
	nm := &naming{ids: map[string]string{}, robot: map[string]string{}, ns: map[string]string{}}
	taken := map[string]bool{scene.WorldFrame: true}
	links := map[string][]string{} // each robot's link frames, in traversal order
	for _, name := range s.InsertionPoints() {
		n, ok := s.InsertionPoint(name)
		if !ok {
			continue
		}
		if r, _ := linkOf(n, name); r != "" {
			nm.robot[name] = r
			links[r] = append(links[r], name)
			continue
		}
		taken[FrameID(name)] = true
	}
	if len(links) == 0 {
		return nm
	}
	for _, se := range s.Sensors() {
		taken[FrameID(se.Name)] = true
		if _, ok := se.Sensor.(interface{ Intrinsics() sensors.Intrinsics }); ok {
			taken[OpticalFrame(se.Name)] = true
		}
	}
	joints := map[string][]string{} // each robot's joint names
	jointTaken := map[string]bool{}
	for _, e := range s.Elements() {
		js, ok := e.Element.(scene.JointStater)
		if !ok {
			continue
		}
		name, _ := js.JointState()
		if r := nm.robot[e.At]; r != "" {
			joints[r] = append(joints[r], name)
		} else {
			jointTaken[name] = true // a joint of no robot: on /joint_states as it is
		}
	}
	for _, p := range s.Parts() {
		frames, ok := links[p.Name]
		if !ok {
			continue
		}
		delete(links, p.Name)
		free := true
		ids := map[string]bool{}
		for _, f := range frames {
			id := FrameID(f[len(p.Name)+1:])
			free = free && !taken[id] && !ids[id]
			ids[id] = true
		}
		names := map[string]bool{}
		for _, j := range joints[p.Name] {
			free = free && !jointTaken[j] && !names[j]
			names[j] = true
		}
		if !free {
			nm.ns[p.Name] = SensorTopic(p.Name)
			continue
		}
		for _, f := range frames {
			id := FrameID(f[len(p.Name)+1:])
			nm.ids[f], taken[id] = id, true
		}
		for j := range names {
			jointTaken[j] = true
		}
		nm.ns[p.Name] = ""
	}
	// Robots of no part listed (none expected) keep their simvis names.
	for r := range links {
		nm.ns[r] = SensorTopic(r)
	}
	return nm
}

// FrameIDs returns the tf frame id of each of the scene's frames by simvis
// name (insertion points and sensors): FrameID's, but a URDF robot's links
// by their link names (see SceneTree).
func FrameIDs(s *scene.Scene) map[string]string {
	nm := nameFrames(s)
	out := map[string]string{}
	for _, name := range s.FrameNames() {
		out[name] = nm.id(name)
	}
	return out
}

// TopicJointState is one joint_states message and its topic.
type TopicJointState struct {
	Topic string
	Msg   JointState
}

// JointStates returns the positions of the scene's joints (elements that
// are scene.JointStater), stamped stamp, one message per topic:
// /joint_states for the joints of robots whose links are named by their
// link names (and joints of no robot), NS/joint_states for a robot whose
// links keep the prefix of its part (NS its namespace, SensorTopic of the
// part). Names are as the robot description gives them, positions in
// radians and meters, in the order of the scene's elements; none for a
// scene without joints.
func JointStates(s *scene.Scene, stamp Time) []TopicJointState {
	var nm *naming
	var out []TopicJointState
	at := map[string]int{}
	for _, e := range s.Elements() {
		js, ok := e.Element.(scene.JointStater)
		if !ok {
			continue
		}
		if nm == nil {
			nm = nameFrames(s)
		}
		topic := nm.ns[nm.robot[e.At]] + SuffixJointStates
		i, ok := at[topic]
		if !ok {
			i = len(out)
			at[topic] = i
			out = append(out, TopicJointState{Topic: topic, Msg: JointState{Header: Header{Stamp: stamp},
				Velocity: []float64{}, Effort: []float64{}}})
		}
		name, q := js.JointState()
		m := &out[i].Msg
		m.Name = append(m.Name, name)
		m.Position = append(m.Position, q)
	}
	return out
}
