package sensors

import (
	"fmt"
	"image"

	"github.com/g3n/engine/math32"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

// Motion blur: a camera with motion_blur = N > 1 averages, in each frame
// after its first, N renders of the scene at instants spread over the time
// its shutter is open, the last shutter fraction of the interval since its
// previous frame (sub-frame k of N at t = 1 - shutter (k + 1/2) / N, 0 the
// previous frame, 1 this one). What moved in between (every node's
// transform, the camera's own pose) is interpolated: translation and scale
// linearly, rotation along the shortest arc (slerp). The renders are
// averaged as linear radiance, before exposure, gain and gamma.
//
// Only the drawing is interpolated, never the scene: the parameter table
// (which clients share) and the scene's nodes keep this frame's values; the
// g3n transforms are set for each sub-frame and put back. Shadows, light
// directions and color changes are this frame's for every sub-frame. A frame
// in which nothing moved is rendered once.

// motionBlur is a camera's blur settings and what it remembers of its
// previous frame.
type motionBlur struct {
	n       int     // sub-frames; < 2 off
	shutter float64 // (0, 1]
	prev    map[*scene.Node]mgl64.Mat4
	pose    mgl64.Mat4 // the camera's world pose at its previous frame
	has     bool       // prev and pose hold a frame
}

func readMotionBlur(c *scene.Command) (motionBlur, error) {
	var mb motionBlur
	var err error
	if mb.n, err = c.Int("motion_blur", 0, 0, 32); err != nil {
		return mb, err
	}
	if mb.shutter, err = c.FloatIn("shutter", 0.5, 1e-3, 1); err != nil {
		return mb, err
	}
	return mb, nil
}

// remember records the frame just rendered: every node's local transform
// and the camera's pose.
func (mb *motionBlur) remember(s *scene.Scene, pose mgl64.Mat4) {
	if mb.n < 2 {
		return
	}
	if mb.prev == nil {
		mb.prev = map[*scene.Node]mgl64.Mat4{}
	}
	clear(mb.prev)
	walkNodes(s.Root(), func(n *scene.Node) { mb.prev[n] = n.Local() })
	mb.pose, mb.has = pose, true
}

func walkNodes(n *scene.Node, fn func(*scene.Node)) {
	fn(n)
	for _, c := range n.Children() {
		walkNodes(c, fn)
	}
}

// moved returns the nodes whose transform changed since the previous frame,
// with their previous transforms.
func (mb *motionBlur) moved(s *scene.Scene) (nodes []*scene.Node, from []mgl64.Mat4) {
	walkNodes(s.Root(), func(n *scene.Node) {
		if m, ok := mb.prev[n]; ok && m != n.Local() {
			nodes = append(nodes, n)
			from = append(from, m)
		}
	})
	return nodes, from
}

// blend interpolates rigid-with-scale transforms: t = 0 gives a, 1 gives b.
func blend(a, b mgl64.Mat4, t float64) mgl64.Mat4 {
	ta, ra, sa := decompose(a)
	tb, rb, sb := decompose(b)
	tr := ta.Add(tb.Sub(ta).Mul(t))
	sc := sa.Add(sb.Sub(sa).Mul(t))
	rot := mgl64.QuatSlerp(ra, rb, t).Normalize().Mat4()
	return mgl64.Translate3D(tr[0], tr[1], tr[2]).Mul4(rot).Mul4(mgl64.Scale3D(sc[0], sc[1], sc[2]))
}

func decompose(m mgl64.Mat4) (tr mgl64.Vec3, rot mgl64.Quat, sc mgl64.Vec3) {
	tr = m.Col(3).Vec3()
	var r mgl64.Mat3
	for i := 0; i < 3; i++ {
		c := m.Col(i).Vec3()
		sc[i] = c.Len()
		if sc[i] > 0 {
			c = c.Mul(1 / sc[i])
		}
		r.SetCol(i, c)
	}
	if r.Det() < 0 { // a mirror: keep it in the scale
		sc[0] = -sc[0]
		r.SetCol(0, r.Col(0).Mul(-1))
	}
	return tr, mgl64.Mat4ToQuat(r.Mat4()), sc
}

func setG3N(n *scene.Node, m mgl64.Mat4) {
	var g math32.Matrix4
	for i := range m {
		g[i] = float32(m[i])
	}
	n.G3N().SetMatrix(&g)
}

// blurred renders the frame as the average of mb.n sub-frames from the
// previous frame's state to this one (v: this frame's view), or returns nil
// where there is nothing to blur (blur off, first frame, nothing moved).
func (mb *motionBlur) blurred(r *Renderer, s *scene.Scene, v View) ([]float32, error) {
	if mb.n < 2 || !mb.has {
		return nil, nil
	}
	if err := s.PrepareRender(v.Viewer); err != nil { // this frame's state first
		return nil, err
	}
	nodes, from := mb.moved(s)
	if len(nodes) == 0 && mb.pose == v.Pose {
		return nil, nil
	}
	defer func() {
		for _, n := range nodes {
			setG3N(n, n.Local())
		}
	}()
	var sum []float32
	for k := 0; k < mb.n; k++ {
		t := 1 - mb.shutter*(float64(k)+0.5)/float64(mb.n)
		for i, n := range nodes {
			setG3N(n, blend(from[i], n.Local(), t))
		}
		sv := v
		sv.Pose = blend(mb.pose, v.Pose, t)
		pix, err := r.RenderRadiance(s, sv)
		if err != nil {
			return nil, err
		}
		if sum == nil {
			sum = pix
			continue
		}
		for i, p := range pix {
			sum[i] += p
		}
	}
	inv := 1 / float32(mb.n)
	for i := range sum {
		sum[i] *= inv
	}
	return sum, nil
}

// blurImage turns the averaged radiance into the camera's 8-bit image.
func blurImage(resp Response, pix []float32, v View) (*image.RGBA, error) {
	if len(pix) != 4*v.Width*v.Height {
		return nil, fmt.Errorf("sensors: motion blur: %d values for %dx%d", len(pix), v.Width, v.Height)
	}
	return resp.toRGBA(pix, v.Width, v.Height)
}
