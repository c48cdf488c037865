package models

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/qmuntal/gltf"
	"github.com/qmuntal/gltf/modeler"
)

// texturedTriDoc returns triDoc with TEXCOORD_0 = uv0 (and TEXCOORD_1 =
// uv1 where not nil), and one material "m" whose base color texture 0 (a
// 2x2 PNG) uses sampler 0 = s (none where nil) and the textureInfo
// extensions ext (none where nil).
func texturedTriDoc(t *testing.T, uv0, uv1 [][2]float32, s *gltf.Sampler, ext gltf.Extensions) *gltf.Document {
	t.Helper()
	doc := triDoc()
	prim := doc.Meshes[0].Primitives[0]
	prim.Attributes[gltf.TEXCOORD_0] = modeler.WriteTextureCoord(doc, uv0)
	if uv1 != nil {
		prim.Attributes["TEXCOORD_1"] = modeler.WriteTextureCoord(doc, uv1)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewNRGBA(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	img, err := modeler.WriteImage(doc, "tex", "image/png", &buf)
	if err != nil {
		t.Fatal(err)
	}
	doc.Textures = []*gltf.Texture{{Source: gltf.Index(img)}}
	if s != nil {
		doc.Samplers = []*gltf.Sampler{s}
		doc.Textures[0].Sampler = gltf.Index(0)
	}
	doc.Materials = []*gltf.Material{{Name: "m", PBRMetallicRoughness: &gltf.PBRMetallicRoughness{
		BaseColorTexture: &gltf.TextureInfo{Index: 0, Extensions: ext}}}}
	prim.Material = gltf.Index(0)
	if ext != nil {
		doc.ExtensionsUsed = []string{textureTransformExtension}
	}
	return doc
}

func uvNear(a, b mgl32.Vec2) bool {
	return math.Abs(float64(a[0]-b[0])) <= 1e-6 && math.Abs(float64(a[1]-b[1])) <= 1e-6
}

// A glTF sampler on the base color texture loads as glTF's numbers.
func TestLoadSampler(t *testing.T) {
	uv := [][2]float32{{0, 0}, {1, 0}, {0, 1}}
	for _, tc := range []struct {
		name string
		in   *gltf.Sampler
		want Sampler
	}{
		{"none", nil, Sampler{}},
		{"empty", &gltf.Sampler{}, Sampler{}},
		{"nearest clamp mirrored", &gltf.Sampler{MagFilter: gltf.MagNearest, MinFilter: gltf.MinNearestMipMapLinear,
			WrapS: gltf.WrapClampToEdge, WrapT: gltf.WrapMirroredRepeat},
			Sampler{MagFilter: 9728, MinFilter: 9986, WrapS: 33071, WrapT: 33648}},
		{"linear mirrored clamp", &gltf.Sampler{MagFilter: gltf.MagLinear, MinFilter: gltf.MinLinearMipMapNearest,
			WrapS: gltf.WrapMirroredRepeat, WrapT: gltf.WrapClampToEdge},
			Sampler{MagFilter: 9729, MinFilter: 9985, WrapS: 33648, WrapT: 33071}},
		{"min nearest", &gltf.Sampler{MinFilter: gltf.MinNearest}, Sampler{MinFilter: 9728}},
		{"min linear", &gltf.Sampler{MinFilter: gltf.MinLinear}, Sampler{MinFilter: 9729}},
		{"min nearest mipmap nearest", &gltf.Sampler{MinFilter: gltf.MinNearestMipMapNearest}, Sampler{MinFilter: 9984}},
		{"min linear mipmap linear", &gltf.Sampler{MinFilter: gltf.MinLinearMipMapLinear}, Sampler{MinFilter: 9987}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mustDecode(t, texturedTriDoc(t, uv, nil, tc.in, nil))
			if got := m.Meshes[0].Primitives[0].Material.Sampler; got != tc.want {
				t.Errorf("sampler %+v, want %+v", got, tc.want)
			}
		})
	}
	// An explicit REPEAT (10497 in the file) loads as 0, which means REPEAT.
	js := string(encode(t, texturedTriDoc(t, uv, nil, &gltf.Sampler{WrapS: gltf.WrapClampToEdge}, nil), false))
	js = strings.Replace(js, `"wrapS":33071`, `"wrapS":10497,"wrapT":10497`, 1)
	m, err := Decode(strings.NewReader(js), "repeat.gltf")
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Materials[0].Sampler; got != (Sampler{}) {
		t.Errorf("explicit REPEAT: %+v, want zero", got)
	}
}

// KHR_texture_transform is baked into TexCoords as T R S uv, with the
// extension's matrices.
func TestTextureTransformBaked(t *testing.T) {
	uv := [][2]float32{{0, 0}, {1, 0}, {0.25, 0.1}}
	for _, tc := range []struct {
		name string
		ext  map[string]any
		want [3]mgl32.Vec2
	}{
		// u' = 2v + 0.5, v' = -2u.
		{"offset scale rotation", map[string]any{"offset": []float64{0.5, 0}, "rotation": math.Pi / 2, "scale": []float64{2, 2}},
			[3]mgl32.Vec2{{0.5, 0}, {0.5, -2}, {0.7, -0.5}}},
		// The README's example, "the lower left quadrant of the source
		// image, rotated clockwise 90 degrees": u' = v/2, v' = 1 - u/2.
		{"spec example", map[string]any{"offset": []float64{0, 1}, "rotation": 1.57079632679, "scale": []float64{0.5, 0.5}},
			[3]mgl32.Vec2{{0, 1}, {0, 0.5}, {0.05, 0.875}}},
		// The README's other example inverts v.
		{"flip v", map[string]any{"offset": []float64{0, 1}, "scale": []float64{1, -1}},
			[3]mgl32.Vec2{{0, 1}, {1, 1}, {0.25, 0.9}}},
		{"offset only", map[string]any{"offset": []float64{0.125, -0.25}},
			[3]mgl32.Vec2{{0.125, -0.25}, {1.125, -0.25}, {0.375, -0.15}}},
		// Rotation alone, by pi/6: u' = c u + s v, v' = -s u + c v.
		{"rotation only", map[string]any{"rotation": math.Pi / 6},
			[3]mgl32.Vec2{{0, 0}, {float32(math.Sqrt(3) / 2), -0.5},
				{float32(0.25*math.Sqrt(3)/2 + 0.1*0.5), float32(-0.25*0.5 + 0.1*math.Sqrt(3)/2)}}},
		{"defaults", map[string]any{}, [3]mgl32.Vec2{{0, 0}, {1, 0}, {0.25, 0.1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := texturedTriDoc(t, uv, nil, nil, gltf.Extensions{textureTransformExtension: tc.ext})
			m := mustDecode(t, doc)
			got := m.Meshes[0].Primitives[0].TexCoords
			if len(got) != 3 {
				t.Fatalf("%d texture coordinates, want 3", len(got))
			}
			for k := range got {
				if !uvNear(got[k], tc.want[k]) {
					t.Errorf("vertex %d: %v, want %v", k, got[k], tc.want[k])
				}
			}
		})
	}
}

// The extension's texCoord overrides the textureInfo's, and the file may
// list the extension as required.
func TestTextureTransformTexCoordAndRequired(t *testing.T) {
	uv0 := [][2]float32{{0, 0}, {1, 0}, {0, 1}}
	uv1 := [][2]float32{{0.5, 0.5}, {0.75, 0.5}, {0.5, 0.25}}
	ext := gltf.Extensions{textureTransformExtension: map[string]any{"offset": []float64{1, 2}, "texCoord": 1}}
	doc := texturedTriDoc(t, uv0, uv1, nil, ext)
	doc.ExtensionsRequired = []string{textureTransformExtension}
	m := mustDecode(t, doc)
	want := []mgl32.Vec2{{1.5, 2.5}, {1.75, 2.5}, {1.5, 2.25}}
	got := m.Meshes[0].Primitives[0].TexCoords
	for k := range want {
		if k >= len(got) || !uvNear(got[k], want[k]) {
			t.Fatalf("texture coordinates %v, want TEXCOORD_1 offset: %v", got, want)
		}
	}
	// Without the extension, textureInfo.texCoord 1 still picks set 1.
	doc = texturedTriDoc(t, uv0, uv1, nil, nil)
	doc.Materials[0].PBRMetallicRoughness.BaseColorTexture.TexCoord = 1
	m = mustDecode(t, doc)
	if got := m.Meshes[0].Primitives[0].TexCoords; len(got) != 3 || got[1] != (mgl32.Vec2{0.75, 0.5}) {
		t.Errorf("texCoord 1: %v, want TEXCOORD_1 %v", got, uv1)
	}
}

// Primitives reading the same accessors share their geometry only where
// their materials transform the texture coordinates alike.
func TestTextureTransformSharing(t *testing.T) {
	uv := [][2]float32{{0, 0}, {1, 0}, {0, 1}}
	shift := map[string]any{"offset": []float64{0.5, 0}}
	doc := texturedTriDoc(t, uv, nil, nil, gltf.Extensions{textureTransformExtension: shift})
	plain := &gltf.Material{Name: "plain", PBRMetallicRoughness: &gltf.PBRMetallicRoughness{BaseColorTexture: &gltf.TextureInfo{Index: 0}}}
	identity := &gltf.Material{Name: "identity", PBRMetallicRoughness: &gltf.PBRMetallicRoughness{BaseColorTexture: &gltf.TextureInfo{Index: 0,
		Extensions: gltf.Extensions{textureTransformExtension: map[string]any{"scale": []float64{1, 1}}}}}}
	shifted := &gltf.Material{Name: "shifted too", PBRMetallicRoughness: &gltf.PBRMetallicRoughness{BaseColorTexture: &gltf.TextureInfo{Index: 0,
		Extensions: gltf.Extensions{textureTransformExtension: shift}}}}
	doc.Materials = append(doc.Materials, plain, identity, shifted)
	p0 := doc.Meshes[0].Primitives[0]
	for mi := 1; mi <= 3; mi++ {
		doc.Meshes[0].Primitives = append(doc.Meshes[0].Primitives,
			&gltf.Primitive{Attributes: p0.Attributes, Indices: p0.Indices, Material: gltf.Index(mi)})
	}
	ps := mustDecode(t, doc).Meshes[0].Primitives
	if len(ps) != 4 {
		t.Fatalf("%d primitives", len(ps))
	}
	if ps[0].TexCoords[1] != (mgl32.Vec2{1.5, 0}) || ps[1].TexCoords[1] != (mgl32.Vec2{1, 0}) ||
		ps[2].TexCoords[1] != (mgl32.Vec2{1, 0}) || ps[3].TexCoords[1] != (mgl32.Vec2{1.5, 0}) {
		t.Errorf("texture coordinates of vertex 1: %v %v %v %v, want (1.5,0) (1,0) (1,0) (1.5,0)",
			ps[0].TexCoords[1], ps[1].TexCoords[1], ps[2].TexCoords[1], ps[3].TexCoords[1])
	}
	if ps[0].Key == ps[1].Key {
		t.Error("transformed and untransformed primitives have one geometry key")
	}
	if &ps[1].TexCoords[0] != &ps[2].TexCoords[0] || ps[1].Key != ps[2].Key {
		t.Error("an identity transform does not share the untransformed geometry")
	}
	if &ps[0].TexCoords[0] != &ps[3].TexCoords[0] || ps[0].Key != ps[3].Key {
		t.Error("equal transforms do not share their geometry")
	}
}

// Bad samplers and transforms are refused naming the material, the
// texture and what is wrong.
func TestSamplerAndTransformErrors(t *testing.T) {
	uv := [][2]float32{{0, 0}, {1, 0}, {1e30, 0}}
	nearest := &gltf.Sampler{MagFilter: gltf.MagNearest, MinFilter: gltf.MinNearest, WrapS: gltf.WrapClampToEdge, WrapT: gltf.WrapMirroredRepeat}
	tt := func(v map[string]any) gltf.Extensions { return gltf.Extensions{textureTransformExtension: v} }
	for _, tc := range []struct {
		name    string
		doc     *gltf.Document
		replace [2]string // in the JSON
		want    string
	}{
		{"sampler index", func() *gltf.Document {
			d := texturedTriDoc(t, uv, nil, nearest, nil)
			d.Textures[0].Sampler = gltf.Index(3)
			return d
		}(), [2]string{}, `material 0 "m": texture 0: sampler 3 out of range (1 samplers)`},
		{"negative sampler index", func() *gltf.Document {
			d := texturedTriDoc(t, uv, nil, nearest, nil)
			d.Textures[0].Sampler = gltf.Index(-1)
			return d
		}(), [2]string{}, `material 0 "m": texture 0: sampler -1 out of range (1 samplers)`},
		{"magFilter", texturedTriDoc(t, uv, nil, nearest, nil), [2]string{`"magFilter":9728`, `"magFilter":9984`},
			`material 0 "m": texture 0: sampler 0: magFilter 9984 is not one of glTF's (9728 NEAREST, 9729 LINEAR)`},
		{"minFilter", texturedTriDoc(t, uv, nil, nearest, nil), [2]string{`"minFilter":9728`, `"minFilter":9730`},
			`material 0 "m": texture 0: sampler 0: minFilter 9730 is not one of glTF's`},
		{"wrapS", texturedTriDoc(t, uv, nil, nearest, nil), [2]string{`"wrapS":33071`, `"wrapS":33070`},
			`material 0 "m": texture 0: sampler 0: wrapS 33070 is not one of glTF's (33071 CLAMP_TO_EDGE, 33648 MIRRORED_REPEAT, 10497 REPEAT)`},
		{"wrapT", texturedTriDoc(t, uv, nil, nearest, nil), [2]string{`"wrapT":33648`, `"wrapT":"REPEAT"`},
			`material 0 "m": texture 0: sampler 0: wrapT "REPEAT" is not one of glTF's`},
		{"infinite rotation", texturedTriDoc(t, uv, nil, nil, tt(map[string]any{"rotation": 1.5})), [2]string{`"rotation":1.5`, `"rotation":1e999`},
			`material 0 "m": texture 0: KHR_texture_transform: rotation: 1e999 is not finite`},
		{"infinite offset", texturedTriDoc(t, uv, nil, nil, tt(map[string]any{"offset": []float64{0, 7}})), [2]string{`"offset":[0,7]`, `"offset":[0,-1e400]`},
			`material 0 "m": texture 0: KHR_texture_transform: offset[1]: -1e400 is not finite`},
		{"infinite scale", texturedTriDoc(t, uv, nil, nil, tt(map[string]any{"scale": []float64{7, 1}})), [2]string{`"scale":[7,1]`, `"scale":[2e308,1]`},
			`material 0 "m": texture 0: KHR_texture_transform: scale[0]: 2e308 is not finite`},
		{"scale not a number", texturedTriDoc(t, uv, nil, nil, tt(map[string]any{"scale": []float64{7, 1}})), [2]string{`"scale":[7,1]`, `"scale":[7,"NaN"]`},
			`material 0 "m": texture 0: KHR_texture_transform: scale[1]: "NaN" is not a number`},
		{"rotation a string", texturedTriDoc(t, uv, nil, nil, tt(map[string]any{"rotation": 1.5})), [2]string{`"rotation":1.5`, `"rotation":"1.5"`},
			`material 0 "m": texture 0: KHR_texture_transform: rotation: "1.5" is not a number`},
		{"texCoord fraction", texturedTriDoc(t, uv, nil, nil, tt(map[string]any{"texCoord": 1.5})), [2]string{},
			`material 0 "m": texture 0: KHR_texture_transform: texCoord 1.5 is not a TEXCOORD set`},
		{"offset length", texturedTriDoc(t, uv, nil, nil, tt(map[string]any{"offset": []float64{1, 2, 3}})), [2]string{},
			`material 0 "m": texture 0: KHR_texture_transform: offset has 3 numbers, want 2`},
		{"texCoord", texturedTriDoc(t, uv, nil, nil, tt(map[string]any{"texCoord": -1})), [2]string{},
			`material 0 "m": texture 0: KHR_texture_transform: texCoord -1 is not a TEXCOORD set`},
		// Finite, but it takes a coordinate beyond float32.
		{"overflow", texturedTriDoc(t, uv, nil, nil, tt(map[string]any{"scale": []float64{1e10, 1}})), [2]string{},
			`material 0 "m": texture 0: KHR_texture_transform of TEXCOORD_0: vertex 2 (1e+30, 0) goes to (+Inf, 0), not finite`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			js := string(encode(t, tc.doc, false))
			if tc.replace[0] != "" {
				if !strings.Contains(js, tc.replace[0]) {
					t.Fatalf("%s not in the JSON: %s", tc.replace[0], js)
				}
				js = strings.Replace(js, tc.replace[0], tc.replace[1], 1)
			}
			_, err := Decode(strings.NewReader(js), "bad.gltf")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "models: bad.gltf: ") {
				t.Errorf("error %v\nwant one containing %s", err, tc.want)
			}
		})
	}
	// A sampler no material uses is still named.
	doc := texturedTriDoc(t, uv, nil, nil, nil)
	doc.Samplers = []*gltf.Sampler{{MagFilter: gltf.MagLinear}}
	js := strings.Replace(string(encode(t, doc, false)), `"magFilter":9729`, `"magFilter":1`, 1)
	if _, err := Decode(strings.NewReader(js), "bad.gltf"); err == nil || !strings.Contains(err.Error(), "bad.gltf: sampler 0: magFilter 1 is not one of glTF's") {
		t.Errorf("unused bad sampler: %v", err)
	}
	// Values that are not JSON numbers never reach a file, but a value
	// put in the extensions map in memory is refused all the same.
	var uvt uvTransform
	if err := textureTransform(map[string]any{"rotation": math.NaN()}, &uvt); err == nil {
		t.Error("NaN rotation accepted")
	}
}

// Write stores the sampler on the base color texture; Load reads it back.
func TestWriteSampler(t *testing.T) {
	for _, file := range []string{"s.glb", "s.gltf"} {
		for _, s := range []Sampler{
			{MagFilter: FilterNearest, MinFilter: FilterNearestMipmapLinear, WrapS: WrapClampToEdge, WrapT: WrapMirroredRepeat},
			{MagFilter: FilterLinear, MinFilter: FilterNearest, WrapS: WrapMirroredRepeat},
			{WrapT: WrapClampToEdge},
		} {
			m := NewModel("s")
			box := Box("box", 1, 1, 1, [4]float32{1, 1, 1, 1})
			mat := box.Primitives[0].Material
			mat.BaseColorTexture, mat.Sampler = image.NewNRGBA(image.Rect(0, 0, 2, 2)), s
			m.AddNode(nil, "box", mgl64.Ident4(), box)
			path := filepath.Join(t.TempDir(), file)
			if err := Write(path, m); err != nil {
				t.Fatal(err)
			}
			if doc := readDoc(t, path); len(doc.Samplers) != 1 || doc.Textures[0].Sampler == nil || *doc.Textures[0].Sampler != 0 {
				t.Errorf("%s: %d samplers written, texture's %v", file, len(doc.Samplers), doc.Textures[0].Sampler)
			}
			back, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := back.Materials[0].Sampler; got != s {
				t.Errorf("%s: sampler %+v read back, want %+v", file, got, s)
			}
		}
	}
	// No sampler set, none written; a bad one refused naming the material.
	m := NewModel("s")
	box := Box("box", 1, 1, 1, [4]float32{1, 1, 1, 1})
	mat := box.Primitives[0].Material
	mat.Name, mat.BaseColorTexture = "crate", image.NewNRGBA(image.Rect(0, 0, 2, 2))
	m.AddNode(nil, "box", mgl64.Ident4(), box)
	path := filepath.Join(t.TempDir(), "none.gltf")
	if err := Write(path, m); err != nil {
		t.Fatal(err)
	}
	if doc := readDoc(t, path); len(doc.Samplers) != 0 || doc.Textures[0].Sampler != nil {
		t.Errorf("zero sampler written: %d samplers", len(doc.Samplers))
	}
	for _, tc := range []struct {
		s    Sampler
		want string
	}{
		{Sampler{MagFilter: FilterLinearMipmapLinear}, `material "crate": texture sampler: magFilter 9987 is not a glTF magnification filter`},
		{Sampler{MinFilter: 1}, `material "crate": texture sampler: minFilter 1 is not a glTF minification filter`},
		{Sampler{WrapS: 9728}, `material "crate": texture sampler: wrapS 9728 is not a glTF wrap mode`},
		{Sampler{WrapT: -1}, `material "crate": texture sampler: wrapT -1 is not a glTF wrap mode`},
	} {
		mat.Sampler = tc.s
		if err := Write(path, m); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("writing %+v: %v, want %s", tc.s, err, tc.want)
		}
	}
}
