package gpu

import (
	"image"
	"testing"

	"github.com/g3n/engine/gls"
)

// Blit copies color, and depth where asked, pixel for pixel; ReadBGRA
// delivers blue first, top row first; framebuffers of different sizes are
// refused.
func TestBlitAndReadBGRA(t *testing.T) {
	ctx := shared(t)
	err := ctx.Do(func(gs *gls.GLS) error {
		src, err := NewFramebuffer(gs, 8, 4, ColorRGBA8)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Delete(gs)
		dst, err := NewFramebuffer(gs, 8, 4, ColorRGBA8)
		if err != nil {
			t.Fatal(err)
		}
		defer dst.Delete(gs)
		other, err := NewFramebuffer(gs, 4, 4, ColorRGBA8)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Delete(gs)

		// src: red, depth 1, then its top row (GL's last) cleared green
		// with depth 0.25 through a scissor.
		src.Clear(gs, 1, 0, 0, 1)
		gs.Enable(gls.SCISSOR_TEST)
		gs.Scissor(0, 3, 8, 1)
		gs.ClearColor(0, 1, 0, 1)
		gs.ClearDepth(0.25)
		gs.Clear(gls.COLOR_BUFFER_BIT | gls.DEPTH_BUFFER_BIT)
		gs.Disable(gls.SCISSOR_TEST)
		gs.ClearDepth(1)
		dst.Clear(gs, 0, 0, 1, 1)

		if err := Blit(gs, src, dst, true); err != nil {
			t.Fatal(err)
		}
		px := make([]byte, 4*8*4)
		if err := dst.ReadBGRA(gs, px); err != nil {
			t.Fatal(err)
		}
		// Top row first: green (B 0, G 255, R 0), then red rows.
		if got := px[0:4]; got[0] != 0 || got[1] != 255 || got[2] != 0 {
			t.Errorf("top-left BGRA %v, want green", got)
		}
		if got := px[4*8*3 : 4*8*3+4]; got[0] != 0 || got[1] != 0 || got[2] != 255 {
			t.Errorf("bottom-left BGRA %v, want red", got)
		}
		depth := make([]float32, 8*4)
		if err := dst.ReadDepth(gs, depth); err != nil {
			t.Fatal(err)
		}
		if depth[0] != 0.25 || depth[8*3] != 1 {
			t.Errorf("depth top %v, bottom %v: want 0.25 and 1 (copied)", depth[0], depth[8*3])
		}

		// Color only: dst's depth stays.
		dst.Clear(gs, 0, 0, 1, 1)
		if err := Blit(gs, src, dst, false); err != nil {
			t.Fatal(err)
		}
		if err := dst.ReadDepth(gs, depth); err != nil {
			t.Fatal(err)
		}
		if depth[0] != 1 {
			t.Errorf("a color blit changed the depth to %v", depth[0])
		}
		img := image.NewRGBA(image.Rect(0, 0, 8, 4))
		if err := dst.ReadRGBA(gs, img); err != nil {
			t.Fatal(err)
		}
		if c := img.RGBAAt(0, 0); c.G != 255 || c.R != 0 {
			t.Errorf("after a color blit top-left %v, want green", c)
		}

		if err := Blit(gs, src, other, false); err == nil {
			t.Error("a blit between 8x4 and 4x4 framebuffers: no error")
		}
		if err := src.ReadBGRA(gs, make([]byte, 10)); err == nil {
			t.Error("ReadBGRA into 10 bytes: no error")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
