package sensors

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

// Non-finite numbers in outputs. JSON has no NaN or Inf: every float a
// sensor's JSON carries that is not finite is written as null (a range:
// +Inf no return, as REP-117 has it, with too_close listing -Inf), so
// that encoding an output never fails on a number, whatever a scene's
// poses compose to.

// jsonFloat is a float64 that encodes as null where it is not finite.
type jsonFloat float64

// MarshalJSON writes the number as encoding/json does, or null.
func (f jsonFloat) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	if f == 0 {
		f = 0 // no "-0" (a pitch of -0 from a rotation's decomposition)
	}
	return json.Marshal(float64(f))
}

// jsonPose is scene.Pose as JSON, null for a non-finite field.
type jsonPose struct {
	X     jsonFloat `json:"x"`
	Y     jsonFloat `json:"y"`
	Z     jsonFloat `json:"z"`
	Roll  jsonFloat `json:"roll"`
	Pitch jsonFloat `json:"pitch"`
	Yaw   jsonFloat `json:"yaw"`
}

func finitePose(p scene.Pose) jsonPose {
	return jsonPose{jsonFloat(p.X), jsonFloat(p.Y), jsonFloat(p.Z), jsonFloat(p.Roll), jsonFloat(p.Pitch), jsonFloat(p.Yaw)}
}

// MarshalJSON writes the frame's info with the calibration as
// sensor_msgs/CameraInfo has it and the optical frame's pose beside the
// body's; non-finite fields are null.
func (fi FrameInfo) MarshalJSON() ([]byte, error) {
	type plain FrameInfo
	return json.Marshal(struct {
		plain
		cameraInfoJSON
		Pose        jsonPose  `json:"pose"`
		OpticalPose jsonPose  `json:"optical_pose"`
		Near        jsonFloat `json:"near,omitempty"`
		Far         jsonFloat `json:"far,omitempty"`
	}{plain(fi), fi.Intrinsics.CameraInfo().json(), finitePose(fi.Pose), finitePose(fi.OpticalPose()), jsonFloat(fi.Near), jsonFloat(fi.Far)})
}

// cameraInfoJSON is CameraInfo with the field names of
// sensor_msgs/CameraInfo and null for non-finite numbers.
type cameraInfoJSON struct {
	Width           int         `json:"width"`
	Height          int         `json:"height"`
	DistortionModel string      `json:"distortion_model"`
	D               []jsonFloat `json:"D"`
	K               []jsonFloat `json:"K"`
	R               []jsonFloat `json:"R"`
	P               []jsonFloat `json:"P"`
}

func (ci CameraInfo) json() cameraInfoJSON {
	return cameraInfoJSON{ci.Width, ci.Height, ci.DistortionModel, jsonFloats(ci.D), jsonFloats(ci.K[:]), jsonFloats(ci.R[:]), jsonFloats(ci.P[:])}
}

// MarshalJSON writes the calibration with sensor_msgs/CameraInfo's field
// names (width, height, distortion_model, D, K, R, P).
func (ci CameraInfo) MarshalJSON() ([]byte, error) { return json.Marshal(ci.json()) }

func jsonFloats(v []float64) []jsonFloat {
	out := make([]jsonFloat, len(v))
	for i, f := range v {
		out[i] = jsonFloat(f)
	}
	return out
}

// checkWorld refuses to measure from a world pose that is not finite (a
// scene whose poses overflowed): nothing measured from it would mean
// anything, and a clear error beats images and ranges of garbage.
func checkWorld(sensor string, world mgl64.Mat4) error {
	for _, v := range world {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("sensor %q: its world pose is not finite (%s): the scene's poses overflow", sensor, scene.PoseFromMatrix(world))
		}
	}
	return nil
}

// recovered turns a panic while rendering a sensor into an error, so that
// one sensor's failure is reported like any other and never takes its
// program (a host cycling many sensors) down.
func recovered(sensor string, err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("sensor %q failed: %v (a bug: please report it with the scene)", sensor, p)
	}
}
