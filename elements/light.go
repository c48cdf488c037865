package elements

import (
	"fmt"
	"math"
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
	lightSun         = "sun"
)

var lightKinds = []string{lightDirectional, lightSun, lightPoint, lightSpot, lightAmbient}

// lightElement places one g3n light in the scene graph. The first light
// element switches the scene's default lights off, so a scene with lights of
// its own is lit by them alone. Point, spot and directional lights sit at
// their pose (x y z roll pitch yaw in the insertion point's frame) and
// shine along their +x, like sensors look. A sun is a directional light
// set by where it stands in the sky: parameters azimuth (degrees from the
// insertion point's +x toward +y, default 135) and elevation (degrees
// above its xy plane, default 45); it shines from there.
//
// Directional lights, suns and spot lights cast shadows in camera images
// (shadows="false" turns that off), from a shadow map of shadow_map_size
// texels a side (default 1024, 64 to 8192: a directional light's map
// covers everything sensors see, so a 20 m scene gets 2 cm texels); point
// and ambient lights cast none.
type lightElement struct {
	kind  string
	frame *scene.Node // the light's pose frame (nil for ambient)
	node  core.INode

	ambient     *light.Ambient
	directional *light.Directional
	point       *light.Point
	spot        *light.Spot
	sunFrom     mgl64.Vec3 // sun: unit vector toward the sun, insertion point frame
}

func newLight(ctx *scene.Context) (scene.Element, error) {
	c := ctx.Command
	kind, ok := c.Attr("kind")
	if !ok {
		kind = lightDirectional
	}
	l := &lightElement{kind: kind}
	shadows, mapSize := false, 0
	if kind == lightDirectional || kind == lightSun || kind == lightSpot {
		var err error
		if shadows, err = c.Bool("shadows", true); err != nil {
			return nil, err
		}
		if mapSize, err = c.Int("shadow_map_size", 1024, 64, 8192); err != nil {
			return nil, err
		}
	}
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
	case lightDirectional, lightSun:
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
	if shadows {
		l.node.GetNode().SetUserData(scene.ShadowCaster{MapSize: mapSize})
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
	switch l.kind {
	case lightAmbient:
		ps[3].Default = 0.3
		return ps
	case lightSun:
		return append(ps, scene.Param{Name: "azimuth", Default: 135}, scene.Param{Name: "elevation", Default: 45})
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
	if l.kind == lightSun && (v[5] < -90 || v[5] > 90 || v[4] < -360 || v[4] > 360) {
		return fmt.Errorf("azimuth = %g, elevation = %g: want azimuth in [-360, 360] and elevation in [-90, 90] degrees", v[4], v[5])
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
	case lightSun:
		l.directional.SetColor(col)
		l.directional.SetIntensity(intensity)
		az, el := mgl64.DegToRad(v[4]), mgl64.DegToRad(v[5])
		l.sunFrom = mgl64.Vec3{math.Cos(el) * math.Cos(az), math.Cos(el) * math.Sin(az), math.Sin(el)}
		return nil
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
	if l.kind != lightDirectional && l.kind != lightSun {
		return
	}
	w := l.frame.World()
	shine := w.Mul4x1(mgl64.Vec4{1, 0, 0, 0}).Vec3().Normalize()
	if l.kind == lightSun {
		shine = w.Mul4x1(l.sunFrom.Mul(-1).Vec4(0)).Vec3().Normalize()
	}
	local := w.Inv().Mul4x1(shine.Mul(-1).Vec4(1))
	l.directional.SetPosition(float32(local[0]), float32(local[1]), float32(local[2]))
}
