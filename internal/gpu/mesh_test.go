package gpu

import (
	"strings"
	"testing"

	"github.com/g3n/engine/gls"
	"github.com/go-gl/mathgl/mgl32"
)

// meshProgram passes clip-space positions through and writes the texture
// coordinates, the primitive number and 1 (coverage), or with Sample set
// the red channel of the texture on unit 3 at the coordinates.
const meshVertex = `#version 330 core
layout(location = 0) in vec3 VertexPosition;
layout(location = 1) in vec2 VertexTexcoord;
out vec2 UV;
void main() {
    UV = VertexTexcoord;
    gl_Position = vec4(VertexPosition, 1.0);
}
`

const meshFragment = `#version 330 core
uniform sampler2D Tex;
uniform int Sample;
in vec2 UV;
out vec4 Out;
void main() {
    if (Sample != 0) {
        Out = vec4(texture(Tex, UV).r, 0.0, 0.0, 1.0);
        return;
    }
    Out = vec4(UV, float(gl_PrimitiveID), 1.0);
}
`

// withMeshProgram runs f on a context of its own (a raw program would
// leave a shared context's g3n renderers with a stale current program),
// drawing into a w x h RGBA32F target with the test program current.
func withMeshProgram(t *testing.T, w, h int, f func(gs *gls.GLS, fb *Framebuffer, prog *gls.Program)) {
	t.Helper()
	ctx, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	err = ctx.Do(func(gs *gls.GLS) error {
		prog := gs.NewProgram()
		prog.AddShader(gls.VERTEX_SHADER, meshVertex)
		prog.AddShader(gls.FRAGMENT_SHADER, meshFragment)
		if err := prog.Build(); err != nil {
			return err
		}
		gs.UseProgram(prog)
		fb, err := NewFramebuffer(gs, w, h, ColorRGBA32F)
		if err != nil {
			return err
		}
		defer fb.Delete(gs)
		SetSolidState(gs, false)
		f(gs, fb, prog)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A mesh draws its triangles, its edges as lines and its corners as
// points, with texture coordinates where it has them; it refuses indices
// beyond its vertices and counts its objects in g3n's statistics.
func TestMesh(t *testing.T) {
	const w, h = 8, 8
	withMeshProgram(t, w, h, func(gs *gls.GLS, fb *Framebuffer, prog *gls.Program) {
		// The left half of the view: two triangles.
		pos := []mgl32.Vec3{{-1, -1, 0}, {0, -1, 0}, {0, 1, 0}, {-1, 1, 0}}
		uv := []mgl32.Vec2{{0, 0}, {1, 0}, {1, 1}, {0, 1}}
		idx := []uint32{0, 1, 2, 0, 2, 3}
		if _, err := NewMesh(gs, pos, uv, []uint32{0, 1, 4}); err == nil || !strings.Contains(err.Error(), "beyond 4 vertices") {
			t.Errorf("index 4 of 4 vertices: %v", err)
		}
		if _, err := NewMesh(gs, pos, uv[:3], idx); err == nil {
			t.Error("3 texture coordinates for 4 positions accepted")
		}
		var before, after gls.Stats
		gs.Stats(&before)
		m, err := NewMesh(gs, pos, uv, idx)
		if err != nil {
			t.Fatal(err)
		}
		if !m.HasTexCoords() || m.HasEdges() || m.Indices() != 6 {
			t.Errorf("mesh: tex coords %v, edges %v, indices %d", m.HasTexCoords(), m.HasEdges(), m.Indices())
		}
		gs.Uniform1i(gs.GetUniformLocation(prog.Handle(), "Sample"), 0)
		pix := make([]float32, 4*w*h)
		at := func(x, y int) []float32 { return pix[4*(y*w+x) : 4*(y*w+x)+4] }

		fb.Clear(gs, 0, 0, 0, 0)
		m.Draw(gs, Triangles)
		m.Draw(gs, Edges) // none yet: draws nothing
		UnbindMesh(gs)
		if err := fb.ReadFloat(gs, pix); err != nil {
			t.Fatal(err)
		}
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				if got, want := at(x, y)[3], float32(0); x < w/2 {
					want = 1
					if got != want {
						t.Fatalf("pixel %d,%d coverage %v, want %v", x, y, got, want)
					}
				} else if got != want {
					t.Fatalf("pixel %d,%d coverage %v, want %v", x, y, got, want)
				}
			}
		}
		// Top-left pixel: u near 0, v near 1 (rows read top-down).
		if p := at(0, 0); p[0] > 0.2 || p[1] < 0.8 {
			t.Errorf("top-left texture coordinates %v", p[:2])
		}

		if err := m.SetEdges(gs, []uint32{0, 7}); err == nil {
			t.Error("edge index 7 of 4 vertices accepted")
		}
		if err := m.SetEdges(gs, []uint32{1, 2}); err != nil {
			t.Fatal(err)
		}
		if !m.HasEdges() {
			t.Error("HasEdges false after SetEdges")
		}
		// A triangle with its corners at pixel centers: its first edge
		// as a line covers a column, its corners as points three pixels.
		center := func(x, y int) mgl32.Vec3 {
			return mgl32.Vec3{(float32(x)+0.5)/w*2 - 1, (float32(y)+0.5)/h*2 - 1, 0}
		}
		tri, err := NewMesh(gs, []mgl32.Vec3{center(2, 0), center(2, 7), center(5, 3)}, nil, []uint32{0, 1, 2})
		if err != nil {
			t.Fatal(err)
		}
		if err := tri.SetEdges(gs, []uint32{0, 1}); err != nil {
			t.Fatal(err)
		}
		coverage := func(what Primitive) (n int) {
			fb.Clear(gs, 0, 0, 0, 0)
			tri.Draw(gs, what)
			UnbindMesh(gs)
			if err := fb.ReadFloat(gs, pix); err != nil {
				t.Fatal(err)
			}
			for k := 3; k < len(pix); k += 4 {
				n += int(pix[k])
			}
			return n
		}
		if n := coverage(Edges); n != h-1 && n != h {
			t.Errorf("edge covered %d pixels, want a column of %d or %d", n, h-1, h)
		}
		if n := coverage(Corners); n != 3 {
			t.Errorf("corners covered %d pixels, want 3", n)
		}
		tri.Delete(gs)
		if err := CheckGLError(gs); err != nil {
			t.Error(err)
		}

		// Without texture coordinates, and with no edges at all.
		m2, err := NewMesh(gs, pos, nil, idx)
		if err != nil {
			t.Fatal(err)
		}
		if err := m2.SetEdges(gs, nil); err != nil || !m2.HasEdges() || m2.HasTexCoords() {
			t.Errorf("empty edges: %v, has edges %v, tex coords %v", err, m2.HasEdges(), m2.HasTexCoords())
		}
		m2.Draw(gs, Edges)
		m2.Delete(gs)
		m.Delete(gs)
		m.Delete(gs)
		m.Draw(gs, Triangles) // deleted: draws nothing
		if err := m.SetEdges(gs, []uint32{0, 1}); err == nil {
			t.Error("SetEdges on a deleted mesh accepted")
		}
		gs.Stats(&after)
		if after.Vaos != before.Vaos || after.Buffers != before.Buffers {
			t.Errorf("objects after delete: %d vertex arrays, %d buffers; before %d, %d", after.Vaos, after.Buffers, before.Vaos, before.Buffers)
		}
		if err := CheckGLError(gs); err != nil {
			t.Error(err)
		}
	})
}

// An R8 texture samples what was uploaded, filtered as asked, and leaves
// the active unit's binding alone; a wrong size is refused.
func TestTextureR8(t *testing.T) {
	const w, h = 8, 2
	withMeshProgram(t, w, h, func(gs *gls.GLS, fb *Framebuffer, prog *gls.Program) {
		if _, err := NewTextureR8(gs, 2, 2, make([]byte, 3), Sampling{}); err == nil {
			t.Error("3 bytes for 2x2 texels accepted")
		}
		if _, err := NewTextureR8(gs, 0, 2, nil, Sampling{}); err == nil {
			t.Error("0x2 texels accepted")
		}
		prev := glGetInteger(gls.TEXTURE_BINDING_2D)
		// Odd width: rows of 3 bytes need the unpack alignment of 1.
		tex, err := NewTextureR8(gs, 3, 1, []byte{0, 255, 0}, Sampling{Filter: Nearest, WrapS: gls.CLAMP_TO_EDGE, WrapT: gls.CLAMP_TO_EDGE})
		if err != nil {
			t.Fatal(err)
		}
		defer tex.Delete(gs)
		if got := glGetInteger(gls.TEXTURE_BINDING_2D); got != prev {
			t.Errorf("texture binding %d -> %d", prev, got)
		}
		mip, err := NewTextureR8(gs, 4, 4, make([]byte, 16), Sampling{Filter: Trilinear, WrapS: gls.REPEAT, WrapT: gls.REPEAT})
		if err != nil {
			t.Fatal(err)
		}
		mip.Delete(gs)
		mip.Delete(gs)

		tex.Bind(gs, 3)
		gs.Uniform1i(gs.GetUniformLocation(prog.Handle(), "Tex"), 3)
		gs.Uniform1i(gs.GetUniformLocation(prog.Handle(), "Sample"), 1)
		quad, err := NewMesh(gs, []mgl32.Vec3{{-1, -1, 0}, {1, -1, 0}, {1, 1, 0}, {-1, 1, 0}},
			[]mgl32.Vec2{{0, 0}, {1, 0}, {1, 1}, {0, 1}}, []uint32{0, 1, 2, 0, 2, 3})
		if err != nil {
			t.Fatal(err)
		}
		defer quad.Delete(gs)
		fb.Clear(gs, 0, 0, 0, 0)
		quad.Draw(gs, Triangles)
		UnbindMesh(gs)
		pix := make([]float32, 4*w*h)
		if err := fb.ReadFloat(gs, pix); err != nil {
			t.Fatal(err)
		}
		// Columns 0-2 see texel 0, 3-4 texel 1 (255), 5-7 texel 2.
		for x := 0; x < w; x++ {
			want := float32(0)
			if x >= 3 && x <= 4 {
				want = 1
			}
			if got := pix[4*x]; got != want {
				t.Errorf("column %d samples %v, want %v", x, got, want)
			}
		}
		if err := CheckGLError(gs); err != nil {
			t.Error(err)
		}
	})
}

// ClearTo clears depth to the value asked (reversed-Z's far is 0).
func TestClearTo(t *testing.T) {
	ctx := shared(t)
	err := ctx.Do(func(gs *gls.GLS) error {
		fb, err := NewFramebuffer(gs, 4, 3, ColorR32F)
		if err != nil {
			return err
		}
		defer fb.Delete(gs)
		fb.ClearTo(gs, 0.5, 0, 0, 0, 0)
		depth := make([]float32, 12)
		color := make([]float32, 12)
		if err := fb.ReadDepth(gs, depth); err != nil {
			return err
		}
		if err := fb.ReadFloat(gs, color); err != nil {
			return err
		}
		for i := range depth {
			if depth[i] != 0 || color[i] != 0.5 {
				t.Fatalf("pixel %d: depth %v color %v, want 0 and 0.5", i, depth[i], color[i])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
