package ros2

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// TypeString is std_msgs/msg/String, the type of a robot description.
const TypeString = "std_msgs/msg/String"

// SuffixRobotDescription is the robot description's topic under a robot's
// namespace ("" for the robot whose frames are its link names:
// /robot_description), as joint states are (SuffixJointStates).
const SuffixRobotDescription = "/robot_description"

func init() {
	defs[TypeString] = msgDef{"string data\n", nil}
}

// String is std_msgs/msg/String.
type String struct{ Data string }

// Marshal returns the message as CDR with its encapsulation header.
func (m *String) Marshal() []byte {
	w := newWriter(8 + len(m.Data))
	w.str(m.Data)
	return w.b
}

// DecodeString reads a String.
func DecodeString(data []byte) (*String, error) {
	r, err := newReader(data)
	if err != nil {
		return nil, err
	}
	m := &String{Data: r.str()}
	return m, r.done(TypeString)
}

// IsRobotDescription reports whether a channel of topic and message type
// typ is a robot description: a Latched topic, which recordings offer as
// transient local, as robot_state_publisher offers /robot_description, and
// play leaves to the rebuilt scene to publish.
func IsRobotDescription(topic, typ string) bool {
	return typ == TypeString && strings.HasSuffix(topic, SuffixRobotDescription)
}

// RobotPart is a URDF robot part of a scene and the topic its description
// goes on.
type RobotPart struct {
	Part  string // the part's name
	File  string // its URDF file, resolved against its command's directory
	Topic string // SuffixRobotDescription under the robot's namespace
	limit int64  // the bytes the scene reads of one model file at most
}

// RobotParts lists the scene's URDF robot parts in the order of its parts,
// with their description topics: /robot_description for a robot whose
// links are named by their link names, NS/robot_description for one whose
// links keep its part's prefix (NS as for its joint states: see
// JointStates). It reads no file.
func RobotParts(s *scene.Scene) []RobotPart {
	// Most scenes hold no URDF: they skip naming the frames.
	urdf := false
	for _, p := range s.Parts() {
		urdf = urdf || strings.EqualFold(filepath.Ext(p.File), ".urdf")
	}
	if !urdf {
		return nil
	}
	nm := nameFrames(s)
	limit := s.Limits().Model.FileBytes
	var out []RobotPart
	for _, p := range s.Parts() {
		// nameFrames gives a namespace to every part whose links are a
		// robot's, and to no other.
		ns, ok := nm.ns[p.Name]
		if !ok {
			continue
		}
		out = append(out, RobotPart{Part: p.Name, File: p.File, Topic: ns + SuffixRobotDescription, limit: limit})
	}
	return out
}

// Description reads the robot's URDF file whole, as the part loaded it,
// bounded by the scene's model FileBytes: the String on r.Topic.
func (r RobotPart) Description() (String, error) {
	limit := r.limit
	if limit == 0 {
		limit = models.DefaultLimits.FileBytes
	}
	data, err := models.ReadRegular(r.File, limit)
	if err != nil {
		return String{}, fmt.Errorf("robot description of part %q: %w", r.Part, err)
	}
	return String{Data: string(data)}, nil
}

// TopicString is one String message and its topic.
type TopicString struct {
	Topic string
	Msg   String
}

// RobotDescriptions returns the description of each of the scene's URDF
// robot parts (RobotParts), in the order of its parts, reading their
// files; none for a scene without URDF parts.
func RobotDescriptions(s *scene.Scene) ([]TopicString, error) {
	var out []TopicString
	for _, r := range RobotParts(s) {
		m, err := r.Description()
		if err != nil {
			return nil, err
		}
		out = append(out, TopicString{Topic: r.Topic, Msg: m})
	}
	return out, nil
}
