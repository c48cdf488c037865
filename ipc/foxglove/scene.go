package foxglove

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors/ros2"
)

// Topics of the channels the server fills itself. Sensor and transform
// channels are the caller's (Advertise, Publish).
const (
	TopicScene    = "/simvis/scene"    // foxglove.SceneUpdate: one entity per part, its model embedded
	TopicOverlays = "/simvis/overlays" // foxglove.SceneUpdate: points, lines, graphs and labels
	TopicValues   = "/simvis/values"   // simvis.Values: every parameter's value
)

// Foxglove's JSON messages (foxglove.SceneUpdate and its parts), with the
// field names of @foxglove/schemas. Every list is sent, empty or not.
type (
	fgTime  struct{ Sec, Nsec uint32 }
	fgVec3  struct{ X, Y, Z float64 }
	fgQuat  struct{ X, Y, Z, W float64 }
	fgColor struct{ R, G, B, A float64 }
	fgPose  struct {
		Position    fgVec3 `json:"position"`
		Orientation fgQuat `json:"orientation"`
	}
	fgCube struct {
		Pose  fgPose  `json:"pose"`
		Size  fgVec3  `json:"size"`
		Color fgColor `json:"color"`
	}
	fgLine struct {
		Type           int       `json:"type"` // 2: line list
		Pose           fgPose    `json:"pose"`
		Thickness      float64   `json:"thickness"`
		ScaleInvariant bool      `json:"scale_invariant"`
		Points         []fgVec3  `json:"points"`
		Color          fgColor   `json:"color"`
		Colors         []fgColor `json:"colors"`
		Indices        []uint32  `json:"indices"`
	}
	fgText struct {
		Pose           fgPose  `json:"pose"`
		Billboard      bool    `json:"billboard"`
		FontSize       float64 `json:"font_size"`
		ScaleInvariant bool    `json:"scale_invariant"`
		Color          fgColor `json:"color"`
		Text           string  `json:"text"`
	}
	fgModel struct {
		Pose          fgPose  `json:"pose"`
		Scale         fgVec3  `json:"scale"`
		Color         fgColor `json:"color"`
		OverrideColor bool    `json:"override_color"`
		URL           string  `json:"url"`
		MediaType     string  `json:"media_type"`
		Data          string  `json:"data"` // base64, as JSON carries bytes
	}
	fgKV struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	}
	fgEntity struct {
		Timestamp   fgTime    `json:"timestamp"`
		FrameID     string    `json:"frame_id"`
		ID          string    `json:"id"`
		Lifetime    fgTime    `json:"lifetime"`
		FrameLocked bool      `json:"frame_locked"`
		Metadata    []fgKV    `json:"metadata"`
		Arrows      []any     `json:"arrows"`
		Cubes       []fgCube  `json:"cubes"`
		Spheres     []any     `json:"spheres"`
		Cylinders   []any     `json:"cylinders"`
		Lines       []fgLine  `json:"lines"`
		Triangles   []any     `json:"triangles"`
		Texts       []fgText  `json:"texts"`
		Models      []fgModel `json:"models"`
	}
	fgDeletion struct {
		Timestamp fgTime `json:"timestamp"`
		Type      int    `json:"type"` // 0: the entity with this id
		ID        string `json:"id"`
	}
	fgSceneUpdate struct {
		Deletions []any      `json:"deletions"`
		Entities  []fgEntity `json:"entities"`
	}
)

func (t fgTime) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, `{"sec":%d,"nsec":%d}`, t.Sec, t.Nsec), nil
}
func (v fgVec3) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, `{"x":%s,"y":%s,"z":%s}`, num(v.X), num(v.Y), num(v.Z)), nil
}
func (q fgQuat) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, `{"x":%s,"y":%s,"z":%s,"w":%s}`, num(q.X), num(q.Y), num(q.Z), num(q.W)), nil
}
func (c fgColor) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, `{"r":%s,"g":%s,"b":%s,"a":%s}`, num(c.R), num(c.G), num(c.B), num(c.A)), nil
}

// num writes a finite float in JSON; the scene's numbers are checked
// finite, a guard keeps a message valid regardless.
func num(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "0"
	}
	b, _ := json.Marshal(x)
	return string(b)
}

func stampOf(ns uint64) fgTime { return fgTime{uint32(ns / 1e9), uint32(ns % 1e9)} }

func newEntity(id, frame string, ts uint64) fgEntity {
	return fgEntity{Timestamp: stampOf(ts), FrameID: frame, ID: id, FrameLocked: true,
		Metadata: []fgKV{}, Arrows: []any{}, Cubes: []fgCube{}, Spheres: []any{}, Cylinders: []any{},
		Lines: []fgLine{}, Triangles: []any{}, Texts: []fgText{}, Models: []fgModel{}}
}

var identity = fgPose{Orientation: fgQuat{W: 1}}

// poseOf converts a rigid transform (any scale is dropped) to a pose.
func poseOf(m mgl64.Mat4) fgPose {
	q := mgl64.Mat4ToQuat(m).Normalize()
	return fgPose{Position: fgVec3{m[12], m[13], m[14]}, Orientation: fgQuat{q.V[0], q.V[1], q.V[2], q.W}}
}

// sceneState is what Update last published on the scene channels.
type sceneState struct {
	ids                    [3]uint32 // scene, overlays, values channels
	looks                  []look    // each part's appearance, as last sent
	styleSent              time.Time // when a scene message went out last
	now                    func() time.Time
	modelNodes             map[*scene.PartEntry]*scene.Node
	parts                  int
	partPoses              []mgl64.Mat4
	overlayVals            []float64
	overlays               int
	values                 []float64
	valuesSent, sceneFresh bool
	last                   *scene.Scene // the scene of the last Update
	// paramsRead: UpdateParams has read this cycle's parameters, and
	// Update does not read them again.
	paramsRead bool
}

// Update publishes what changed in the scene since the last call: the
// parameters (to their subscribers, and settling drivers' writes), the
// values, the parts and the overlays. Call it on the goroutine that owns
// sc, after every host cycle or mirror sync; ts is the scene time in
// nanoseconds that stamps the messages.
func (s *Server) Update(sc *scene.Scene, ts uint64) {
	st := &s.scene
	if st.ids[0] == 0 {
		st.ids[0] = s.Advertise(Channel{Topic: TopicScene, Encoding: "json", SchemaName: "foxglove.SceneUpdate",
			Schema: sceneUpdateSchema, SchemaEncoding: "jsonschema"})
		st.ids[1] = s.Advertise(Channel{Topic: TopicOverlays, Encoding: "json", SchemaName: "foxglove.SceneUpdate",
			Schema: sceneUpdateSchema, SchemaEncoding: "jsonschema"})
		s.sceneChan.Store(st.ids[0])
		st.ids[2] = s.Advertise(Channel{Topic: TopicValues, Encoding: "json", SchemaName: "simvis.Values",
			Schema: valuesSchema, SchemaEncoding: "jsonschema"})
		if st.now == nil {
			st.now = time.Now
		}
		st.modelNodes = map[*scene.PartEntry]*scene.Node{}
	}
	if !st.paramsRead {
		s.UpdateParams(sc)
	}
	st.paramsRead = false
	s.publishParts(sc, ts)
	s.publishOverlays(sc, ts)
	s.publishValues(sc, ts)
	s.reportDrops()
}

// UpdateParams reads the scene's parameters (their names and values, to
// their subscribers, settling drivers' writes), the first part of Update.
// A caller that publishes messages naming the scene's parameters (joint
// states) calls it first in a cycle, so that a client acting on such a
// message finds the parameter listed; Update then does not read them
// again that cycle (a second read would count as a second cycle for the
// writes being settled). Same goroutine as Update.
func (s *Server) UpdateParams(sc *scene.Scene) {
	st := &s.scene
	if st.last != sc {
		// A new scene (a mirror rebuilt after its host restarted): name
		// its parameters and send its parts and overlays afresh.
		st.last = sc
		st.parts, st.partPoses, st.looks, st.overlays, st.sceneFresh, st.valuesSent = -1, nil, nil, -1, false, false
		clear(st.modelNodes)
		s.params.mu.Lock()
		s.params.names, s.params.known, s.params.values = nil, 0, nil
		clear(s.params.index)
		s.params.mu.Unlock()
	}
	s.updateParams(sc)
	st.paramsRead = true
}

// look is how the scene shows a part's model: switched off or on, and
// the color override it is drawn with (Node.Appearance).
type look struct {
	shown   bool
	colored bool
	color   [4]float32
}

// publishParts sends one entity per part that the scene shows, in the
// frame of the part's own insertion point (which /tf moves), and a
// deletion for every part switched off. It sends when parts were added or
// a model moved relative to its insertion point, and when a part was
// switched or recolored (then at most once per StyleInterval, the latest
// look winning).
func (s *Server) publishParts(sc *scene.Scene, ts uint64) {
	st := &s.scene
	parts := sc.Parts()
	poses := make([]mgl64.Mat4, 0, len(parts))
	models := make([]*models.Model, 0, len(parts))
	looks := make([]look, 0, len(parts))
	for _, p := range parts {
		m, rel, n := s.partModel(sc, p)
		poses = append(poses, rel)
		models = append(models, m)
		var lk look
		var c *[4]float32
		lk.shown, c = n.Appearance()
		if c != nil {
			lk.colored, lk.color = true, *c
		}
		looks = append(looks, lk)
	}
	moved := len(parts) != st.parts || !samePoses(poses, st.partPoses)
	restyled := !slices.Equal(looks, st.looks)
	if !moved && !restyled {
		return
	}
	now := st.now()
	if !moved && now.Sub(st.styleSent) < s.opts.StyleInterval {
		return // sent by a later Update, with the look then
	}
	st.parts, st.partPoses, st.looks, st.styleSent = len(parts), poses, looks, now
	// The host's goroutine only describes the scene; the builder encodes
	// models and entities (sceneWorker).
	job := &sceneJob{ts: ts, parts: make([]scenePart, len(parts))}
	for i, p := range parts {
		job.parts[i] = scenePart{name: p.Name, file: p.File, at: p.At, m: models[i], pose: poses[i], look: looks[i]}
	}
	s.build.submit(job)
}

// partModel finds a part's model and its pose relative to the part's own
// insertion point. Elements' transforms nest the model below them, so it
// is looked for in the part's subtree (once) by its owner.
// The node returned is the one whose appearance the part's entity shows:
// the model's, or the part's own where it has none.
func (s *Server) partModel(sc *scene.Scene, p *scene.PartEntry) (*models.Model, mgl64.Mat4, *scene.Node) {
	ip, ok := sc.InsertionPoint(p.Name)
	if !ok {
		return nil, mgl64.Ident4(), p.Node
	}
	n, seen := s.scene.modelNodes[p]
	if !seen {
		found := errors.New("found")
		p.Node.Walk(func(m *scene.Node) error {
			if m.Kind == scene.KindModel && m.Owner == p.Name {
				n = m
				return found
			}
			return nil
		})
		s.scene.modelNodes[p] = n
	}
	if n == nil {
		return nil, mgl64.Ident4(), p.Node
	}
	inv, ok := scene.InvertAffine(ip.World())
	if !ok {
		return n.Model(), mgl64.Ident4(), n
	}
	return n.Model(), inv.Mul4(n.World()), n
}

func samePoses(a, b []mgl64.Mat4) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].ApproxEqualThreshold(b[i], 1e-9) {
			return false
		}
	}
	return true
}

// glbKey names one encoding of a model: as loaded, or recolored.
type glbKey struct {
	m       *models.Model
	colored bool
	color   [4]float32
}

func (s *Server) publishJSON(id uint32, ts uint64, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		s.opts.Warn("foxglove-json", "foxglove: %v", err)
		return
	}
	s.Publish(id, ts, data)
}

// publishOverlays sends one entity per overlay element when any of their
// values changed or one was added.
func (s *Server) publishOverlays(sc *scene.Scene, ts uint64) {
	st := &s.scene
	vals := sc.Values()
	var now []float64
	var list []*scene.ElementEntry
	for _, e := range sc.Elements() {
		// The element says whether it is drawn as primitives.
		if _, ok := e.Element.(scene.Overlayer); ok && e.Start+len(e.Params) <= len(vals) {
			list = append(list, e)
			now = append(now, vals[e.Start:e.Start+len(e.Params)]...)
		}
	}
	if len(list) == st.overlays && sameValues(now, st.overlayVals) && st.sceneFresh {
		return
	}
	st.overlays, st.overlayVals, st.sceneFresh = len(list), now, true
	up := fgSceneUpdate{Deletions: []any{}, Entities: []fgEntity{}}
	var ids map[string]string // tf frame ids: a robot's links are named by their link names
	if len(list) > 0 {
		ids = ros2.FrameIDs(sc)
	}
	for _, e := range list {
		ov := e.Element.(scene.Overlayer).Overlay(vals[e.Start : e.Start+len(e.Params)])
		frame, ok := ids[e.At]
		if !ok {
			frame = ros2.FrameID(e.At)
		}
		up.Entities = append(up.Entities, overlayEntity(e, frame, ov, ts))
	}
	s.publishJSON(st.ids[1], ts, up)
}

func sameValues(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

func fgRGB(c [3]float32) fgColor { return fgColor{float64(c[0]), float64(c[1]), float64(c[2]), 1} }

// overlayEntity draws an overlay element's primitives (scene.Overlay) as
// Foxglove's, in its insertion point's frame: cubes, line lists (width in
// pixels) and billboard texts. frame is the tf frame id of its insertion
// point.
func overlayEntity(e *scene.ElementEntry, frame string, ov scene.Overlay, ts uint64) fgEntity {
	ent := newEntity("overlay:"+e.Name, frame, ts)
	ent.Metadata = append(ent.Metadata, fgKV{"type", e.Type})
	for _, c := range ov.Cubes {
		p := identity
		p.Position = fgVec3{c.Center[0], c.Center[1], c.Center[2]}
		ent.Cubes = append(ent.Cubes, fgCube{Pose: p, Size: fgVec3{c.Size, c.Size, c.Size}, Color: fgRGB(c.Color)})
	}
	for _, ls := range ov.Lines {
		l := fgLine{Type: 2, Pose: identity, Thickness: ls.Width, ScaleInvariant: true,
			Color: fgRGB(ls.Color), Points: []fgVec3{}, Colors: []fgColor{}, Indices: []uint32{}}
		for _, p := range ls.Points {
			l.Points = append(l.Points, fgVec3{p[0], p[1], p[2]})
		}
		ent.Lines = append(ent.Lines, l)
	}
	for _, t := range ov.Texts {
		p := identity
		p.Position = fgVec3{t.At[0], t.At[1], t.At[2]}
		ent.Texts = append(ent.Texts, fgText{Pose: p, Billboard: true, FontSize: t.Height, Color: fgRGB(t.Color), Text: t.Text})
	}
	return ent
}

// publishValues sends every parameter's value, by name, when any changed.
func (s *Server) publishValues(sc *scene.Scene, ts uint64) {
	st := &s.scene
	vals := sc.Values()
	if st.valuesSent && sameValues(vals, st.values) {
		return
	}
	st.values, st.valuesSent = append(st.values[:0], vals...), true
	named := map[string]float64{}
	for _, e := range sc.Elements() {
		for i, p := range e.Params {
			if e.Start+i < len(vals) {
				named[e.Name+"."+p.Name] = vals[e.Start+i]
			}
		}
	}
	s.publishJSON(st.ids[2], ts, map[string]any{"timestamp": stampOf(ts), "values": named})
}
