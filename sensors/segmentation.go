package sensors

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"math"
	"slices"
	"strconv"

	"github.com/g3n/engine/gls"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/gpu"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

func init() { scene.RegisterSensor("segmentation", newSegmentation) }

// MaxInstances bounds the instances (and so the classes) one segmentation
// sensor numbers: ids are written as 16-bit PNG values, 0 the background.
const MaxInstances = math.MaxUint16

// Segmentation is a camera that sees, per pixel, which instance and which
// class of thing the pixel center's ray meets first, for training and
// checking perception: it has a camera's geometry (the same view, pixel
// for pixel, and the same FrameInfo) and renders ids instead of colors,
// exactly (no antialiasing, no blending).
//
// An instance is a part, or an element that adds meshes (AddMesh), with
// every mesh its command made (a part embedded in a model is one of its
// own, "R1/HEAD"); its class is the command's class attribute (see
// scene.Scene.Class). Instance ids run from 1 in the order instances
// are first met, parts in command order before elements, and are kept for
// the sensor's life, so a sequence's frames agree; a part switched off
// keeps its id. Class ids are the 1-based positions of the numbered
// instances' classes in sorted order. 0 is the background in both, and the
// class of an instance without one. Geometry under sensed="false" is not
// seen, as by every sensor, and surfaces are seen from both sides, as by
// the range sensors. At most MaxInstances instances.
//
// XML: width, height (pixels, default 640x480), fov (horizontal, degrees,
// default 60) or vfov, near and far (meters, default 0.05 and 100), and a
// lens (distortion_model and its coefficients), as for a camera: ids are
// rendered undistorted over the field and each pixel takes the id nearest
// its ray, never a mix.
type Segmentation struct {
	name  string
	frame *scene.Node
	view  View
	sv    surfaceView
	yTan  []float64 // per column of the render: the pixel center ray's y over x
	zTan  []float64 // per row: z over x
	dist  Distortion
	umap  *undistortMap  // nil for an ideal pinhole; then the render is the image
	gltf  *models.Camera // what Export writes (ExportCamera)

	ids    map[string]int // instance (part or element name) -> id
	owners []string       // owners[id-1]: the instance's name
	meshes []scene.MeshInstance
	pixels []float32
}

func newSegmentation(ctx *scene.Context) (scene.Sensor, error) {
	c := ctx.Command
	sg := &Segmentation{name: ctx.Name, frame: ctx.Frame, ids: map[string]int{}}
	v := &sg.view
	if err := readPinhole(c, v); err != nil {
		return nil, err
	}
	if err := readClipping(c, v); err != nil {
		return nil, err
	}
	var err error
	if sg.dist, err = readDistortion(c); err != nil {
		return nil, err
	}
	grid := v.intrinsics()
	if !sg.dist.IsIdentity() {
		if sg.umap, err = newUndistortMap(c, grid, sg.dist); err != nil {
			return nil, err
		}
		grid = sg.umap.wideIntrinsics()
	}
	var tanX, tanY float64
	sg.yTan, sg.zTan, tanX, tanY = grid.pixelRays()
	// The projection is infinite; far only culls here, and pixels whose
	// depth lies beyond it are cleared after the render, as a camera's far
	// plane clips them.
	far := v.Far * math.Sqrt(1+tanX*tanX+tanY*tanY) * 1.01
	sg.sv = surfaceView{rot: mgl64.Ident4(), w: grid.Width, h: grid.Height, tanX: tanX, tanY: tanY, near: v.Near, far: far}
	sg.gltf = gltfCamera(c, "near", "far", 0.05, 100)
	return sg, nil
}

// Intrinsics returns the sensor's pinhole parameters and lens (those of a
// camera with the same attributes).
func (sg *Segmentation) Intrinsics() Intrinsics {
	in := sg.view.intrinsics()
	in.Distortion = sg.dist
	return in
}

// Describe implements scene.Sensor.
func (sg *Segmentation) Describe() map[string]any {
	v := sg.view
	m := map[string]any{"width": v.Width, "height": v.Height, "fov": v.HFOV, "near": v.Near, "far": v.Far}
	if !sg.dist.IsIdentity() {
		m["distortion_model"], m["D"] = sg.dist.ModelName(), sg.dist.D()
	}
	return m
}

// SegmentationImage is one segmentation frame: per pixel, top row first,
// the instance id and the class id (0: background or unclassed).
type SegmentationImage struct {
	Info     FrameInfo
	Instance []uint16
	Class    []uint16
	Labels   Labels
}

// Labels is what NAME.labels.json holds: the sensor and stamp, every
// instance numbered so far by id (decimal strings, from "1") with its name
// (the part or element), its class ("" none), class id and the pixels it
// covers in this frame, and every class id with its class name.
type Labels struct {
	Sensor    string            `json:"sensor"`
	Stamp     *Stamp            `json:"stamp,omitempty"`
	Instances map[string]Label  `json:"instances"`
	Classes   map[string]string `json:"classes"`
}

// Label describes one instance.
type Label struct {
	Name    string `json:"name"`
	Class   string `json:"class,omitempty"`
	ClassID int    `json:"class_id"`
	Pixels  int    `json:"pixels"`
}

// number gives new instances (parts and elements that own sensed meshes,
// switched on or not) their ids: parts in command order, then elements,
// then any other owner by name.
func (sg *Segmentation) number(s *scene.Scene) error {
	owners := map[string]bool{}
	var walk func(n *scene.Node)
	walk = func(n *scene.Node) {
		if !n.Sensed() {
			return
		}
		if n.Mesh() != nil && n.Owner != "" {
			owners[n.Owner] = true
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(s.Root())
	var fresh []string
	add := func(name string) {
		if owners[name] {
			if _, ok := sg.ids[name]; !ok {
				fresh = append(fresh, name)
			}
			delete(owners, name)
		}
	}
	for _, p := range s.Parts() {
		add(p.Name)
	}
	for _, e := range s.Elements() {
		add(e.Name)
	}
	rest := make([]string, 0, len(owners))
	for name := range owners {
		rest = append(rest, name)
	}
	slices.Sort(rest)
	for _, name := range rest {
		add(name)
	}
	if len(sg.owners)+len(fresh) > MaxInstances {
		return fmt.Errorf("%d instances: a 16-bit instance image holds at most %d", len(sg.owners)+len(fresh), MaxInstances)
	}
	for _, name := range fresh {
		sg.owners = append(sg.owners, name)
		sg.ids[name] = len(sg.owners)
	}
	return nil
}

// Segment renders a frame at the scene's current state.
func (sg *Segmentation) Segment(r *Renderer, s *scene.Scene) (*SegmentationImage, error) {
	finish, err := sg.startSegment(r, s, nil)
	if err != nil {
		return nil, err
	}
	return finish()
}

// startSegment draws the ids (when q is flushed, where q is not nil) and
// starts reading them back; finish waits for them and makes the image
// (RenderFrames draws every camera before it finishes the first). finish
// must be called once, before the next start.
func (sg *Segmentation) startSegment(r *Renderer, s *scene.Scene, q *drawQueue) (finish func() (*SegmentationImage, error), err error) {
	if err := s.Update(); err != nil {
		return nil, err
	}
	world := sg.frame.World()
	if err := checkWorld(sg.name, world); err != nil {
		return nil, err
	}
	if err := sg.number(s); err != nil {
		return nil, err
	}
	sg.meshes = s.SensedMeshes(sg.meshes[:0])
	if n := 4 * sg.sv.w * sg.sv.h; len(sg.pixels) != n {
		sg.pixels = make([]float32, n)
	}
	p, err := r.renderIDs(world, sg.sv, sg.meshes, sg.ids, sg.pixels, q)
	if err != nil {
		return nil, err
	}
	return func() (*SegmentationImage, error) {
		if err := p.wait(); err != nil {
			return nil, err
		}
		return sg.image(s, world), nil
	}, nil
}

// image makes the frame from the ids read into sg.pixels.
func (sg *Segmentation) image(s *scene.Scene, world mgl64.Mat4) *SegmentationImage {
	// Classes of the numbered instances, sorted: class ids.
	var classes []string
	for _, name := range sg.owners {
		if c := s.Class(name); c != "" && !slices.Contains(classes, c) {
			classes = append(classes, c)
		}
	}
	slices.Sort(classes)
	classOf := make([]uint16, len(sg.owners)+1)
	for i, name := range sg.owners {
		if c := s.Class(name); c != "" {
			k, _ := slices.BinarySearch(classes, c)
			classOf[i+1] = uint16(k + 1)
		}
	}
	v := sg.view
	out := &SegmentationImage{
		Info:     FrameInfo{Sensor: sg.name, Intrinsics: sg.Intrinsics(), Pose: scene.PoseFromMatrix(world), Near: v.Near, Far: v.Far},
		Instance: make([]uint16, v.Width*v.Height),
		Class:    make([]uint16, v.Width*v.Height),
		Labels:   Labels{Sensor: sg.name, Instances: map[string]Label{}, Classes: map[string]string{}},
	}
	count := make([]int, len(sg.owners)+1)
	w := len(sg.yTan) // the render's width
	for k := range out.Instance {
		src := k // the render's pixel this pixel shows
		if sg.umap != nil {
			src = sg.umap.nearest(k)
		}
		yt, zt := sg.yTan[src%w], sg.zTan[src/w]
		id := int(sg.pixels[4*src])
		if id <= 0 || id > len(sg.owners) {
			continue
		}
		// The render keeps the range along the ray; a camera's far
		// plane clips on the depth along the axis.
		if float64(sg.pixels[4*src+2])/math.Sqrt(1+yt*yt+zt*zt) > v.Far {
			continue
		}
		out.Instance[k] = uint16(id)
		out.Class[k] = classOf[id]
		count[id]++
	}
	for i, name := range sg.owners {
		l := Label{Name: name, Class: s.Class(name), ClassID: int(classOf[i+1]), Pixels: count[i+1]}
		out.Labels.Instances[strconv.Itoa(i+1)] = l
	}
	for i, c := range classes {
		out.Labels.Classes[strconv.Itoa(i+1)] = c
	}
	return out
}

// renderIDs renders, per pixel of view v (sensor at world), the id of the
// instance whose mesh the pixel center sees first (4 floats per pixel: id,
// triangle, range along the ray, 0; id 0 where nothing is seen), and starts
// reading them back into pixels. It reuses the range sensors' ID shader and
// uploaded geometry, with filled triangles only: a pixel belongs to what
// covers its center.
func (r *Renderer) renderIDs(world mgl64.Mat4, v surfaceView, meshes []scene.MeshInstance, ids map[string]int, pixels []float32, q *drawQueue) (*pendingPicture, error) {
	sensorFromWorld := world.Inv()
	return r.startPicture(gpu.FloatBytes(pixels), false, q, func(gs *gls.GLS) (*gpu.Framebuffer, error) {
		st, restore, err := r.beginSurfacePass(gs, idProgram)
		if err != nil {
			return nil, err
		}
		defer restore()
		fb, err := r.clearedTarget(gs, v.w, v.h, gpu.ColorRGBA32F)
		if err != nil {
			return nil, err
		}
		clip := mat32(v.projection(r.reversedZ).Mul4(glFromSensor))
		gs.UniformMatrix4fv(st.clipFrom.Location(gs), 1, false, &clip[0])
		gs.Uniform1f(st.kind.Location(gs), 0)
		gs.Uniform1i(st.cutAlpha.Location(gs), cutoutUnit)
		planes := v.frustumPlanes()
		for _, m := range meshes {
			id, ok := ids[m.Node.Owner]
			if !ok {
				continue // not numbered: cannot happen after number
			}
			sensorFromModel := sensorFromWorld.Mul4(m.World)
			m32 := mat32(sensorFromModel)
			for _, p := range m.Mesh.Primitives {
				if len(p.Indices) < 3 {
					continue
				}
				g, err := r.mesh(gs, p, nil)
				if err != nil {
					return nil, err
				}
				c := sensorFromModel.Mul4x1(g.center.Vec4(1)).Vec3()
				if outside(planes, c, g.radius*maxScale(sensorFromModel)) {
					continue
				}
				if ok, err := st.useCut(gs, p); !ok {
					if err != nil {
						return nil, err
					}
					continue
				}
				gs.UniformMatrix4fv(st.sensorFrom.Location(gs), 1, false, &m32[0])
				gs.Uniform1f(st.drawID.Location(gs), float32(id))
				g.Draw(gs, gpu.Triangles)
			}
		}
		gpu.UnbindMesh(gs)
		return fb, nil
	})
}

// gray16 returns ids as a 16-bit grayscale image.
func gray16(w, h int, ids []uint16) *image.Gray16 {
	g := image.NewGray16(image.Rect(0, 0, w, h))
	for k, id := range ids {
		g.SetGray16(k%w, k/w, color.Gray16{Y: id})
	}
	return g
}

// InstanceImage returns the instance ids as a 16-bit image.
func (im *SegmentationImage) InstanceImage() *image.Gray16 {
	return gray16(im.Info.Intrinsics.Width, im.Info.Intrinsics.Height, im.Instance)
}

// ClassImage returns the class ids as a 16-bit image.
func (im *SegmentationImage) ClassImage() *image.Gray16 {
	return gray16(im.Info.Intrinsics.Width, im.Info.Intrinsics.Height, im.Class)
}

// Capture writes BASE.instance.png and BASE.class.png (16-bit grayscale
// ids), BASE.labels.json (Labels) and BASE.json (the FrameInfo, as a
// camera's).
func (sg *Segmentation) Capture(r *Renderer, s *scene.Scene, out Output) ([]string, error) {
	f, err := sg.renderFrame(r, s, out.Stamp)
	if err != nil {
		return nil, err
	}
	return f.WriteFiles(out.Base)
}

// WriteFiles writes the frame as Capture does: base plus
// ".instance.png", ".class.png", ".labels.json" and ".json".
func (im *SegmentationImage) WriteFiles(base string) ([]string, error) {
	files := []string{base + ".instance.png", base + ".class.png", base + ".labels.json", base + ".json"}
	if err := WritePNG(files[0], im.InstanceImage()); err != nil {
		return nil, err
	}
	if err := WritePNG(files[1], im.ClassImage()); err != nil {
		return files[:1], err
	}
	if err := writeJSONFile(files[2], im.Labels); err != nil {
		return files[:2], err
	}
	return files, writeJSONFile(files[3], im.Info)
}

// Encode returns the frame as a message, as Frame.Encode does for the
// other sensors: info is the FrameInfo's JSON with the labels' instances
// and classes added, data the instance ids and then the class ids, each
// uint16 little-endian, rows from the top.
func (im *SegmentationImage) Encode() (info, data []byte, err error) {
	fields := map[string]json.RawMessage{}
	raw, err := json.Marshal(im.Info)
	if err != nil {
		return nil, nil, err
	}
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, nil, err
	}
	if fields["instances"], err = json.Marshal(im.Labels.Instances); err != nil {
		return nil, nil, err
	}
	if fields["classes"], err = json.Marshal(im.Labels.Classes); err != nil {
		return nil, nil, err
	}
	if info, err = json.Marshal(fields); err != nil {
		return nil, nil, err
	}
	data = make([]byte, 0, 2*(len(im.Instance)+len(im.Class)))
	for _, ids := range [][]uint16{im.Instance, im.Class} {
		for _, id := range ids {
			data = binary.LittleEndian.AppendUint16(data, id)
		}
	}
	return info, data, nil
}
