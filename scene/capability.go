package scene

import (
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
)

// The interfaces below are what elements and sensors declare about
// themselves for the code that carries, records, exports or shows a scene
// (transports, recordings, viewers, Export). Those ask the element or
// sensor, never a table of type names, so that a type registered from
// outside simvis takes part by implementing them, like image.Image's
// optional interfaces. Each is optional: a type that does not implement
// one is treated as before the capability existed (not drawn as an
// overlay, not followed, no frames of a known kind, ...).

// FrameKinder is a sensor that renders frames of one kind ("image",
// "depth", "scan", "psd", "cloud", "segmentation" for the built-in
// types): transports name the kind in their description of the scene
// (NATS's desc) and recordings route a sensor's topics by it.
type FrameKinder interface {
	FrameKind() string
}

// CameraExporter is a sensor that sees as a pinhole camera: Export writes
// it as a glTF perspective camera. ExportCamera returns nil where the
// sensor has none to give.
type CameraExporter interface {
	ExportCamera() *models.Camera
}

// Ranger is a sensor whose frames carry range returns (HasReturns true):
// elements that draw a sensor's returns (the scan element) accept it.
type Ranger interface {
	HasReturns() bool
}

// Kinematic is an element whose values only move meshes (a joint, a pose;
// Kinematic true), never change how one looks: a viewer may keep the
// meshes that stand still cached while such values change.
type Kinematic interface {
	Kinematic() bool
}

// Mobile is an element that moves a robot through the world (a pose;
// Mobile true): a viewer asked to follow the robot without a frame
// follows the first such element's insertion point.
type Mobile interface {
	Mobile() bool
}

// JointStater is an element that is one joint of a robot (a URDF joint):
// recordings and Foxglove publish its position on /joint_states
// (sensor_msgs/JointState) under Name, the joint's name in the robot's
// description (URDF), which ROS tools match against it. Position is in
// radians (revolute, continuous) or meters (prismatic); a joint that
// mimics another gives the position it follows.
type JointStater interface {
	JointState() (name string, position float64)
}

// Overlayer is an element drawn as primitives over the scene (points,
// lines, text): transports that draw a scene as primitives (Foxglove's
// overlays) ask it for them, given its run of the parameter table.
type Overlayer interface {
	Overlay(values []float64) Overlay
}

// Overlay is what an overlay element draws, in its insertion point's
// frame.
type Overlay struct {
	Cubes []OverlayCube
	Lines []OverlayLines
	Texts []OverlayText
}

// OverlayCube is an axis-aligned cube of edge Size meters (a point, a
// graph node).
type OverlayCube struct {
	Center mgl64.Vec3
	Size   float64
	Color  [3]float32
}

// OverlayLines is a line list: segment i joins Points[2i] and
// Points[2i+1]; Width is in pixels, whatever the distance.
type OverlayLines struct {
	Points []mgl64.Vec3
	Width  float64
	Color  [3]float32
}

// OverlayText is a text facing the viewer, Height meters tall, at At.
type OverlayText struct {
	At     mgl64.Vec3
	Height float64
	Color  [3]float32
	Text   string
}

// Sighted is a sensor that tells viewers what it sees: the desktop viewer
// and the web page draw its field-of-view lines from it.
type Sighted interface {
	FieldOfView() FieldOfView
}

// FieldOfView is what a sensor sees, in its own frame (x forward, z up),
// in degrees: a pinhole camera's frustum (HFOV and VFOV above 0), or a
// scanner's beams, swept from AngleMin to AngleMax around z (from +x
// toward +y) at each of Elevations (up from the x-y plane; none: in the
// plane). A single beam along +x has all zero.
type FieldOfView struct {
	HFOV       float64   `json:"hfov,omitempty"`
	VFOV       float64   `json:"vfov,omitempty"`
	AngleMin   float64   `json:"angle_min,omitempty"`
	AngleMax   float64   `json:"angle_max,omitempty"`
	Elevations []float64 `json:"elevations,omitempty"`
}

// Thin returns f with at most n elevations (n at least 2): the lowest, the
// highest and evenly chosen ones between, what a viewer draws of a
// scanner with many layers.
func (f FieldOfView) Thin(n int) FieldOfView {
	n = max(n, 2)
	if len(f.Elevations) <= n {
		return f
	}
	picked := make([]float64, n)
	for i := range picked {
		picked[i] = f.Elevations[i*(len(f.Elevations)-1)/(n-1)]
	}
	f.Elevations = picked
	return f
}
