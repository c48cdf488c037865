package models

import (
	"fmt"
	"math"

	"github.com/qmuntal/gltf"
)

// Camera is a perspective camera for Write: glTF cameras look along their
// node's -Z with +Y up (y-up), which is the node's +y with +z up in simvis'
// z-up frame.
type Camera struct {
	YFOV        float64 // vertical field of view, radians, in (0, pi)
	AspectRatio float64 // width / height, > 0
	ZNear, ZFar float64 // clipping planes, m; 0 < ZNear < ZFar
}

// Light kinds of KHR_lights_punctual.
const (
	LightDirectional = "directional"
	LightPoint       = "point"
	LightSpot        = "spot"
)

// Light is a punctual light for Write (the KHR_lights_punctual extension):
// it shines along its node's -Z in glTF, +y in simvis' z-up frame.
type Light struct {
	Kind      string     // LightDirectional, LightPoint or LightSpot
	Color     [3]float64 // linear RGB, 0..1
	Intensity float64    // >= 0, in simvis' relative units
	// Spot cone half-angles, radians: 0 <= InnerCone < OuterCone <= pi/2.
	InnerCone, OuterCone float64
}

// lightsExtension is the glTF extension name of Light.
const lightsExtension = "KHR_lights_punctual"

// cameraAndLight adds n's camera and light, if any, to the document and to
// gn, after checking them: the file must stay valid glTF.
func (w *writer) cameraAndLight(n *Node, gn *gltf.Node) error {
	if c := n.Camera; c != nil {
		ok := c.YFOV > 0 && c.YFOV < math.Pi && c.AspectRatio > 0 && !math.IsInf(c.AspectRatio, 0) &&
			c.ZNear > 0 && c.ZFar > c.ZNear && !math.IsInf(c.ZFar, 0)
		if !ok {
			return fmt.Errorf("node %q: camera %+v: want yfov in (0, pi), aspect ratio > 0, 0 < znear < zfar, all finite", n.Name, *c)
		}
		w.doc.Cameras = append(w.doc.Cameras, &gltf.Camera{Name: n.Name, Type: "perspective", Perspective: &gltf.Perspective{
			Yfov: c.YFOV, AspectRatio: gltf.Float(c.AspectRatio), Znear: c.ZNear, Zfar: gltf.Float(c.ZFar)}})
		gn.Camera = gltf.Index(len(w.doc.Cameras) - 1)
	}
	l := n.Light
	if l == nil {
		return nil
	}
	for _, v := range l.Color {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("node %q: light color %v: want components in 0..1", n.Name, l.Color)
		}
	}
	if !(l.Intensity >= 0) || math.IsInf(l.Intensity, 0) {
		return fmt.Errorf("node %q: light intensity %v: want a finite value >= 0", n.Name, l.Intensity)
	}
	light := map[string]any{"type": l.Kind, "name": n.Name, "color": l.Color, "intensity": l.Intensity}
	switch l.Kind {
	case LightDirectional, LightPoint:
	case LightSpot:
		if !(l.InnerCone >= 0 && l.InnerCone < l.OuterCone && l.OuterCone <= math.Pi/2) {
			return fmt.Errorf("node %q: spot cone %v..%v rad: want 0 <= inner < outer <= pi/2", n.Name, l.InnerCone, l.OuterCone)
		}
		light["spot"] = map[string]float64{"innerConeAngle": l.InnerCone, "outerConeAngle": l.OuterCone}
	default:
		return fmt.Errorf("node %q: unknown light kind %q", n.Name, l.Kind)
	}
	if w.doc.Extensions == nil {
		w.doc.Extensions = gltf.Extensions{}
	}
	ext, _ := w.doc.Extensions[lightsExtension].(map[string]any)
	if ext == nil {
		ext = map[string]any{"lights": []any{}}
		w.doc.Extensions[lightsExtension] = ext
		w.doc.ExtensionsUsed = append(w.doc.ExtensionsUsed, lightsExtension)
	}
	lights := append(ext["lights"].([]any), light)
	ext["lights"] = lights
	if gn.Extensions == nil {
		gn.Extensions = gltf.Extensions{}
	}
	gn.Extensions[lightsExtension] = map[string]int{"light": len(lights) - 1}
	return nil
}
