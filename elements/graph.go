package elements

import (
	"fmt"
	"strings"

	"github.com/g3n/engine/math32"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

func init() { scene.RegisterElement("graph", newGraph) }

// graph overlays a navigation graph (paper Fig. 6): a cube marker per node at
// a parametrized position and a line per edge. Nodes are named in XML
// (nodes="DOOR DESK LAB"), edges join them (edges="DOOR-DESK DESK-LAB"), and
// node N's position is parameters N_x N_y N_z in the insertion point's frame.
type graph struct {
	params  []scene.Param
	markers []*scene.Node
	edges   [][2]int
	lines   *lineSet
	// For Overlay: marker_size, width and the colors.
	size, width          float64
	nodeColor, edgeColor math32.Color
}

func newGraph(ctx *scene.Context) (scene.Element, error) {
	c := ctx.Command
	g := &graph{}
	names, err := c.Required("nodes")
	if err != nil {
		return nil, err
	}
	index := map[string]int{}
	for _, n := range strings.Fields(names) {
		if !scene.ValidName(n) {
			return nil, c.Errorf("nodes", "%q is not a valid node name (letters, digits, '_' and '-')", n)
		}
		if _, dup := index[n]; dup {
			return nil, c.Errorf("nodes", "node %q is listed twice", n)
		}
		index[n] = len(g.params) / 3
		g.params = append(g.params, scene.Param{Name: n + "_x"}, scene.Param{Name: n + "_y"}, scene.Param{Name: n + "_z"})
	}
	if e, ok := c.Attr("edges"); ok {
		for _, pair := range strings.Fields(e) {
			edge, err := parseEdge(pair, index)
			if err != nil {
				return nil, c.Errorf("edges", "%v", err)
			}
			g.edges = append(g.edges, edge)
		}
	}
	size, err := c.Float("marker_size", 0.15)
	if err != nil {
		return nil, err
	}
	if size <= 0 || size > 100 {
		return nil, c.Errorf("marker_size", "%g m is not in (0, 100]", size)
	}
	nodeColor, err := readRGB(c, "color", [3]float64{0.1, 0.4, 1})
	if err != nil {
		return nil, err
	}
	edgeColor, err := readRGB(c, "edge_color", [3]float64{1, 0.8, 0.1})
	if err != nil {
		return nil, err
	}
	width, err := c.FloatIn("width", 2, 1, 32)
	if err != nil {
		return nil, err
	}

	g.size, g.width, g.nodeColor, g.edgeColor = size, width, nodeColor, edgeColor
	sep := ctx.InsertSeparator(mgl64.Ident4())
	// One marker mesh for all nodes: one GPU geometry however many nodes.
	marker := models.Box("marker", size, size, size, [4]float32{nodeColor.R, nodeColor.G, nodeColor.B, 1})
	for n := 0; n < len(g.params)/3; n++ {
		name := strings.TrimSuffix(g.params[3*n].Name, "_x")
		g.markers = append(g.markers, ctx.AddMesh(sep, name, mgl64.Ident4(), marker))
	}
	g.lines = newLineSet(max(1, len(g.edges)), edgeColor, float32(width))
	sep.G3N().Add(g.lines.graphic)
	return g, nil
}

// parseEdge reads "A-B". Node names may hold '-' themselves, so every split
// point is tried and exactly one must name two listed nodes.
func parseEdge(pair string, index map[string]int) ([2]int, error) {
	var edge [2]int
	found := 0
	for i, r := range pair {
		if r != '-' {
			continue
		}
		a, okA := index[pair[:i]]
		b, okB := index[pair[i+1:]]
		if okA && okB {
			edge = [2]int{a, b}
			found++
		}
	}
	switch found {
	case 0:
		return edge, fmt.Errorf("%q is not an edge A-B between listed nodes", pair)
	case 1:
		return edge, nil
	}
	return edge, fmt.Errorf("edge %q is ambiguous: node names with '-' split it more than one way", pair)
}

func (g *graph) Params() []scene.Param { return g.params }

func (g *graph) Apply(v []float64) error {
	for i, m := range g.markers {
		m.SetLocal(mgl64.Translate3D(v[3*i], v[3*i+1], v[3*i+2]))
	}
	buf := g.lines.buffer()
	for _, e := range g.edges {
		for _, n := range e {
			buf = append(buf, float32(v[3*n]), float32(v[3*n+1]), float32(v[3*n+2]))
		}
	}
	g.lines.set(buf)
	return nil
}
