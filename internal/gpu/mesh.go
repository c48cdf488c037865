package gpu

import (
	"errors"
	"fmt"
	"math"

	"github.com/g3n/engine/gls"
	"github.com/go-gl/mathgl/mgl32"
)

// Vertex attribute locations a Mesh feeds; shaders declare them with
// layout(location = N).
const (
	PositionAttrib = 0 // vec3
	TexCoordAttrib = 1 // vec2; reads (0, 0) for a mesh without texture coordinates
)

// Primitive selects what Mesh.Draw draws.
type Primitive int

const (
	// Triangles draws the triangle indices as filled triangles.
	Triangles Primitive = iota
	// Edges draws the edge indices (SetEdges) as line segments.
	Edges
	// Corners draws the triangle indices as points: every triangle's
	// corners, primitive k being index k.
	Corners
)

// Mesh is an indexed triangle mesh in GL buffers: positions and optional
// texture coordinates (PositionAttrib, TexCoordAttrib), triangle indices,
// and optionally a second index list of line segments over the same
// vertices (SetEdges). It is made with g3n's wrappers, so that g3n's
// object counts (gls.Stats) include it. All methods must be called inside
// Context.Do.
type Mesh struct {
	vao, positions, texCoords, indices uint32
	vertices                           int
	count                              int32

	edgeVAO, edgeIndices uint32
	edgeCount            int32
	hasEdges             bool
}

// NewMesh uploads a mesh. texCoords is empty or has one entry per
// position; every index must name a position. The vertex array binding is
// left at 0.
func NewMesh(gs *gls.GLS, positions []mgl32.Vec3, texCoords []mgl32.Vec2, indices []uint32) (*Mesh, error) {
	if len(texCoords) != 0 && len(texCoords) != len(positions) {
		return nil, fmt.Errorf("gpu: NewMesh: %d texture coordinates for %d positions", len(texCoords), len(positions))
	}
	if err := checkIndices(indices, len(positions)); err != nil {
		return nil, fmt.Errorf("gpu: NewMesh: %w", err)
	}
	m := &Mesh{vertices: len(positions), count: int32(len(indices))}
	m.vao = gs.GenVertexArray()
	gs.BindVertexArray(m.vao)
	m.positions = uploadBuffer(gs, gls.ARRAY_BUFFER, 12*len(positions), positions)
	gs.VertexAttribPointer(PositionAttrib, 3, gls.FLOAT, false, 0, 0)
	gs.EnableVertexAttribArray(PositionAttrib)
	if len(texCoords) > 0 {
		m.texCoords = uploadBuffer(gs, gls.ARRAY_BUFFER, 8*len(texCoords), texCoords)
		gs.VertexAttribPointer(TexCoordAttrib, 2, gls.FLOAT, false, 0, 0)
		gs.EnableVertexAttribArray(TexCoordAttrib)
	}
	m.indices = uploadBuffer(gs, gls.ELEMENT_ARRAY_BUFFER, 4*len(indices), indices)
	gs.BindVertexArray(0)
	return m, nil
}

// checkIndices refuses an index list GL would read out of bounds or whose
// length does not fit a draw's count.
func checkIndices(indices []uint32, vertices int) error {
	if len(indices) > math.MaxInt32 {
		return fmt.Errorf("%d indices, more than a draw takes", len(indices))
	}
	for i, k := range indices {
		if int64(k) >= int64(vertices) {
			return fmt.Errorf("index %d is %d, beyond %d vertices", i, k, vertices)
		}
	}
	return nil
}

// uploadBuffer makes a buffer bound to target holding size bytes of data
// (a slice of plain values; size 0 allocates nothing).
func uploadBuffer[T any](gs *gls.GLS, target uint32, size int, data []T) uint32 {
	buf := gs.GenBuffer()
	gs.BindBuffer(int(target), buf)
	if len(data) == 0 {
		gs.BufferData(target, 0, nil, gls.STATIC_DRAW) // g3n takes the address of data[0]
	} else {
		gs.BufferData(target, size, data, gls.STATIC_DRAW)
	}
	return buf
}

// SetEdges uploads the line segments Draw(Edges) draws: pairs of indices
// into the mesh's vertices, sharing its vertex buffers. A second call
// replaces the first.
func (m *Mesh) SetEdges(gs *gls.GLS, indices []uint32) error {
	if m.vao == 0 {
		return errMeshDeleted
	}
	if err := checkIndices(indices, m.vertices); err != nil {
		return fmt.Errorf("gpu: Mesh.SetEdges: %w", err)
	}
	m.deleteEdges(gs)
	m.edgeVAO = gs.GenVertexArray()
	gs.BindVertexArray(m.edgeVAO)
	gs.BindBuffer(gls.ARRAY_BUFFER, m.positions)
	gs.VertexAttribPointer(PositionAttrib, 3, gls.FLOAT, false, 0, 0)
	gs.EnableVertexAttribArray(PositionAttrib)
	if m.texCoords != 0 {
		gs.BindBuffer(gls.ARRAY_BUFFER, m.texCoords)
		gs.VertexAttribPointer(TexCoordAttrib, 2, gls.FLOAT, false, 0, 0)
		gs.EnableVertexAttribArray(TexCoordAttrib)
	}
	m.edgeIndices = uploadBuffer(gs, gls.ELEMENT_ARRAY_BUFFER, 4*len(indices), indices)
	gs.BindVertexArray(0)
	m.edgeCount = int32(len(indices))
	m.hasEdges = true
	return nil
}

var errMeshDeleted = errors.New("gpu: mesh deleted")

// HasEdges reports whether SetEdges was called.
func (m *Mesh) HasEdges() bool { return m.hasEdges }

// HasTexCoords reports whether the mesh has texture coordinates.
func (m *Mesh) HasTexCoords() bool { return m.texCoords != 0 }

// Indices returns the number of triangle indices (three per triangle).
func (m *Mesh) Indices() int { return int(m.count) }

// Draw binds the mesh's vertex array and draws what of it is asked with
// the current program; Edges draws nothing before SetEdges. The vertex
// array stays bound for the next draw: UnbindMesh after the last.
func (m *Mesh) Draw(gs *gls.GLS, what Primitive) {
	switch what {
	case Triangles:
		m.draw(gs, m.vao, gls.TRIANGLES, m.count)
	case Corners:
		m.draw(gs, m.vao, gls.POINTS, m.count)
	case Edges:
		m.draw(gs, m.edgeVAO, gls.LINES, m.edgeCount)
	}
}

func (m *Mesh) draw(gs *gls.GLS, vao, mode uint32, count int32) {
	if vao == 0 || count == 0 {
		return
	}
	gs.BindVertexArray(vao)
	gs.DrawElements(mode, count, gls.UNSIGNED_INT, 0)
}

// UnbindMesh binds no vertex array, so that later buffer bindings (g3n's
// own uploads) cannot change a mesh's.
func UnbindMesh(gs *gls.GLS) { gs.BindVertexArray(0) }

// Delete releases the mesh's GL objects; calling it again does nothing.
func (m *Mesh) Delete(gs *gls.GLS) {
	m.deleteEdges(gs)
	if m.vao != 0 {
		gs.DeleteVertexArrays(m.vao)
		m.vao = 0
	}
	for _, b := range []*uint32{&m.positions, &m.texCoords, &m.indices} {
		if *b != 0 {
			gs.DeleteBuffers(*b)
			*b = 0
		}
	}
	m.count = 0
}

func (m *Mesh) deleteEdges(gs *gls.GLS) {
	if m.edgeVAO != 0 {
		gs.DeleteVertexArrays(m.edgeVAO)
		gs.DeleteBuffers(m.edgeIndices)
		m.edgeVAO, m.edgeIndices = 0, 0
	}
	m.edgeCount, m.hasEdges = 0, false
}
