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
}

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
	Graph    *NodeInfo      `json:"graph"`
	Elements []ElementInfo  `json:"elements"`
	Sensors  []SensorInfo   `json:"sensors"`
	Meshes   MeshStats      `json:"meshes"`
	Models   map[string]int `json:"models"` // loaded model file -> parts using it
}

// Inspect describes the scene: its graph like the paper's Fig. 2, elements
// with their parameter table runs, sensors, and how much geometry is shared.
func (s *Scene) Inspect() (*Info, error) {
	if err := s.Update(); err != nil {
		return nil, err
	}
	info := &Info{Graph: s.nodeInfo(s.top, attachments(s.top)), Meshes: s.MeshStats(), Models: map[string]int{}}
	for _, e := range s.elements {
		ei := ElementInfo{Name: e.Name, Type: e.Type, At: e.At, Start: e.Start}
		for i, p := range e.Params {
			ei.Params = append(ei.Params, p.Name)
			ei.Values = append(ei.Values, s.values[e.Start+i])
		}
		info.Elements = append(info.Elements, ei)
	}
	for _, se := range s.sensors {
		info.Sensors = append(info.Sensors, SensorInfo{Name: se.Name, Type: se.Type, At: se.At,
			World: PoseFromMatrix(se.Frame.World()), Settings: se.Sensor.Describe()})
	}
	for _, p := range s.parts {
		info.Models[p.File]++
	}
	return info, nil
}

func (s *Scene) nodeInfo(n *Node, attached map[*Node]bool) *NodeInfo {
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
	for _, c := range n.children {
		// A model's own nodes are shown only where something is attached
		// inside them; the model line summarises the rest.
		if c.Kind == KindModelNode && !attached[c] {
			continue
		}
		ni.Children = append(ni.Children, s.nodeInfo(c, attached))
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
// than model nodes, found in one pass (asking each node would cost the
// depth of deep models each).
func attachments(top *Node) map[*Node]bool {
	attached := map[*Node]bool{}
	var walk func(n *Node) bool
	walk = func(n *Node) bool {
		found := n.Kind != KindModelNode
		for _, c := range n.children {
			if walk(c) {
				found = true
			}
		}
		if found && n.Kind == KindModelNode {
			attached[n] = true
		}
		return found
	}
	walk(top)
	return attached
}

// WriteTree prints the scene graph as an indented tree.
func (info *Info) WriteTree(w io.Writer) {
	var walk func(n *NodeInfo, indent string, last bool, top bool)
	walk = func(n *NodeInfo, indent string, last, top bool) {
		branch, next := "├─ ", "│  "
		if last {
			branch, next = "└─ ", "   "
		}
		if top {
			branch, next = "", ""
		}
		fmt.Fprintf(w, "%s%s%s\n", indent, branch, n.line())
		for i, c := range n.Children {
			walk(c, indent+next, i == len(n.Children)-1, false)
		}
	}
	walk(info.Graph, "", true, true)
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
