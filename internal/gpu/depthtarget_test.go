package gpu

import (
	"strings"
	"testing"

	"github.com/g3n/engine/gls"
)

// A depth target is complete at a valid size, refuses bad sizes with the
// size in the error, clears to 1 and leaves the caller's bindings alone;
// the anisotropy query answers what the GL offers (>= 1, or 0 for none).
func TestDepthTarget(t *testing.T) {
	ctx := shared(t)
	err := ctx.Do(func(gs *gls.GLS) error {
		if _, err := NewDepthTarget(gs, 0, 16); err == nil || !strings.Contains(err.Error(), "0x16") {
			t.Errorf("size 0x16: %v", err)
		}
		if _, err := NewDepthTarget(gs, 1<<20, 16); err == nil || !strings.Contains(err.Error(), "limit") {
			t.Errorf("size 1Mx16: %v", err)
		}
		before := glGetInteger(gls.DRAW_FRAMEBUFFER_BINDING)
		d, err := NewDepthTarget(gs, 64, 32)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Delete(gs)
		if after := glGetInteger(gls.DRAW_FRAMEBUFFER_BINDING); after != before {
			t.Errorf("framebuffer binding %d -> %d", before, after)
		}
		d.BindClear(gs)
		if err := glErrors(); err != nil {
			t.Errorf("after BindClear: %v", err)
		}
		if d.Texture() == 0 || d.Width != 64 || d.Height != 32 {
			t.Errorf("target %+v", d)
		}
		Unbind(gs)
		if n := MaxAnisotropy(gs); n != 0 && n < 1 {
			t.Errorf("MaxAnisotropy %v", n)
		}
		if err := glErrors(); err != nil {
			t.Errorf("after MaxAnisotropy: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
