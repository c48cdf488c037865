package main

import (
	"bytes"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
)

// armMeshes are the meshes of the example URDF robot (scenes/arm), a
// mobile manipulator: a base on wheels, a four-joint arm, a two-finger
// gripper and a mast for a 3D lidar. Each mesh is in its link's frame, in
// meters; written as binary STL, which keeps no colours (the URDF's
// materials give them), or as Collada (.dae) with its own colours.
func armMeshes() map[string]*models.Model {
	one := func(name string, parts ...func(m *models.Model)) *models.Model {
		m := models.NewModel(name)
		for _, p := range parts {
			p(m)
		}
		return m
	}
	node := func(local mgl64.Mat4, mesh *models.Mesh) func(m *models.Model) {
		return func(m *models.Model) { m.AddNode(nil, mesh.Name, local, mesh) }
	}
	white := [4]float32{1, 1, 1, 1}
	roll := mgl64.HomogRotate3DX(mgl64.DegToRad(90))
	pitch := mgl64.HomogRotate3DY(mgl64.DegToRad(90))
	return map[string]*models.Model{
		// The base: a chassis with a rounded front, the arm's pedestal on top.
		"base.stl": one("base",
			node(at(0, 0, 0.12), models.Box("chassis", 0.6, 0.44, 0.16, white)),
			node(at(0.3, 0, 0.12), models.Cylinder("bumper", 0.22, 0.16, 32, white)),
			node(at(0.15, 0, 0.25), models.Cylinder("pedestal", 0.09, 0.1, 32, white))),
		"wheel.stl": one("wheel", node(roll, models.Cylinder("wheel", 0.08, 0.05, 32, white))),
		// The arm's links, each along its own +z (upper arm, forearm) or +x.
		"shoulder.stl": one("shoulder",
			node(at(0, 0, 0.05), models.Cylinder("turret", 0.07, 0.1, 32, white)),
			node(at(0, 0, 0.12).Mul4(roll), models.Cylinder("shoulder_hub", 0.06, 0.14, 32, white))),
		"upper_arm.stl": one("upper_arm",
			node(at(0, 0, 0.175), models.Box("upper_arm", 0.07, 0.07, 0.35, white)),
			node(at(0, 0, 0.35).Mul4(roll), models.Cylinder("elbow_hub", 0.05, 0.1, 32, white))),
		"forearm.stl": one("forearm",
			node(at(0, 0, 0.15), models.Box("forearm", 0.055, 0.055, 0.3, white)),
			node(at(0, 0, 0.3).Mul4(roll), models.Cylinder("wrist_hub", 0.04, 0.08, 32, white))),
		// The hand is Collada (colladaBytes: y up, millimetres), coloured
		// by its own materials: a steel palm on a dark wrist flange.
		"hand.dae": one("hand",
			node(at(0, 0, 0.03), models.Box("palm", 0.1, 0.04, 0.06, [4]float32{0.6, 0.62, 0.65, 1})),
			node(at(0, 0, 0.004).Mul4(mgl64.HomogRotate3DZ(mgl64.DegToRad(15))), models.Cylinder("flange", 0.035, 0.008, 24, [4]float32{0.2, 0.2, 0.22, 1}))),
		"finger.stl": one("finger", node(at(0, 0, 0.04), models.Box("finger", 0.015, 0.02, 0.08, white))),
		"mast.stl": one("mast",
			node(at(0, 0, 0.2), models.Cylinder("mast", 0.025, 0.4, 24, white)),
			node(at(0, 0, 0.41).Mul4(pitch), models.Box("lidar_plate", 0.02, 0.12, 0.12, white))),
	}
}

// stlBytes is the binary STL of m.
func stlBytes(m *models.Model) ([]byte, error) {
	var b bytes.Buffer
	err := models.WriteSTL(&b, m)
	return b.Bytes(), err
}
