package urdf_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// bigRobot writes a chain of 40 links, each with a mesh of its own (a
// binary STL sphere of 12,500 triangles): 500,000 triangles in all.
func bigRobot(b *testing.B) string {
	dir := b.TempDir()
	var u strings.Builder
	u.WriteString("<robot name=\"big\">\n")
	for i := range 40 {
		m := models.NewModel("s")
		mesh := models.Sphere("s", 0.05+0.001*float64(i), 250, 26, [4]float32{1, 1, 1, 1})
		m.AddNode(nil, "s", mgl64.Ident4(), mesh)
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("l%d.stl", i)))
		if err != nil {
			b.Fatal(err)
		}
		if err := models.WriteSTL(f, m); err != nil {
			b.Fatal(err)
		}
		f.Close()
		fmt.Fprintf(&u, `<link name="l%d"><visual><geometry><mesh filename="l%d.stl"/></geometry></visual></link>`+"\n", i, i)
		if i > 0 {
			fmt.Fprintf(&u, `<joint name="j%d" type="revolute"><parent link="l%d"/><child link="l%d"/><origin xyz="0 0 0.1" rpy="0.1 0.2 0.3"/><axis xyz="0 1 0"/><limit lower="-1" upper="1"/></joint>`+"\n", i, i-1, i)
		}
	}
	u.WriteString("</robot>\n")
	p := filepath.Join(dir, "big.urdf")
	if err := os.WriteFile(p, []byte(u.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkLoad40Links: a part loading a 40-link URDF with 500,000
// triangles of STL meshes (issue 26's figure: under 1 s).
func BenchmarkLoad40Links(b *testing.B) {
	p := bigRobot(b)
	c, err := scene.ParseCommand(fmt.Sprintf(`<part file=%q name="R"/>`, p), "bench.xml", "")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		s := scene.New(scene.Options{})
		if err := s.Exec(c); err != nil {
			b.Fatal(err)
		}
		if i := s.Totals(); i.Triangles != 500000 {
			b.Fatalf("%+v", i)
		}
	}
}
