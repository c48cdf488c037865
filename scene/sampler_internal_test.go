package scene

import (
	"image"
	"reflect"
	"testing"

	"github.com/g3n/engine/gls"
	"github.com/g3n/engine/texture"
	"github.com/simvis/simvis/models"
)

// texParams reads the filters and wrap modes g3n will give the GL
// (Texture2D keeps them unexported, without getters).
func texParams(tex *texture.Texture2D) [4]uint64 {
	v := reflect.ValueOf(tex).Elem()
	return [4]uint64{v.FieldByName("magFilter").Uint(), v.FieldByName("minFilter").Uint(),
		v.FieldByName("wrapS").Uint(), v.FieldByName("wrapT").Uint()}
}

// The camera's texture takes the material's glTF sampler; unset fields
// give LINEAR, LINEAR_MIPMAP_LINEAR and REPEAT.
func TestTextureSampler(t *testing.T) {
	// glTF's numbers are GL's.
	if gls.NEAREST != models.FilterNearest || gls.LINEAR != models.FilterLinear ||
		gls.NEAREST_MIPMAP_NEAREST != models.FilterNearestMipmapNearest || gls.LINEAR_MIPMAP_NEAREST != models.FilterLinearMipmapNearest ||
		gls.NEAREST_MIPMAP_LINEAR != models.FilterNearestMipmapLinear || gls.LINEAR_MIPMAP_LINEAR != models.FilterLinearMipmapLinear ||
		gls.REPEAT != models.WrapRepeat || gls.CLAMP_TO_EDGE != models.WrapClampToEdge || gls.MIRRORED_REPEAT != models.WrapMirroredRepeat {
		t.Fatal("gls constants differ from glTF's numbers")
	}
	const (
		lin, near, trilinear  = gls.LINEAR, gls.NEAREST, gls.LINEAR_MIPMAP_LINEAR
		repeat, clamp, mirror = gls.REPEAT, gls.CLAMP_TO_EDGE, gls.MIRRORED_REPEAT
	)
	for _, tc := range []struct {
		s    models.Sampler
		want [4]uint64 // mag, min, wrap S, wrap T
	}{
		{models.Sampler{}, [4]uint64{lin, trilinear, repeat, repeat}},
		{models.Sampler{MagFilter: models.FilterNearest, MinFilter: models.FilterNearest, WrapS: models.WrapClampToEdge, WrapT: models.WrapMirroredRepeat},
			[4]uint64{near, near, clamp, mirror}},
		{models.Sampler{MagFilter: models.FilterLinear, MinFilter: models.FilterLinear, WrapS: models.WrapMirroredRepeat, WrapT: models.WrapClampToEdge},
			[4]uint64{lin, lin, mirror, clamp}},
		{models.Sampler{MinFilter: models.FilterNearestMipmapNearest, WrapS: models.WrapRepeat},
			[4]uint64{lin, gls.NEAREST_MIPMAP_NEAREST, repeat, repeat}},
		{models.Sampler{MinFilter: models.FilterLinearMipmapNearest}, [4]uint64{lin, gls.LINEAR_MIPMAP_NEAREST, repeat, repeat}},
		{models.Sampler{MinFilter: models.FilterNearestMipmapLinear}, [4]uint64{lin, gls.NEAREST_MIPMAP_LINEAR, repeat, repeat}},
		{models.Sampler{MinFilter: models.FilterLinearMipmapLinear}, [4]uint64{lin, trilinear, repeat, repeat}},
	} {
		c := newMeshCache()
		m := &models.Material{Name: "crate", BaseColor: [4]float32{1, 1, 1, 1}, BaseColorTexture: image.NewNRGBA(image.Rect(0, 0, 2, 2)), Sampler: tc.s}
		tex := c.texture(m)
		if got := texParams(tex); got != tc.want {
			t.Errorf("sampler %+v: texture mag, min, wrap S, T %#x, want %#x", tc.s, got, tc.want)
		}
		if again := c.texture(m); again != tex {
			t.Errorf("sampler %+v: the material's texture uploaded twice", tc.s)
		}
	}
}
