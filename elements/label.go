package elements

import (
	"fmt"
	"sync"

	"github.com/g3n/engine/graphic"
	"github.com/g3n/engine/gui/assets"
	"github.com/g3n/engine/material"
	"github.com/g3n/engine/math32"
	"github.com/g3n/engine/text"
	"github.com/g3n/engine/texture"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

func init() { scene.RegisterElement("label", newLabel) }

// label is a text billboard: it always faces the viewer, is size meters
// tall, and sits at x y z in the insertion point's frame (map node names,
// debug text). The text is drawn unlit in its color, so it reads the same
// under any lighting.
type label struct {
	node   *scene.Node
	sprite *graphic.Sprite
	aspect float32      // width / height of the rendered text
	text   string       // for Overlay
	color  math32.Color // for Overlay
}

// labelFontSize is the point size text is rasterized at: large enough to stay
// sharp in a 1080p view of a label filling a tenth of the image height.
const labelFontSize = 64

var (
	fontOnce sync.Once
	font     *text.Font
	fontErr  error
)

// labelFont loads the sans-serif font that g3n embeds.
func labelFont() (*text.Font, error) {
	fontOnce.Do(func() {
		data, err := assets.Asset("fonts/FreeSans.ttf")
		if err != nil {
			fontErr = err
			return
		}
		font, fontErr = text.NewFontFromData(data)
		if fontErr == nil {
			font.SetPointSize(labelFontSize)
			font.SetColor(&math32.Color4{R: 1, G: 1, B: 1, A: 1})
		}
	})
	return font, fontErr
}

var fontMu sync.Mutex // text.Font keeps drawing state

// maxLabelText bounds a label's text: it is rasterized whole into one
// texture, so a request's 16 KiB of text would otherwise cost a picture of
// hundreds of megabytes (a name tag needs a few words).
const maxLabelText = 256

func newLabel(ctx *scene.Context) (scene.Element, error) {
	c := ctx.Command
	str, err := c.Required("text")
	if err != nil {
		return nil, err
	}
	if len(str) > maxLabelText {
		return nil, c.Errorf("text", "%d bytes of text: a label takes at most %d", len(str), maxLabelText)
	}
	col, err := readRGB(c, "color", [3]float64{1, 1, 1})
	if err != nil {
		return nil, err
	}
	f, err := labelFont()
	if err != nil {
		return nil, c.Errorf("text", "loading the label font: %v", err)
	}
	fontMu.Lock()
	img := f.DrawText(str)
	fontMu.Unlock()
	b := img.Bounds()
	if b.Dx() == 0 || b.Dy() == 0 {
		return nil, c.Errorf("text", "%q draws nothing", str)
	}
	tex := texture.NewTexture2DFromRGBA(img)
	// Diffuse, ambient and specular black, emissive the text color: the
	// fragment color is the emissive color everywhere and the texture's
	// alpha cuts out the letters.
	black := &math32.Color{}
	mat := material.NewStandard(black)
	mat.SetAmbientColor(black)
	mat.SetSpecularColor(black)
	mat.SetEmissiveColor(&col)
	mat.SetTransparent(true)
	mat.AddTexture(tex)
	l := &label{aspect: float32(b.Dx()) / float32(b.Dy()), text: str, color: col}
	l.sprite = graphic.NewSprite(1, 1, mat)
	sep := ctx.InsertSeparator(mgl64.Ident4())
	l.node = ctx.AddChild(sep, scene.KindCustom, ctx.Name, mgl64.Ident4())
	l.node.G3N().Add(l.sprite)
	return l, nil
}

func (l *label) Params() []scene.Param {
	return []scene.Param{{Name: "x"}, {Name: "y"}, {Name: "z"}, {Name: "size", Default: 0.2}}
}

func (l *label) Apply(v []float64) error {
	if v[3] <= 0 {
		return fmt.Errorf("size = %g: want a text height > 0 m", v[3])
	}
	l.node.SetLocal(mgl64.Translate3D(v[0], v[1], v[2]))
	l.sprite.SetScale(float32(v[3])*l.aspect, float32(v[3]), 1)
	return nil
}
