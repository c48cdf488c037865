package elements

import (
	"fmt"
	"strings"

	"github.com/g3n/engine/core"
	"github.com/g3n/engine/light"
	"github.com/g3n/engine/math32"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

func init() { scene.RegisterElement("light", newLight) }

// Light kinds, chosen with the kind attribute.
const (
	lightAmbient     = "ambient"
	lightDirectional = "directional"
	lightPoint       = "point"
	lightSpot        = "spot"
)

var lightKinds = []string{lightDirectional, lightPoint, lightSpot, lightAmbient}

// lightElement places one g3n light in the scene graph. The first light
// element switches the scene's default lights off, so a scene with lights of
// its own is lit by them alone. Non-ambient lights sit at their pose
// (x y z roll pitch yaw in the insertion point's frame) and shine along
// their +x, like sensors look.
type lightElement struct {
	kind  string
	frame *scene.Node // the light's pose frame (nil for ambient)
	node  core.INode

	ambient     *light.Ambient
	directional *light.Directional
	point       *light.Point
	spot        *light.Spot
}

func newLight(ctx *scene.Context) (scene.Element, error) {
	c := ctx.Command
	kind, ok := c.Attr("kind")
	if !ok {
		kind = lightDirectional
	}
	l := &lightElement{kind: kind}
	white := &math32.Color{R: 1, G: 1, B: 1}
	// Distance attenuation of point and spot lights: 1 / (1 + d·(linear + quadratic·d)).
	linear, quadratic := 0.0, 0.0
	if kind == lightPoint || kind == lightSpot {
		var err error
		if linear, err = c.FloatIn("linear_decay", 0, 0, 1e6); err != nil {
			return nil, err
		}
		if quadratic, err = c.FloatIn("quadratic_decay", 0.04, 0, 1e6); err != nil {
			return nil, err
		}
	}
	switch kind {
	case lightAmbient:
		l.ambient = light.NewAmbient(white, 0.3)
		l.node = l.ambient
	case lightDirectional:
		l.directional = light.NewDirectional(white, 1)
		l.node = l.directional
	case lightPoint:
		l.point = light.NewPoint(white, 1)
		l.point.SetLinearDecay(float32(linear))
		l.point.SetQuadraticDecay(float32(quadratic))
		l.node = l.point
	case lightSpot:
		angular, err := c.FloatIn("angular_decay", 15, 0, 1000)
		if err != nil {
			return nil, err
		}
		l.spot = light.NewSpot(white, 1)
		l.spot.SetLinearDecay(float32(linear))
		l.spot.SetQuadraticDecay(float32(quadratic))
		l.spot.SetAngularDecay(float32(angular))
		l.spot.SetDirection(1, 0, 0) // shines along its frame's +x
		l.node = l.spot
	default:
		return nil, c.Errorf("kind", "unknown light kind %q (have %s)", kind, strings.Join(lightKinds, ", "))
	}
	sep := ctx.InsertSeparator(mgl64.Ident4())
	if kind == lightAmbient {
		sep.G3N().Add(l.node)
	} else {
		l.frame = ctx.AddChild(sep, scene.KindCustom, ctx.Name, mgl64.Ident4())
		l.frame.G3N().Add(l.node)
	}
	ctx.Scene.UseOwnLights()
	return l, nil
}

func (l *lightElement) Params() []scene.Param {
	ps := []scene.Param{{Name: "r", Default: 1}, {Name: "g", Default: 1}, {Name: "b", Default: 1}, {Name: "intensity", Default: 1}}
	if l.kind == lightAmbient {
		ps[3].Default = 0.3
		return ps
	}
	ps = append(ps, poseParams...)
	if l.kind == lightSpot {
		ps = append(ps, scene.Param{Name: "cutoff", Default: 30})
	}
	return ps
}

func (l *lightElement) Apply(v []float64) error {
	for i, name := range []string{"r", "g", "b"} {
		if v[i] < 0 || v[i] > 1 {
			return fmt.Errorf("%s = %g: color components are 0..1 (use intensity for brightness)", name, v[i])
		}
	}
	if v[3] < 0 {
		return fmt.Errorf("intensity = %g: want >= 0", v[3])
	}
	if l.kind == lightSpot && (v[10] <= 0 || v[10] > 90) {
		return fmt.Errorf("cutoff = %g: want a half-angle in (0, 90] degrees", v[10])
	}
	col := &math32.Color{R: float32(v[0]), G: float32(v[1]), B: float32(v[2])}
	intensity := float32(v[3])
	switch l.kind {
	case lightAmbient:
		l.ambient.SetColor(col)
		l.ambient.SetIntensity(intensity)
		return nil
	case lightDirectional:
		l.directional.SetColor(col)
		l.directional.SetIntensity(intensity)
	case lightPoint:
		l.point.SetColor(col)
		l.point.SetIntensity(intensity)
	case lightSpot:
		l.spot.SetColor(col)
		l.spot.SetIntensity(intensity)
		l.spot.SetCutoffAngle(float32(v[10]))
	}
	l.frame.SetLocal(scene.Pose{X: v[4], Y: v[5], Z: v[6], Roll: v[7], Pitch: v[8], Yaw: v[9]}.Matrix())
	return nil
}

// Prepare points a directional light. g3n takes a directional light's
// direction from its world position (it shines from there toward the
// origin), so the light node is placed, in its frame, where the world
// position equals minus the frame's world +x, whatever moved the frame.
func (l *lightElement) Prepare() {
	if l.kind != lightDirectional {
		return
	}
	w := l.frame.World()
	shine := w.Mul4x1(mgl64.Vec4{1, 0, 0, 0}).Vec3().Normalize()
	local := w.Inv().Mul4x1(shine.Mul(-1).Vec4(1))
	l.directional.SetPosition(float32(local[0]), float32(local[1]), float32(local[2]))
}
