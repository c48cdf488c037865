package sensors

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// Benchmark scenes that WriteBenchScenes makes, by folder.
const (
	// BenchMarvins is the MARVIN lab with 50 MARVINs (150 planar
	// scanners of 361 beams), the many-robots scene.
	BenchMarvins = "marvin50"
	// BenchMillion is one million triangles (a closed, bumpy cave around
	// a 361-beam scanner and a 640x480 depth camera).
	BenchMillion = "mesh1m"
	// BenchCameras is the file, in BenchMarvins' folder, of MARVIN in the
	// lab with a ring of BenchCameraRing 640x480 cameras on its camera
	// mount: a cycle of many cameras.
	BenchCameras = "cameras.xml"
	// BenchCameraRing is how many cameras BenchCameras has.
	BenchCameraRing = 16
)

// marvinsGrid is how the 50 robots stand: 10 along the lab's x, 5 along y.
const (
	marvinsX, marvinsY = 10, 5
	caveSegments       = 1000 // around the cave's axis
	caveRings          = 501  // pole to pole: 2 * 1000 * 500 triangles
)

// WriteBenchScenes writes the benchmark scenes into dir/marvin50 and
// dir/mesh1m and returns their scene files: the 50 MARVINs, the million
// triangles, then the ring of cameras (dir/marvin50/cameras.xml).
// marvinAssets is the folder with the MARVIN scene's lab.gltf and
// marvin.gltf (scenes/marvin), which are copied next to the many-robots
// scene. Everything is deterministic, so anyone gets the same scenes.
func WriteBenchScenes(dir, marvinAssets string) ([]string, error) {
	m50 := filepath.Join(dir, BenchMarvins)
	if err := os.MkdirAll(m50, 0o755); err != nil {
		return nil, err
	}
	for _, f := range []string{"lab.gltf", "marvin.gltf"} {
		data, err := os.ReadFile(filepath.Join(marvinAssets, f))
		if err != nil {
			return nil, fmt.Errorf("the MARVIN assets: %w", err)
		}
		if err := os.WriteFile(filepath.Join(m50, f), data, 0o644); err != nil {
			return nil, err
		}
	}
	var b strings.Builder
	b.WriteString("<!-- 50 MARVINs in the lab, three scanners each (150), as in scenes/marvin.\n" +
		"     Written by simvis bench - -generate. -->\n<scene>\n  <part file=\"lab.gltf\" name=\"LAB\"/>\n")
	for i := 0; i < marvinsX; i++ {
		for j := 0; j < marvinsY; j++ {
			n := fmt.Sprintf("M%02d", i*marvinsY+j)
			x, y := -5+1.1*float64(i), -3+1.5*float64(j)
			yaw := float64((i*37 + j*53) % 360)
			fmt.Fprintf(&b, "  <part file=\"marvin.gltf\" name=\"%s\" insert_at=\"LAB\"/>\n", n)
			fmt.Fprintf(&b, "  <element type=\"pose\" name=\"%s_POSE\" insert_at=\"%s\" x=\"%g\" y=\"%g\" yaw=\"%g\"/>\n", n, n, x, y, yaw)
			fmt.Fprintf(&b, "  <element type=\"rotation\" name=\"%s_TILT_UNIT\" insert_at=\"%s/TILT_UNIT\" axis=\"0 1 0\" min=\"-45\" max=\"45\" angle=\"10\"/>\n", n, n)
			for _, sc := range [][2]string{{"FRONT", "FRONT_SCANNER"}, {"REAR", "REAR_SCANNER"}, {"TILT", "TILT_UNIT"}} {
				fmt.Fprintf(&b, "  <sensor type=\"laser\" name=\"%s_%s\" insert_at=\"%s/%s\" angle_min=\"-90\" angle_max=\"90\" resolution=\"0.5\" range_min=\"0.05\" range_max=\"30\"/>\n",
					n, sc[0], n, sc[1])
			}
		}
	}
	b.WriteString("</scene>\n")
	files := []string{filepath.Join(m50, "scene.xml")}
	if err := os.WriteFile(files[0], []byte(b.String()), 0o644); err != nil {
		return nil, err
	}

	m1 := filepath.Join(dir, BenchMillion)
	if err := os.MkdirAll(m1, 0o755); err != nil {
		return nil, err
	}
	model := models.NewModel("cave")
	model.AddNode(nil, "cave", mgl64.Ident4(), cave(caveSegments, caveRings))
	if err := models.Write(filepath.Join(m1, "cave.glb"), model); err != nil {
		return nil, err
	}
	xml := `<!-- One million triangles: a bumpy closed cave about 5 m across, seen by a
     361-beam scanner and a 640x480 depth camera off its center. Written by
     simvis bench - -generate. -->
<scene>
  <part file="cave.glb" name="CAVE"/>
  <sensor type="laser" name="SCAN" insert_at="CAVE" pose_offset="0.3 0.2 0.1 0 0 0"
          angle_min="-90" angle_max="90" resolution="0.5" range_min="0.05" range_max="30"/>
  <sensor type="depth" name="DEPTH" insert_at="CAVE" pose_offset="-0.2 0.1 -0.1 0 0 15"
          width="640" height="480" fov="70" range_max="20"/>
</scene>
`
	files = append(files, filepath.Join(m1, "scene.xml"))
	if err := os.WriteFile(files[1], []byte(xml), 0o644); err != nil {
		return nil, err
	}
	files = append(files, filepath.Join(m50, BenchCameras))
	return files, os.WriteFile(files[2], []byte(cameraRing()), 0o644)
}

// cameraRing is the scene of BenchCameras: scenes/marvin's robot where it
// stands there, its camera mount carrying cameras every 360/BenchCameraRing
// degrees of yaw (a surround rig), each 640x480 like MARVIN's camera.
func cameraRing() string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- MARVIN in the lab with a ring of %d 640x480 cameras on its camera mount:\n"+
		"     a cycle of many cameras. Written by simvis bench - -generate. -->\n<scene>\n"+
		"  <part file=\"lab.gltf\" name=\"LAB\"/>\n  <part file=\"marvin.gltf\" name=\"MARVIN\" insert_at=\"LAB\"/>\n"+
		"  <element type=\"pose\" name=\"M_POSE\" insert_at=\"MARVIN\" x=\"-2\" y=\"-1\" yaw=\"20\"/>\n", BenchCameraRing)
	for k := 0; k < BenchCameraRing; k++ {
		fmt.Fprintf(&b, "  <sensor type=\"camera\" name=\"CAM%02d\" insert_at=\"MARVIN/CAMERA_MOUNT\" pose_offset=\"0 0 0 0 0 %g\" width=\"640\" height=\"480\" fov=\"70\"/>\n",
			k, 360*float64(k)/BenchCameraRing)
	}
	b.WriteString("</scene>\n")
	return b.String()
}

// cave is a closed sphere of 2 * segments * (rings - 1) triangles whose
// radius (about 5 m) rises and falls in bumps of a few centimeters to
// half a meter, so that neighbouring beams meet different triangles at
// different ranges.
func cave(segments, rings int) *models.Mesh {
	p := &models.Primitive{Material: models.DefaultMaterial()}
	radius := func(theta, phi float64) float64 {
		return 5 * (1 + 0.1*math.Sin(7*phi)*math.Sin(5*theta) + 0.03*math.Sin(23*phi+11*theta))
	}
	vertex := func(theta, phi float64) {
		d := mgl64.Vec3{math.Sin(theta) * math.Cos(phi), math.Sin(theta) * math.Sin(phi), math.Cos(theta)}
		q := d.Mul(radius(theta, phi))
		p.Positions = append(p.Positions, mgl32.Vec3{float32(q[0]), float32(q[1]), float32(q[2])})
		p.Normals = append(p.Normals, mgl32.Vec3{float32(-d[0]), float32(-d[1]), float32(-d[2])})
	}
	vertex(0, 0) // north pole: vertex 0
	for k := 1; k < rings; k++ {
		for s := 0; s < segments; s++ {
			vertex(math.Pi*float64(k)/float64(rings), 2*math.Pi*float64(s)/float64(segments))
		}
	}
	vertex(math.Pi, 0) // south pole
	south := uint32(len(p.Positions) - 1)
	at := func(k, s int) uint32 { return uint32(1 + (k-1)*segments + s%segments) }
	for s := 0; s < segments; s++ {
		p.Indices = append(p.Indices, 0, at(1, s), at(1, s+1))
		for k := 1; k < rings-1; k++ {
			a, b, c, d := at(k, s), at(k, s+1), at(k+1, s), at(k+1, s+1)
			p.Indices = append(p.Indices, a, c, b, b, c, d)
		}
		p.Indices = append(p.Indices, at(rings-1, s), south, at(rings-1, s+1))
	}
	p.UpdateKey()
	return &models.Mesh{Name: "cave", Primitives: []*models.Primitive{p}}
}

// WorldTriangles returns every triangle range sensors see in s, in world
// coordinates: the vertices of each sensed primitive mapped by its mesh's
// world transform (in float64, then rounded to float32), and three vertex
// indices per triangle. The peer benchmark hands them to other ray casters.
func WorldTriangles(s *scene.Scene) (vertices []float32, indices []uint32, err error) {
	if err := s.Update(); err != nil {
		return nil, nil, err
	}
	for _, m := range s.SensedMeshes(nil) {
		for _, p := range m.Mesh.Primitives {
			if len(p.Indices) < 3 {
				continue
			}
			base := uint32(len(vertices) / 3)
			for _, q := range p.Positions {
				w := m.World.Mul4x1(mgl64.Vec4{float64(q[0]), float64(q[1]), float64(q[2]), 1})
				vertices = append(vertices, float32(w[0]), float32(w[1]), float32(w[2]))
			}
			for _, i := range p.Indices[:len(p.Indices)/3*3] {
				indices = append(indices, base+i)
			}
		}
	}
	return vertices, indices, nil
}

// WorldRays returns the rays a range sensor's CPU backend casts at the
// scene's current state: its origin and unit directions in world
// coordinates (for a depth camera, one per pixel, row by row from the top).
// ok is false for other sensors.
func WorldRays(s *scene.Scene, sensor scene.Sensor) (origin mgl64.Vec3, dirs []mgl64.Vec3, ok bool, err error) {
	rr, isRange := sensor.(rangeReader)
	if !isRange {
		return origin, nil, false, nil
	}
	if err := s.Update(); err != nil {
		return origin, nil, false, err
	}
	b := rr.beams()
	world := b.frame.World()
	if d, isDepth := sensor.(*DepthCamera); isDepth {
		for _, zt := range d.zTan {
			for _, yt := range d.yTan {
				dirs = append(dirs, world.Mul4x1(mgl64.Vec4{1, yt, zt, 0}).Vec3().Normalize())
			}
		}
	} else {
		for _, d := range b.dirs {
			dirs = append(dirs, world.Mul4x1(d.Vec4(0)).Vec3().Normalize())
		}
	}
	return world.Col(3).Vec3(), dirs, true, nil
}
