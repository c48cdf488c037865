package scene

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// NodeInfo is the JSON form of a scene graph node.
type NodeInfo struct {
	Kind      string      `json:"kind"`
	Name      string      `json:"name,omitempty"`
	Owner     string      `json:"owner,omitempty"`
	Pose      *Pose       `json:"pose,omitempty"` // local transform, where not identity
	File      string      `json:"file,omitempty"`
	Meshes    int         `json:"meshes,omitempty"`
	Triangles int         `json:"triangles,omitempty"`
	Color     *[4]float32 `json:"color,omitempty"`      // color override r g b a
	Off       bool        `json:"off,omitempty"`        // switched off
	NotSensed bool        `json:"not_sensed,omitempty"` // sensed="false"
	Children  []*NodeInfo `json:"children,omitempty"`
	// Continued, where not 0, says that the node's children are those of
	// Info.Subtrees[Continued-1], the same node: nesting stops every
	// MaxGraphNesting levels (see Info.Subtrees).
	Continued int `json:"continued,omitempty"`
	// Depth is the node's depth in the graph (the scene root 0), given on
	// the nodes that start a subtree (Info.Subtrees).
	Depth int `json:"depth,omitempty"`
}

// MaxGraphNesting bounds how deep Info.Graph, and each of Info.Subtrees,
// nests: JSON readers refuse deep nesting (encoding/json at 10,000 levels,
// two per node), and a chain of 2,500 parts is 10,000 nodes deep.
const MaxGraphNesting = 64

// ElementInfo is the JSON form of an element.
type ElementInfo struct {
	Name   string    `json:"name"`
	Type   string    `json:"type"`
	At     string    `json:"insert_at"`
	Start  int       `json:"start"`
	Params []string  `json:"params"`
	Values []float64 `json:"values"` // in Params order
}

// SensorInfo is the JSON form of a sensor.
type SensorInfo struct {
	Name     string         `json:"name"`
	Type     string         `json:"type"`
	At       string         `json:"insert_at"`
	World    Pose           `json:"world_pose"`
	Settings map[string]any `json:"settings"`
}

// Info is the whole scene as inspect shows it.
type Info struct {
	Graph *NodeInfo `json:"graph"`
	// Subtrees continue the graph where it nests deeper than
	// MaxGraphNesting levels: a node at that depth with children is shown
	// in its parent's Children without them and with Continued = i+1, and
	// Subtrees[i] is that node again, with its children (nesting at most
	// as deep again, and so on). Absent for every graph of ordinary depth.
	Subtrees []*NodeInfo    `json:"subtrees,omitempty"`
	Elements []ElementInfo  `json:"elements"`
	Sensors  []SensorInfo   `json:"sensors"`
	Meshes   MeshStats      `json:"meshes"`
	Models   map[string]int `json:"models"` // loaded model file -> parts using it
}

// Inspect describes the scene: its graph like the paper's Fig. 2, elements
// with their parameter table runs, sensors, and how much geometry is shared.
// Its work and memory are linear in the scene's size whatever its depth.
func (s *Scene) Inspect() (*Info, error) {
	if err := s.Update(); err != nil {
		return nil, err
	}
	info := &Info{Meshes: s.MeshStats(), Models: map[string]int{}}
	info.Graph, info.Subtrees = s.graphInfo(attachments(s.top))
	for _, e := range s.elements {
		ei := ElementInfo{Name: e.Name, Type: e.Type, At: e.At, Start: e.Start}
		for i, p := range e.Params {
			ei.Params = append(ei.Params, p.Name)
			ei.Values = append(ei.Values, s.values[e.Start+i])
		}
		info.Elements = append(info.Elements, ei)
	}
	frames := make([]*Node, len(s.sensors))
	for i, se := range s.sensors {
		frames[i] = se.Frame
	}
	worlds := s.worlds(frames)
	for i, se := range s.sensors {
		info.Sensors = append(info.Sensors, SensorInfo{Name: se.Name, Type: se.Type, At: se.At,
			World: PoseFromMatrix(worlds[i]), Settings: se.Sensor.Describe()})
	}
	for _, p := range s.parts {
		info.Models[p.File]++
	}
	return info, nil
}

// graphInfo describes the graph below the top group, without recursion,
// cutting its nesting into pieces of MaxGraphNesting levels.
func (s *Scene) graphInfo(attached map[*Node]bool) (*NodeInfo, []*NodeInfo) {
	type frame struct {
		n     *Node
		ni    *NodeInfo
		depth int // in the graph
		level int // in the piece of nesting it belongs to
	}
	var subtrees []*NodeInfo
	top := s.describeNode(s.top)
	stack := []frame{{s.top, top, 0, 0}}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		// A model's own nodes are shown only where something is attached
		// inside them; the model line summarises the rest.
		var shown []*Node
		for _, c := range f.n.children {
			if c.Kind != KindModelNode || attached[c] {
				shown = append(shown, c)
			}
		}
		if len(shown) == 0 {
			continue
		}
		level, holder := f.level, f.ni
		if level >= MaxGraphNesting {
			// The node's children go on in a subtree of their own.
			cont := *f.ni
			cont.Depth = f.depth
			subtrees = append(subtrees, &cont)
			f.ni.Continued = len(subtrees)
			level, holder = 0, &cont
		}
		holder.Children = make([]*NodeInfo, len(shown))
		for i, c := range shown {
			holder.Children[i] = s.describeNode(c)
		}
		for i := len(shown) - 1; i >= 0; i-- {
			stack = append(stack, frame{shown[i], holder.Children[i], f.depth + 1, level + 1})
		}
	}
	return top, subtrees
}

// describeNode is n's NodeInfo without its children.
func (s *Scene) describeNode(n *Node) *NodeInfo {
	ni := &NodeInfo{Kind: n.Kind.String(), Name: n.Name, Owner: n.Owner}
	if ni.Owner == ni.Name {
		ni.Owner = ""
	}
	if !isIdentity(n) {
		p := PoseFromMatrix(n.local)
		ni.Pose = &p
	}
	ni.Color, ni.Off, ni.NotSensed = n.color, n.hidden, n.unsensed
	if n.model != nil {
		ni.File = n.model.Path
		ni.Meshes = len(n.model.Meshes)
		ni.Triangles = n.model.TriangleCount()
	}
	return ni
}

func isIdentity(n *Node) bool {
	for i, v := range n.local {
		want := 0.0
		if i%5 == 0 {
			want = 1
		}
		if v != want {
			return false
		}
	}
	return true
}

// attachments returns the model nodes whose subtrees hold something other
// than model nodes, found in one pass without recursion (asking each node
// would cost the depth of deep models each).
func attachments(top *Node) map[*Node]bool {
	attached := map[*Node]bool{}
	// Post order: a node is finished after its children, and marks its
	// parent when it is, or holds, something other than a model node.
	type frame struct {
		n    *Node
		next int
	}
	found := map[*Node]bool{}
	stack := []frame{{top, 0}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next < len(f.n.children) {
			f.next++
			stack = append(stack, frame{f.n.children[f.next-1], 0})
			continue
		}
		n := f.n
		stack = stack[:len(stack)-1]
		if n.Kind != KindModelNode || found[n] {
			if n.Kind == KindModelNode {
				attached[n] = true
			}
			if n.parent != nil {
				found[n.parent] = true
			}
		}
		delete(found, n)
	}
	return attached
}

// maxTreeIndent bounds the indentation of WriteTree's lines: deeper nodes
// are printed at that indentation, marked with their depth, so a chain of
// 10,000 parts prints in linear time and space instead of 40,000 lines of
// growing indentation.
const maxTreeIndent = 40

// WriteTree prints the scene graph as an indented tree, following the
// graph's continuations (Info.Subtrees). Lines nested deeper than 40
// levels keep the 40th level's indentation and start with "[depth N]".
func (info *Info) WriteTree(w io.Writer) {
	children := func(n *NodeInfo) []*NodeInfo {
		if n.Continued > 0 && n.Continued <= len(info.Subtrees) {
			return info.Subtrees[n.Continued-1].Children
		}
		return n.Children
	}
	type frame struct {
		n     *NodeInfo
		depth int
		last  bool // its parent's last child
	}
	// last[d] tells whether the node printed at depth d was its parent's
	// last child: it decides the rule drawn below it.
	var last []bool
	var line strings.Builder
	stack := []frame{{info.Graph, 0, true}}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		last = append(last[:min(f.depth, len(last))], f.last)
		line.Reset()
		shown := min(f.depth, maxTreeIndent)
		for d := 1; d < shown; d++ {
			if last[d] {
				line.WriteString("   ")
			} else {
				line.WriteString("│  ")
			}
		}
		if f.depth > 0 {
			if !f.last {
				line.WriteString("├─ ")
			} else {
				line.WriteString("└─ ")
			}
		}
		if f.depth >= maxTreeIndent {
			fmt.Fprintf(&line, "[depth %d] ", f.depth)
		}
		line.WriteString(f.n.line())
		line.WriteByte('\n')
		io.WriteString(w, line.String())
		cs := children(f.n)
		for i := len(cs) - 1; i >= 0; i-- {
			stack = append(stack, frame{cs[i], f.depth + 1, i == len(cs)-1})
		}
	}
}

func (n *NodeInfo) line() string {
	var b strings.Builder
	switch n.Kind {
	case "group":
		b.WriteString("group (scene root)")
	case "insertion_point":
		fmt.Fprintf(&b, "insertion point %s", n.Name)
	case "model":
		fmt.Fprintf(&b, "model %s (%d meshes, %d triangles)", n.Name, n.Meshes, n.Triangles)
	default:
		fmt.Fprintf(&b, "%s %s", strings.ReplaceAll(n.Kind, "_", " "), n.Name)
	}
	if n.Owner != "" && n.Kind != "model" {
		fmt.Fprintf(&b, " [%s]", n.Owner)
	}
	if n.Pose != nil {
		fmt.Fprintf(&b, "  pose %s", n.Pose)
	}
	if c := n.Color; c != nil {
		fmt.Fprintf(&b, "  color %g %g %g %g", c[0], c[1], c[2], c[3])
	}
	if n.Off {
		b.WriteString("  (off)")
	}
	if n.NotSensed {
		b.WriteString("  (not sensed)")
	}
	return b.String()
}

// WriteSummary prints elements, sensors and sharing figures after the tree.
func (info *Info) WriteSummary(w io.Writer) {
	// Columns as wide as their longest entry in either table (at least the
	// widths short names always had), so long names do not shift the rows.
	name, typ, at := 16, 10, 12
	for _, e := range info.Elements {
		name, typ, at = max(name, len(e.Name)), max(typ, len(e.Type)), max(at, len(e.At))
	}
	for _, se := range info.Sensors {
		name, typ, at = max(name, len(se.Name)), max(typ, len(se.Type)), max(at, len(se.At))
	}
	if len(info.Elements) > 0 {
		fmt.Fprintln(w, "\nelements (parameter table order):")
		for _, e := range info.Elements {
			// Long runs (point clouds) are cut short; --json has them all.
			const shown = 12
			vals := make([]string, 0, shown+1)
			for i, p := range e.Params {
				if i == shown {
					vals = append(vals, fmt.Sprintf("... (%d parameters, start %d to %d)", len(e.Params), e.Start, e.Start+len(e.Params)-1))
					break
				}
				vals = append(vals, fmt.Sprintf("%s=%g", p, e.Values[i]))
			}
			fmt.Fprintf(w, "  %-*s %-*s at %-*s start %-4d %s\n", name, e.Name, typ, e.Type, at, e.At, e.Start, strings.Join(vals, " "))
		}
	}
	if len(info.Sensors) > 0 {
		fmt.Fprintln(w, "\nsensors:")
		for _, se := range info.Sensors {
			fmt.Fprintf(w, "  %-*s %-*s at %-*s world pose %s  %s\n", name, se.Name, typ, se.Type, at, se.At, se.World, formatSettings(se.Settings))
		}
	}
	m := info.Meshes
	fmt.Fprintf(w, "\nmeshes: %d instances share %d geometries (one GPU buffer set each) and %d materials; %d triangles drawn\n",
		m.Instances, m.Geometries, m.Materials, m.Triangles)
	for _, f := range sortedKeys(info.Models) {
		fmt.Fprintf(w, "  model %s: loaded once, used by %d part(s)\n", displayPath(f), info.Models[f])
	}
}

func formatSettings(m map[string]any) string {
	parts := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, m[k]))
	}
	return strings.Join(parts, " ")
}

// displayPath shortens an absolute path to one relative to the working
// directory when it lies below it.
func displayPath(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}
