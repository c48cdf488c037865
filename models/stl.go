package models

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/go-gl/mathgl/mgl64"
)

func init() { RegisterFormat(".stl", loadSTL) }

// uncoloredMaterial is the material of meshes whose file gives no colour
// (STL; OBJ faces without a material): light grey, matte, dielectric. Its
// name is glTF's default material's, "default", by which a URDF recolours
// such meshes with its own material.
func uncoloredMaterial() *Material {
	return &Material{Name: "default", BaseColor: [4]float32{0.8, 0.8, 0.8, 1}, AlphaCutoff: 0.5, Roughness: 1}
}

// triangles builds one flat-shaded primitive: three vertices per triangle
// carrying the face normal (the file's normal where the triangle is too
// small to give one).
type triangles struct{ p *Primitive }

func newTriangles(n int64, mat *Material) triangles {
	return triangles{&Primitive{
		Positions: make([]mgl32.Vec3, 0, 3*n),
		Normals:   make([]mgl32.Vec3, 0, 3*n),
		Indices:   make([]uint32, 0, 3*n),
		Material:  mat,
	}}
}

func (t triangles) add(a, b, c, fallback mgl32.Vec3) {
	n := b.Sub(a).Cross(c.Sub(a))
	if l := n.Len(); l > 0 && !math.IsInf(float64(l), 0) {
		n = n.Mul(1 / l)
	} else if l := fallback.Len(); l > 0 && !math.IsInf(float64(l), 0) {
		n = fallback.Mul(1 / l)
	} else {
		n = mgl32.Vec3{0, 0, 1}
	}
	i := uint32(len(t.p.Positions))
	t.p.Positions = append(t.p.Positions, a, b, c)
	t.p.Normals = append(t.p.Normals, n, n, n)
	t.p.Indices = append(t.p.Indices, i, i+1, i+2)
}

// singleMeshModel wraps one mesh as a model of one root node.
func singleMeshModel(path string, mesh *Mesh) *Model {
	base := filepath.Base(path)
	m := &Model{Name: strings.TrimSuffix(base, filepath.Ext(base))}
	m.AddNode(nil, m.Name, mgl64.Ident4(), mesh)
	return m
}

// loadSTL reads binary or ASCII STL: meters, z up, as written. A file is
// binary when its size is exactly 84 bytes plus 50 per triangle its header
// counts, else ASCII if it starts with "solid".
func loadSTL(r *Reader, path string) (*Model, error) {
	data, err := r.fa.readModel(path)
	if err != nil {
		return nil, err
	}
	if err := r.CountNodes(1); err != nil {
		return nil, err
	}
	p, err := decodeSTL(data, r)
	if err != nil {
		return nil, fmt.Errorf("STL: %w", err)
	}
	p.UpdateKey()
	return singleMeshModel(path, &Mesh{Name: filepath.Base(path), Primitives: []*Primitive{p}}), nil
}

func decodeSTL(data []byte, r *Reader) (*Primitive, error) {
	if len(data) >= 84 {
		n := int64(binary.LittleEndian.Uint32(data[80:84]))
		if 84+50*n == int64(len(data)) {
			return binarySTL(data, n, r)
		}
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if !bytes.HasPrefix(trimmed, []byte("solid")) {
		if len(data) >= 84 {
			n := binary.LittleEndian.Uint32(data[80:84])
			return nil, fmt.Errorf("not ASCII (no \"solid\") and not binary: %d bytes, where the %d triangles the header counts take %d", len(data), n, 84+50*int64(n))
		}
		return nil, fmt.Errorf("not ASCII (no \"solid\") and not binary: %d bytes, shorter than a binary header (84)", len(data))
	}
	return asciiSTL(data, r)
}

func binarySTL(data []byte, n int64, r *Reader) (*Primitive, error) {
	if err := r.CountGeometry(3*n, n); err != nil {
		return nil, err
	}
	t := newTriangles(n, uncoloredMaterial())
	f := func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }
	vec := func(b []byte) mgl32.Vec3 { return mgl32.Vec3{f(b), f(b[4:]), f(b[8:])} }
	for i := int64(0); i < n; i++ {
		rec := data[84+50*i:]
		var v [4]mgl32.Vec3
		for k := range v {
			v[k] = vec(rec[12*k:])
			for _, x := range v[k] {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					return nil, fmt.Errorf("triangle %d: %s %v is not finite", i+1, [4]string{"normal", "vertex 1", "vertex 2", "vertex 3"}[k], v[k])
				}
			}
		}
		t.add(v[1], v[2], v[3], v[0])
	}
	return t.p, nil
}

// stlTokens walks the words of an ASCII STL file, counting lines.
type stlTokens struct {
	data []byte
	pos  int
	line int
}

func (s *stlTokens) next() (string, bool) {
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		if c == '\n' {
			s.line++
		}
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			break
		}
		s.pos++
	}
	if s.pos >= len(s.data) {
		return "", false
	}
	start := s.pos
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			break
		}
		s.pos++
	}
	return string(s.data[start:s.pos]), true
}

// restOfLine skips to the end of the line (solid and endsolid names).
func (s *stlTokens) restOfLine() {
	for s.pos < len(s.data) && s.data[s.pos] != '\n' {
		s.pos++
	}
}

// asciiSTL parses twice: once counting triangles (checked against the
// budgets), once building them.
func asciiSTL(data []byte, r *Reader) (*Primitive, error) {
	count, err := parseASCIISTL(data, nil)
	if err != nil {
		return nil, err
	}
	if err := r.CountGeometry(3*count, count); err != nil {
		return nil, err
	}
	t := newTriangles(count, uncoloredMaterial())
	if _, err := parseASCIISTL(data, &t); err != nil {
		return nil, err
	}
	return t.p, nil
}

var errSTLEnd = errors.New("unexpected end of file")

func parseASCIISTL(data []byte, t *triangles) (int64, error) {
	s := &stlTokens{data: data, line: 1}
	fail := func(format string, args ...any) (int64, error) {
		return 0, fmt.Errorf("line %d: %s", s.line, fmt.Sprintf(format, args...))
	}
	expect := func(words ...string) error {
		for _, w := range words {
			tok, ok := s.next()
			if !ok {
				return errSTLEnd
			}
			if !strings.EqualFold(tok, w) {
				return fmt.Errorf("want %q, got %q", w, clipWord(tok))
			}
		}
		return nil
	}
	floats := func(what string) (mgl32.Vec3, error) {
		var v mgl32.Vec3
		for i := range v {
			tok, ok := s.next()
			if !ok {
				return v, errSTLEnd
			}
			x, err := strconv.ParseFloat(tok, 32)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return v, fmt.Errorf("%s: %q is not a finite number", what, clipWord(tok))
			}
			v[i] = float32(x)
		}
		return v, nil
	}
	if err := expect("solid"); err != nil {
		return fail("%v", err)
	}
	s.restOfLine()
	var count int64
	for {
		tok, ok := s.next()
		if !ok {
			return fail("missing endsolid")
		}
		if strings.EqualFold(tok, "endsolid") {
			s.restOfLine()
			// Some files hold several solids one after another.
			tok, ok = s.next()
			if !ok {
				return count, nil
			}
			if !strings.EqualFold(tok, "solid") {
				return fail("want \"solid\" or the end of the file, got %q", clipWord(tok))
			}
			s.restOfLine()
			continue
		}
		if !strings.EqualFold(tok, "facet") {
			return fail("want \"facet\" or \"endsolid\", got %q", clipWord(tok))
		}
		if err := expect("normal"); err != nil {
			return fail("%v", err)
		}
		normal, err := floats("normal")
		if err != nil {
			return fail("%v", err)
		}
		if err := expect("outer", "loop"); err != nil {
			return fail("%v", err)
		}
		var loop []mgl32.Vec3
		for {
			tok, ok := s.next()
			if !ok {
				return fail("%v", errSTLEnd)
			}
			if strings.EqualFold(tok, "endloop") {
				break
			}
			if !strings.EqualFold(tok, "vertex") {
				return fail("want \"vertex\" or \"endloop\", got %q", clipWord(tok))
			}
			v, err := floats("vertex")
			if err != nil {
				return fail("%v", err)
			}
			if len(loop) < 3 {
				loop = append(loop, v)
			} else {
				loop[1] = loop[2]
				loop[2] = v
			}
			if len(loop) == 3 {
				count++
				if t != nil {
					t.add(loop[0], loop[1], loop[2], normal)
				}
			}
		}
		if len(loop) < 3 {
			return fail("a facet with %d vertices (want at least 3)", len(loop))
		}
		if err := expect("endfacet"); err != nil {
			return fail("%v", err)
		}
	}
}

// clipWord shortens a word an error quotes.
func clipWord(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
