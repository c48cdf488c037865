// Command generate writes the glTF assets of the bundled example scenes from
// code, so they are reproducible and reviewable:
//
//	go run ./scenes/generate [-o scenes]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
)

func main() {
	out := flag.String("o", "scenes", "directory holding the example scene folders")
	flag.Parse()
	if err := write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

// assets maps each asset's path below the scenes directory to its model.
func assets() map[string]*models.Model {
	return map[string]*models.Model{
		"quickstart/world.gltf": world(),
		"quickstart/robot.gltf": robot(),
		"door/door.gltf":        door(),
	}
}

func write(dir string) error {
	for name, m := range assets() {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := models.Write(path, m); err != nil {
			return err
		}
	}
	return nil
}

var (
	floorGray = [4]float32{0.55, 0.55, 0.52, 1}
	wallWhite = [4]float32{0.9, 0.88, 0.82, 1}
	wood      = [4]float32{0.6, 0.42, 0.25, 1}
	red       = [4]float32{0.85, 0.1, 0.1, 1}
	blue      = [4]float32{0.15, 0.3, 0.8, 1}
	black     = [4]float32{0.1, 0.1, 0.1, 1}
	steel     = [4]float32{0.6, 0.62, 0.65, 1}
)

func at(x, y, z float64) mgl64.Mat4 { return mgl64.Translate3D(x, y, z) }

// world is a 10 m x 8 m room, 2.5 m high, with a table and a red crate. Its
// insertion point TABLE_TOP is the table's surface.
func world() *models.Model {
	m := models.NewModel("world")
	m.AddNode(nil, "floor", at(0, 0, 0), models.Plane("floor", 10, 8, floorGray))
	walls := m.AddNode(nil, "walls", mgl64.Ident4(), nil)
	wallX := models.Box("wall_x", 10, 0.1, 2.5, wallWhite)
	wallY := models.Box("wall_y", 0.1, 8, 2.5, wallWhite)
	m.AddNode(walls, "wall_north", at(0, 4.05, 1.25), wallX)
	m.AddNode(walls, "wall_south", at(0, -4.05, 1.25), wallX)
	m.AddNode(walls, "wall_east", at(5.05, 0, 1.25), wallY)
	m.AddNode(walls, "wall_west", at(-5.05, 0, 1.25), wallY)

	table := m.AddNode(nil, "table", at(2, 1, 0), nil)
	m.AddNode(table, "table_top", at(0, 0, 0.73), models.Box("table_top", 1.4, 0.8, 0.04, wood))
	leg := models.Box("table_leg", 0.05, 0.05, 0.71, wood)
	for i, p := range [][2]float64{{0.62, 0.32}, {0.62, -0.32}, {-0.62, 0.32}, {-0.62, -0.32}} {
		m.AddNode(table, fmt.Sprintf("table_leg_%d", i), at(p[0], p[1], 0.355), leg)
	}
	top := m.AddNode(table, "table_surface", at(0, 0, 0.75), nil)
	top.InsertionPoint = "TABLE_TOP"

	m.AddNode(nil, "crate", at(3, -1.5, 0.25), models.Box("crate", 0.5, 0.5, 0.5, red))
	return m
}

// robot is a small wheeled base (x forward) with a mast. Insertion points:
// MAST_TOP at the top of the mast, 1 m above the floor.
func robot() *models.Model {
	m := models.NewModel("robot")
	base := m.AddNode(nil, "base", at(0, 0, 0.2), models.Box("base", 0.6, 0.4, 0.25, blue))
	wheel := models.Cylinder("wheel", 0.1, 0.06, 24, black)
	// The cylinder's axis is z; a roll of 90 degrees turns it onto y.
	roll := mgl64.HomogRotate3DX(mgl64.DegToRad(90))
	for i, p := range [][2]float64{{0.2, 0.23}, {0.2, -0.23}, {-0.2, 0.23}, {-0.2, -0.23}} {
		m.AddNode(base, fmt.Sprintf("wheel_%d", i), at(p[0], p[1], -0.1).Mul4(roll), wheel)
	}
	mast := m.AddNode(base, "mast", at(0.15, 0, 0.45), models.Cylinder("mast", 0.03, 0.65, 16, steel))
	top := m.AddNode(mast, "mast_top", at(0, 0, 0.35), nil)
	top.InsertionPoint = "MAST_TOP"
	return m
}

// door is a door leaf for the custom-element example (examples/door): 0.9 m
// wide along +x from its hinge at the origin, 2 m high, with a handle.
func door() *models.Model {
	m := models.NewModel("door")
	leaf := m.AddNode(nil, "leaf", at(0.45, 0, 1.0), models.Box("leaf", 0.9, 0.04, 2.0, wood))
	m.AddNode(leaf, "handle", at(0.35, -0.04, 0), models.Box("handle", 0.12, 0.04, 0.03, steel))
	return m
}
