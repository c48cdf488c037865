// Command generate writes the glTF assets of the bundled example scenes, and
// the STL and Collada meshes of the example URDF robot (scenes/arm), from code, so they
// are reproducible and reviewable:
//
//	go run ./scenes/generate [-o scenes]
package main

import (
	"flag"
	"fmt"
	"math"
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
		"marvin/lab.gltf":       lab(),
		"marvin/marvin.gltf":    marvin(),
		"showcase/plant.glb":    plant(),
		"ravon/terrain.glb":     ravonTerrain(),
		"ravon/foliage.glb":     ravonFoliage(),
		"ravon/sky.glb":         ravonSky(),
		"ravon/ravon.glb":       ravon(),
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
	for name, m := range armMeshes() {
		path := filepath.Join(dir, "arm/meshes", name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		var data []byte
		var err error
		if filepath.Ext(name) == ".dae" {
			data = colladaBytes(m)
		} else if data, err = stlBytes(m); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
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

var (
	gray   = [4]float32{0.45, 0.47, 0.5, 1}
	green  = [4]float32{0.25, 0.55, 0.3, 1}
	yellow = [4]float32{0.9, 0.75, 0.2, 1}
)

// lab is the MARVIN scenario's indoor lab (paper IV-A): a 12 m x 8 m room,
// 3 m high, with two door openings (one door ajar, one open), four tables,
// six chairs, a cabinet and a pillar. x runs along the room, the origin is
// its center.
func lab() *models.Model {
	m := models.NewModel("lab")
	m.AddNode(nil, "floor", at(0, 0, 0), models.Plane("lab_floor", 12, 8, floorGray))
	walls := m.AddNode(nil, "walls", mgl64.Ident4(), nil)
	const h, t = 3.0, 0.12
	// wall adds a wall segment from a to b along x (y fixed) or y (x fixed).
	wall := func(name string, x0, y0, x1, y1 float64) {
		lx, ly := math.Abs(x1-x0), math.Abs(y1-y0)
		if lx == 0 {
			lx = t
		}
		if ly == 0 {
			ly = t
		}
		m.AddNode(walls, name, at((x0+x1)/2, (y0+y1)/2, h/2), models.Box(name, lx, ly, h, wallWhite))
	}
	// North wall (y = 4) with a door opening from x = -4 to -3.
	wall("wall_north_w", -6, 4, -4, 4)
	wall("wall_north_e", -3, 4, 6, 4)
	m.AddNode(walls, "lintel_north", at(-3.5, 4, 2.6), models.Box("lintel", 1, t, 0.8, wallWhite))
	// South wall (y = -4) with a door opening from x = 2 to 3.
	wall("wall_south_w", -6, -4, 2, -4)
	wall("wall_south_e", 3, -4, 6, -4)
	m.AddNode(walls, "lintel_south", at(2.5, -4, 2.6), models.Box("lintel", 1, t, 0.8, wallWhite))
	wall("wall_east", 6, -4, 6, 4)
	wall("wall_west", -6, -4, -6, 4)
	// Doors: the north one ajar (turned 30° about its hinge at x = -4), the
	// south one open flat against the wall.
	leaf := models.Box("door_leaf", 0.96, 0.04, 2.2, wood)
	hingeN := m.AddNode(nil, "door_north", at(-4, 3.9, 0).Mul4(mgl64.HomogRotate3DZ(mgl64.DegToRad(-30))), nil)
	m.AddNode(hingeN, "door_north_leaf", at(0.48, 0, 1.1), leaf)
	hingeS := m.AddNode(nil, "door_south", at(2, -3.9, 0).Mul4(mgl64.HomogRotate3DZ(mgl64.DegToRad(100))), nil)
	m.AddNode(hingeS, "door_south_leaf", at(0.48, 0, 1.1), leaf)

	top := models.Box("lab_table_top", 1.6, 0.8, 0.04, wood)
	leg := models.Box("lab_table_leg", 0.05, 0.05, 0.7, steel)
	seat := models.Box("chair_seat", 0.44, 0.44, 0.04, green)
	back := models.Box("chair_back", 0.04, 0.44, 0.45, green)
	chairLeg := models.Cylinder("chair_leg", 0.015, 0.44, 8, steel)
	for i, p := range [][3]float64{{-3, 1.5, 0}, {-0.5, 1.5, 0}, {2.5, 2, 90}, {3.5, -1.5, 0}} {
		table := m.AddNode(nil, fmt.Sprintf("table_%d", i), at(p[0], p[1], 0).Mul4(mgl64.HomogRotate3DZ(mgl64.DegToRad(p[2]))), nil)
		m.AddNode(table, "top", at(0, 0, 0.72), top)
		for k, q := range [][2]float64{{0.74, 0.34}, {0.74, -0.34}, {-0.74, 0.34}, {-0.74, -0.34}} {
			m.AddNode(table, fmt.Sprintf("leg_%d", k), at(q[0], q[1], 0.35), leg)
		}
	}
	for i, p := range [][3]float64{{-3.4, 0.8, 90}, {-2.6, 0.8, 80}, {-0.5, 0.7, 95}, {1.7, 2.2, 10}, {3.5, -0.7, -90}, {4.6, -1.4, 180}} {
		chair := m.AddNode(nil, fmt.Sprintf("chair_%d", i), at(p[0], p[1], 0).Mul4(mgl64.HomogRotate3DZ(mgl64.DegToRad(p[2]))), nil)
		m.AddNode(chair, "seat", at(0, 0, 0.46), seat)
		m.AddNode(chair, "back", at(-0.2, 0, 0.7), back)
		for k, q := range [][2]float64{{0.19, 0.19}, {0.19, -0.19}, {-0.19, 0.19}, {-0.19, -0.19}} {
			m.AddNode(chair, fmt.Sprintf("leg_%d", k), at(q[0], q[1], 0.22), chairLeg)
		}
	}
	m.AddNode(nil, "cabinet", at(-5.7, -2.5, 1), models.Box("cabinet", 0.5, 1.2, 2, gray))
	m.AddNode(nil, "pillar", at(0.5, -1.5, 1.5), models.Cylinder("pillar", 0.2, 3, 32, wallWhite))
	return m
}

// marvin is the paper's indoor robot MARVIN: a 0.7 m x 0.5 m base with a
// mast. Insertion points: FRONT_SCANNER and REAR_SCANNER 10 cm above the
// floor (the rear one turned to look backwards), TILT_UNIT 1 m up for the
// tilting scanner, CAMERA_MOUNT 1.25 m up.
func marvin() *models.Model {
	m := models.NewModel("marvin")
	base := m.AddNode(nil, "base", at(0, 0, 0.3), models.Box("marvin_base", 0.7, 0.5, 0.4, yellow))
	wheel := models.Cylinder("marvin_wheel", 0.1, 0.05, 24, black)
	roll := mgl64.HomogRotate3DX(mgl64.DegToRad(90))
	for i, y := range []float64{0.2, -0.2} {
		m.AddNode(base, fmt.Sprintf("wheel_%d", i), at(0, y, -0.2).Mul4(roll), wheel)
	}
	// Sensor heads sit behind their insertion points, so that sensors
	// mounted there do not see the inside of their own housing.
	head := models.Box("scanner_head", 0.1, 0.1, 0.1, black)
	for _, sc := range []struct {
		name, point string
		pose        mgl64.Mat4
	}{
		{"front_scanner", "FRONT_SCANNER", at(0.42, 0, 0.1)},
		{"rear_scanner", "REAR_SCANNER", at(-0.42, 0, 0.1).Mul4(mgl64.HomogRotate3DZ(math.Pi))},
	} {
		n := m.AddNode(nil, sc.name, sc.pose, nil)
		n.InsertionPoint = sc.point
		m.AddNode(n, sc.name+"_head", at(-0.06, 0, 0), head)
	}
	m.AddNode(nil, "mast", at(0.15, 0, 0.75), models.Cylinder("marvin_mast", 0.04, 0.5, 16, steel))
	tilt := m.AddNode(nil, "tilt_unit", at(0.22, 0, 1.0), nil)
	tilt.InsertionPoint = "TILT_UNIT"
	m.AddNode(tilt, "tilt_head", at(-0.06, 0, 0), head)
	cam := m.AddNode(nil, "camera_mount", at(0.2, 0, 1.25), nil)
	cam.InsertionPoint = "CAMERA_MOUNT"
	m.AddNode(cam, "camera_body", at(-0.04, 0, 0), models.Box("camera_body", 0.06, 0.15, 0.05, black))
	return m
}

// plant is a potted bush for the showcase: a clay pot 0.4 m high with the
// RAVON bushes' alpha-masked leaf cards on top, so that the foliage element
// has leaves to fade in a scene that shows every element type.
func plant() *models.Model {
	m := models.NewModel("plant")
	pot := m.AddNode(nil, "pot", at(0, 0, 0.2), models.Cylinder("pot", 0.18, 0.4, 24, [4]float32{0.7, 0.36, 0.22, 1}))
	leaves := &models.Material{Name: "leaves", BaseColor: [4]float32{1, 1, 1, 1}, AlphaMode: models.AlphaMask,
		AlphaCutoff: 0.5, DoubleSided: true, Roughness: 1, BaseColorTexture: leafTexture()}
	m.AddNode(pot, "leaves", at(0, 0, 0.15), cardsMesh("leaf_cards", leaves, 0.8, 0.7, 0, 3, false))
	return m
}
