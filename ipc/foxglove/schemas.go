package foxglove

import "encoding/json"

// The JSON Schemas of the JSON channels. Foxglove recognizes
// foxglove.SceneUpdate by its name and reads the schema for how fields are
// encoded (the model data is base64); this one describes the fields the
// server sends, named and typed as in @foxglove/schemas (the test checks
// the messages against that package's own schema).
var (
	sceneUpdateSchema = mustJSON(sceneUpdateSchemaDoc())
	valuesSchema      = mustJSON(obj("simvis.Values", map[string]any{
		"timestamp": timeSchema(),
		"values":    map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "number"}, "description": "every parameter's value, by ELEMENT.PARAM"},
	}))
)

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // built from literals above
	}
	return string(b)
}

func obj(title string, props map[string]any) map[string]any {
	return map[string]any{"title": title, "type": "object", "properties": props}
}

func list(items any) map[string]any { return map[string]any{"type": "array", "items": items} }

func numbers(title string, names ...string) map[string]any {
	props := map[string]any{}
	for _, n := range names {
		props[n] = map[string]any{"type": "number"}
	}
	return obj(title, props)
}

func timeSchema() map[string]any {
	return obj("time", map[string]any{"sec": map[string]any{"type": "integer", "minimum": 0}, "nsec": map[string]any{"type": "integer", "minimum": 0, "maximum": 999999999}})
}

func sceneUpdateSchemaDoc() map[string]any {
	str := map[string]any{"type": "string"}
	boolean := map[string]any{"type": "boolean"}
	number := map[string]any{"type": "number"}
	vec3 := numbers("foxglove.Vector3", "x", "y", "z")
	point3 := numbers("foxglove.Point3", "x", "y", "z")
	color := numbers("foxglove.Color", "r", "g", "b", "a")
	pose := obj("foxglove.Pose", map[string]any{"position": vec3, "orientation": numbers("foxglove.Quaternion", "x", "y", "z", "w")})
	empty := list(map[string]any{"type": "object"})
	entity := obj("foxglove.SceneEntity", map[string]any{
		"timestamp": timeSchema(), "frame_id": str, "id": str, "lifetime": timeSchema(), "frame_locked": boolean,
		"metadata": list(obj("foxglove.KeyValuePair", map[string]any{"key": str, "value": str})),
		"arrows":   empty, "spheres": empty, "cylinders": empty, "triangles": empty,
		"cubes": list(obj("foxglove.CubePrimitive", map[string]any{"pose": pose, "size": vec3, "color": color})),
		"lines": list(obj("foxglove.LinePrimitive", map[string]any{
			"type": map[string]any{"type": "integer", "description": "0 line strip, 1 line loop, 2 line list"},
			"pose": pose, "thickness": number, "scale_invariant": boolean, "points": list(point3),
			"color": color, "colors": list(color), "indices": list(map[string]any{"type": "integer", "minimum": 0}),
		})),
		"texts": list(obj("foxglove.TextPrimitive", map[string]any{"pose": pose, "billboard": boolean, "font_size": number,
			"scale_invariant": boolean, "color": color, "text": str})),
		"models": list(obj("foxglove.ModelPrimitive", map[string]any{"pose": pose, "scale": vec3, "color": color,
			"override_color": boolean, "url": str, "media_type": str,
			"data": map[string]any{"type": "string", "contentEncoding": "base64"}})),
	})
	return obj("foxglove.SceneUpdate", map[string]any{"deletions": empty, "entities": list(entity)})
}
