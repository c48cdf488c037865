package sensors

import (
	"fmt"
	"image"
	"math"

	"github.com/g3n/engine/core"
	"github.com/g3n/engine/gls"
	"github.com/g3n/engine/light"
	"github.com/g3n/engine/math32"
	"github.com/g3n/engine/renderer"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/gpu"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// DefaultShadowMapSize is the side in texels of a light's shadow map where
// the light asks for none (scene.ShadowCaster). A directional light's map
// covers the bounding box of everything sensors see (a 20 m scene: 2 cm
// texels at 1024), a spot light's its cone. All maps share one atlas, each
// a square as large as the largest asked for.
const DefaultShadowMapSize = 1024

// maxShadowTexels bounds the shadow atlas (4 bytes a texel: 256 MiB); maps
// asked larger are made smaller to fit, as they are to fit the GL's
// largest texture.
const maxShadowTexels = 64 << 20

const shadowProgram = "simvis_shadow"

// shadowLight is one light with a shadow map, in world coordinates.
type shadowLight struct {
	spot      bool
	size      int        // its map's side, texels
	dir       mgl64.Vec3 // directional: toward the light; spot: the way it shines
	pos       mgl64.Vec3 // spot only
	cutoff    float64    // spot half-angle, degrees
	viewProj  mgl64.Mat4 // world -> light clip
	near, far float64
	texel     float64 // texel size on a surface facing the light: meters (directional), meters per meter of distance (spot)
}

// shadowCaster is one mesh instance drawn into the shadow maps.
type shadowCaster struct {
	mesh  *models.Mesh
	world mgl64.Mat4
}

// shadowState is the renderer's shadow maps, made on first use on the GL
// thread. The maps are drawn again only when the lights or the casters
// changed since they were drawn (stereo pairs and still scenes reuse them).
type shadowState struct {
	atlas    *gpu.DepthTarget
	mvp      gls.Uniform
	alphas   map[*models.Material]*gpu.Texture // masked materials' alpha
	cutoff   gls.Uniform
	alphaTex gls.Uniform
	lights   []shadowLight
	casters  []shadowCaster
	meshes   []scene.MeshInstance
	valid    bool // the atlas holds lights over casters
	// The frame's uniforms, per map: matrices (16 floats), info (4), keys (3).
	matrices, info, keys []float32
	uMatrix, uInfo, uKey gls.Uniform
	setUniforms          func(gs *gls.GLS)
}

// findShadowLights walks the g3n graph under root (world matrices must be
// current) as g3n's renderer does when it numbers the lights (depth first,
// visible nodes only), and returns the lights marked scene.ShadowCaster
// that get a shadow map (at most maxShadowLights, in that order), and for
// every directional and every spot light, in g3n's numbering, the index
// of its map or -1: the shader reads its light's map at a constant index.
func findShadowLights(root core.INode) (lights []shadowLight, dirSlots, spotSlots []int) {
	var walk func(n core.INode)
	walk = func(n core.INode) {
		node := n.GetNode()
		if !node.Visible() {
			return
		}
		sc, marked := node.UserData().(scene.ShadowCaster)
		size := sc.MapSize
		if size <= 0 {
			size = DefaultShadowMapSize
		}
		marked = marked && len(lights) < maxShadowLights
		var p, d math32.Vector3
		switch l := n.(type) {
		case *light.Directional:
			slot := -1
			l.WorldPosition(&p)
			if v := (mgl64.Vec3{float64(p.X), float64(p.Y), float64(p.Z)}); marked && v.Len() > 0 {
				slot = len(lights)
				lights = append(lights, shadowLight{size: size, dir: v.Normalize()})
			}
			dirSlots = append(dirSlots, slot)
		case *light.Spot:
			slot := -1
			l.WorldPosition(&p)
			l.WorldDirection(&d)
			if v := (mgl64.Vec3{float64(d.X), float64(d.Y), float64(d.Z)}); marked && v.Len() > 0 {
				slot = len(lights)
				lights = append(lights, shadowLight{spot: true, size: size, dir: v.Normalize(),
					pos: mgl64.Vec3{float64(p.X), float64(p.Y), float64(p.Z)}, cutoff: float64(l.CutoffAngle())})
			}
			spotSlots = append(spotSlots, slot)
		}
		for _, c := range node.Children() {
			walk(c)
		}
	}
	walk(root)
	return lights, dirSlots, spotSlots
}

func (r *Renderer) shadowState(gs *gls.GLS) *shadowState {
	if r.shadow != nil {
		return r.shadow
	}
	st := &shadowState{alphas: map[*models.Material]*gpu.Texture{}}
	st.mvp.Init("ShadowMVP")
	st.cutoff.Init("ShadowCutoff")
	st.alphaTex.Init("ShadowAlpha")
	r.g3n.AddShader(shadowProgram+"_vertex", shadowVertexShader)
	r.g3n.AddShader(shadowProgram+"_fragment", shadowFragmentShader)
	r.g3n.AddProgram(shadowProgram, shadowProgram+"_vertex", shadowProgram+"_fragment")
	st.uMatrix.Init("SimvisShadowMatrix")
	st.uInfo.Init("SimvisShadowInfo")
	st.uKey.Init("SimvisShadowKey")
	st.setUniforms = func(gs *gls.GLS) {
		n := int32(len(st.info) / 4)
		gs.UniformMatrix4fv(st.uMatrix.Location(gs), n, false, &st.matrices[0])
		gs.Uniform4fv(st.uInfo.Location(gs), n, &st.info[0])
		gs.Uniform3fv(st.uKey.Location(gs), n, &st.keys[0])
	}
	r.shadow = st
	return st
}

// casts tells whether a primitive throws a shadow: blended (see-through)
// materials do not; masked ones do where their alpha passes the test
// (foliage leaves holes of light).
func casts(p *models.Primitive) bool {
	return len(p.Indices) >= 3 && (p.Material == nil || p.Material.AlphaMode != models.AlphaBlend)
}

// prepareShadows brings the shadow maps up to date for a camera render and
// binds them with the parameters for the camera's view (world -> camera
// coordinates). With on false it binds parameters saying no shadows. It
// runs on the GL thread, after the scene's PrepareRender and updateWorlds.
func (r *Renderer) prepareShadows(gs *gls.GLS, s *scene.Scene, on, viewer bool, camView mgl64.Mat4) error {
	st := r.shadowState(gs)
	var lights []shadowLight
	var dirSlots, spotSlots []int
	if on {
		lights, dirSlots, spotSlots = r.shadowLights(s, viewer)
	}
	if len(lights) == 0 {
		s.SetShadowMaps(0, nil, nil)
		s.SetDrawHook(nil)
		return nil
	}
	st.meshes = s.SensedMeshes(st.meshes[:0])
	changed := !st.valid || len(lights) != len(st.lights) || len(st.meshes) != len(st.casters)
	for i := 0; !changed && i < len(lights); i++ {
		a, b := lights[i], st.lights[i]
		changed = a.spot != b.spot || a.dir != b.dir || a.pos != b.pos || a.cutoff != b.cutoff || a.size != b.size
	}
	for i := 0; !changed && i < len(st.meshes); i++ {
		changed = st.meshes[i].Mesh != st.casters[i].mesh || st.meshes[i].World != st.casters[i].world
	}
	if changed {
		st.casters = st.casters[:0]
		for _, m := range st.meshes {
			st.casters = append(st.casters, shadowCaster{mesh: m.Mesh, world: m.World})
		}
		if err := r.drawShadowMaps(gs, st, lights); err != nil {
			st.valid = false
			return err
		}
		st.lights = append(st.lights[:0], lights...)
		st.valid = true
	}
	// Uniforms: the matrix from camera coordinates to atlas coordinates
	// (u, v in [0, 1] across the atlas, window depth), per light.
	n := len(st.lights)
	st.matrices, st.info, st.keys = st.matrices[:0], st.info[:0], st.keys[:0]
	worldFromCam := camView.Inv()
	for j, l := range st.lights {
		sx := 1 / (2 * float64(n))
		bias := mgl64.Mat4{sx, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0.5, 0, (float64(j) + 0.5) / float64(n), 0.5, 0.5, 1}
		m := bias.Mul4(l.viewProj).Mul4(worldFromCam)
		for _, v := range m {
			st.matrices = append(st.matrices, float32(v))
		}
		kind := 1.0
		key := camView.Mul4x1(l.dir.Vec4(0)).Vec3()
		if l.spot {
			kind = 2
			key = camView.Mul4x1(l.pos.Vec4(1)).Vec3()
		}
		st.info = append(st.info, float32(kind), float32(l.near), float32(l.far), float32(l.texel))
		st.keys = append(st.keys, float32(key[0]), float32(key[1]), float32(key[2]))
	}
	s.SetShadowMaps(n, dirSlots, spotSlots)
	s.SetDrawHook(st.setUniforms)
	st.atlas.BindTexture(gs, shadowAtlasUnit)
	return nil
}

// drawShadowMaps fits each light's view to the casters and draws their
// depth into the light's square of the atlas.
func (r *Renderer) drawShadowMaps(gs *gls.GLS, st *shadowState, lights []shadowLight) error {
	// The casters' world bounding box.
	var lo, hi mgl64.Vec3
	first := true
	var corners []mgl64.Vec3
	for _, c := range st.casters {
		for _, p := range c.mesh.Primitives {
			if !casts(p) {
				continue
			}
			g, err := r.mesh(gs, p, nil)
			if err != nil {
				return err
			}
			for k := 0; k < 8; k++ {
				q := mgl64.Vec3{pick(k&1, g.lo[0], g.hi[0]), pick(k&2, g.lo[1], g.hi[1]), pick(k&4, g.lo[2], g.hi[2])}
				w := c.world.Mul4x1(q.Vec4(1)).Vec3()
				if first {
					lo, hi, first = w, w, false
				}
				for a := 0; a < 3; a++ {
					lo[a], hi[a] = math.Min(lo[a], w[a]), math.Max(hi[a], w[a])
				}
			}
		}
	}
	for k := 0; k < 8; k++ {
		corners = append(corners, mgl64.Vec3{pick(k&1, lo[0], hi[0]), pick(k&2, lo[1], hi[1]), pick(k&4, lo[2], hi[2])})
	}
	size := 0
	for _, l := range lights {
		size = max(size, l.size)
	}
	// Bounds: the atlas fits the GL's texture size and maxShadowTexels.
	size = min(size, gpu.MaxTextureSize(gs)/len(lights), int(math.Sqrt(maxShadowTexels/float64(len(lights)))))
	for i := range lights {
		fitShadowView(&lights[i], corners, first, size)
	}
	w := size * len(lights)
	if st.atlas == nil || st.atlas.Width != w || st.atlas.Height != size {
		if st.atlas != nil {
			st.atlas.Delete(gs)
		}
		var err error
		if st.atlas, err = gpu.NewDepthTarget(gs, w, size); err != nil {
			st.atlas = nil
			return fmt.Errorf("sensors: shadow maps: %w", err)
		}
	}
	if _, err := r.g3n.SetProgram(&renderer.ShaderSpecs{Name: shadowProgram, ShaderUnique: true}); err != nil {
		return fmt.Errorf("sensors: %s shader: %w", shadowProgram, err)
	}
	st.atlas.BindClear(gs)
	gpu.SetSolidState(gs, false) // both faces cast: open meshes and planes too
	if first {
		return nil // nothing casts
	}
	gs.Uniform1i(st.alphaTex.Location(gs), shadowAlphaUnit)
	for j, l := range lights {
		gs.Viewport(int32(j*size), 0, int32(size), int32(size))
		for _, c := range st.casters {
			m := toMat32(l.viewProj.Mul4(c.world))
			gs.UniformMatrix4fv(st.mvp.Location(gs), 1, false, &m[0])
			for _, p := range c.mesh.Primitives {
				if !casts(p) {
					continue
				}
				g, err := r.mesh(gs, p, nil)
				if err != nil {
					return err
				}
				cutoff := float32(0)
				if mat := p.Material; mat != nil && mat.AlphaMode == models.AlphaMask && mat.BaseColorTexture != nil && g.HasTexCoords() {
					cutoff = mat.AlphaCutoff / max(mat.BaseColor[3], 1e-6)
					tex, err := st.alphaTexture(gs, mat)
					if err != nil {
						return err
					}
					tex.Bind(gs, shadowAlphaUnit)
				}
				gs.Uniform1f(st.cutoff.Location(gs), cutoff)
				g.Draw(gs, gpu.Triangles)
			}
		}
	}
	gpu.UnbindMesh(gs)
	return nil
}

// shadowAlphaUnit is the texture unit of a masked caster's alpha in the
// shadow pass (not one the camera shader's shadow bindings use).
const shadowAlphaUnit = 13

// alphaTexture returns a masked material's texture alpha as a mipmapped
// one-channel texture, uploaded once.
func (st *shadowState) alphaTexture(gs *gls.GLS, m *models.Material) (*gpu.Texture, error) {
	if tex, ok := st.alphas[m]; ok {
		return tex, nil
	}
	b := m.BaseColorTexture.Bounds()
	alpha := make([]byte, b.Dx()*b.Dy())
	if n, ok := m.BaseColorTexture.(*image.NRGBA); ok {
		for y := 0; y < b.Dy(); y++ {
			row := n.Pix[y*n.Stride:]
			for x := 0; x < b.Dx(); x++ {
				alpha[y*b.Dx()+x] = row[4*x+3]
			}
		}
	} else {
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				_, _, _, a := m.BaseColorTexture.At(x, y).RGBA()
				alpha[(y-b.Min.Y)*b.Dx()+x-b.Min.X] = uint8(a >> 8)
			}
		}
	}
	// Wrapped as the camera wraps the texture (the material's sampler).
	tex, err := gpu.NewTextureR8(gs, b.Dx(), b.Dy(), alpha, gpu.Sampling{
		Filter: gpu.Trilinear, WrapS: scene.GLWrap(m.Sampler.WrapS), WrapT: scene.GLWrap(m.Sampler.WrapT)})
	if err != nil {
		return nil, fmt.Errorf("sensors: shadow of a masked material: %w", err)
	}
	st.alphas[m] = tex
	return tex, nil
}

func pick(bit int, lo, hi float64) float64 {
	if bit != 0 {
		return hi
	}
	return lo
}

// fitShadowView sets the light's view and projection around the casters'
// bounding box corners: an orthographic box along a directional light, a
// perspective cone of the spot's cutoff from a spot light.
func fitShadowView(l *shadowLight, corners []mgl64.Vec3, empty bool, size int) {
	shine := l.dir
	if !l.spot {
		shine = l.dir.Mul(-1)
	}
	up := mgl64.Vec3{0, 0, 1}
	if math.Abs(shine.Dot(up)) > 0.99 {
		up = mgl64.Vec3{1, 0, 0}
	}
	eye := l.pos
	if !l.spot {
		eye = mgl64.Vec3{}
	}
	view := mgl64.LookAtV(eye, eye.Add(shine), up)
	if empty {
		// Nothing casts: a zero matrix gives w = 0, which the shader
		// reads as lit.
		l.viewProj, l.near, l.far, l.texel = mgl64.Mat4{}, 0.1, 1, 1
		return
	}
	if l.spot {
		far := 0.0
		for _, c := range corners {
			far = math.Max(far, -view.Mul4x1(c.Vec4(1)).Z())
		}
		l.near, l.far = 0.05, math.Max(far*1.01, 0.1)
		half := math.Min(l.cutoff+1, 89) * math.Pi / 180
		l.viewProj = mgl64.Perspective(2*half, 1, l.near, l.far).Mul4(view)
		l.texel = 2 * math.Tan(half) / float64(size)
		return
	}
	lo := mgl64.Vec3{math.Inf(1), math.Inf(1), math.Inf(1)}
	hi := lo.Mul(-1)
	for _, c := range corners {
		v := view.Mul4x1(c.Vec4(1)).Vec3()
		for a := 0; a < 3; a++ {
			lo[a], hi[a] = math.Min(lo[a], v[a]), math.Max(hi[a], v[a])
		}
	}
	// A square with a margin, so that casters on the box's faces stay
	// inside it. Its side is rounded up to a step of 2^(1/4) and its corner
	// to whole texels, so that as casters move the texel grid stays put on
	// the ground (shadow edges would crawl otherwise) until the box grows
	// or shrinks past a step.
	side := math.Max(math.Max(hi[0]-lo[0], hi[1]-lo[1]), 1e-3)
	side = math.Pow(2, math.Ceil(4*math.Log2(side*1.02+2e-3))/4)
	l.texel = side / float64(size)
	x0 := math.Floor((lo[0]-0.01*side)/l.texel) * l.texel
	y0 := math.Floor((lo[1]-0.01*side)/l.texel) * l.texel
	pad := 0.01*side + 1e-3
	l.near, l.far = -hi[2]-pad, -lo[2]+pad
	l.viewProj = mgl64.Ortho(x0, x0+side, y0, y0+side, l.near, l.far).Mul4(view)
}

func toMat32(m mgl64.Mat4) [16]float32 {
	var out [16]float32
	for i, v := range m {
		out[i] = float32(v)
	}
	return out
}
