package gpu

import (
	"bytes"
	"fmt"
	"image"
	"math"
	"testing"

	"github.com/g3n/engine/gls"
)

// Reads started one after the other on one framebuffer, each followed by
// drawing something else into it, deliver what the framebuffer held when
// each started, top row first, bit for bit what the waiting reads give;
// buffers are reused; a dropped read leaves the others right.
func TestStartReadKeepsOrder(t *testing.T) {
	defer func(v bool) { AsyncReads = v }(AsyncReads)
	for _, async := range []bool{true, false} {
		AsyncReads = async
		ctx := shared(t)
		err := ctx.Do(func(gs *gls.GLS) error {
			for _, format := range []ColorFormat{ColorRGBA8, ColorRGBA32F, ColorR32F} {
				fb, err := NewFramebuffer(gs, 7, 5, format)
				if err != nil {
					return err
				}
				// Picture k: cleared to (k/8, 0.5, 1-k/8, 1), its top row
				// (GL's last) green through a scissor.
				draw := func(k int) {
					fb.Clear(gs, float32(k)/8, 0.5, 1-float32(k)/8, 1)
					gs.Enable(gls.SCISSOR_TEST)
					gs.Scissor(0, 4, 7, 1)
					gs.ClearColor(0, 1, 0, 1)
					gs.Clear(gls.COLOR_BUFFER_BIT)
					gs.Disable(gls.SCISSOR_TEST)
				}
				want := make([][]byte, 4)
				for k := range want {
					draw(k)
					if want[k], err = readNow(gs, fb); err != nil {
						return err
					}
				}
				for round := 0; round < 2; round++ {
					var reads []*PendingRead
					for k := range want {
						draw(k)
						p, err := fb.StartRead(gs)
						if err != nil {
							return err
						}
						reads = append(reads, p)
					}
					draw(7) // after every start: must not show
					reads[2].Drop(gs)
					for k, p := range reads {
						if k == 2 {
							continue
						}
						got := make([]byte, p.Size())
						if err := p.Finish(gs, got); err != nil {
							return err
						}
						if !bytes.Equal(got, want[k]) {
							t.Errorf("async %v %s round %d: read %d differs from the picture drawn before it", async, format, round, k)
						}
						if err := p.Finish(gs, got); err == nil && async {
							t.Errorf("a read finished twice gave no error")
						}
					}
				}
				if async && len(fb.pbos) != 4 {
					t.Errorf("%s: %d pixel-pack buffers kept after two rounds of 4 reads, want 4 (reused)", format, len(fb.pbos))
				}
				fb.Delete(gs)
				if len(fb.pbos) != 0 {
					t.Errorf("Delete kept pixel-pack buffers")
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// readNow reads fb's color with the waiting reads, as bytes.
func readNow(gs *gls.GLS, fb *Framebuffer) ([]byte, error) {
	if fb.Format() == ColorRGBA8 {
		img := image.NewRGBA(image.Rect(0, 0, fb.Width, fb.Height))
		if err := fb.ReadRGBA(gs, img); err != nil {
			return nil, err
		}
		// The top row is green, the others not.
		if img.Pix[1] != 255 || img.Pix[len(img.Pix)-4+1] == 255 {
			return nil, fmt.Errorf("the waiting read's rows are not top row first")
		}
		return img.Pix, nil
	}
	px := make([]float32, fb.Width*fb.Height*fb.Format().Channels())
	if err := fb.ReadFloat(gs, px); err != nil {
		return nil, err
	}
	if fb.Format() == ColorR32F && math.Abs(float64(px[0])) > 0 {
		return nil, fmt.Errorf("R32F's top row holds red %v, want 0 (green cleared)", px[0])
	}
	return append([]byte(nil), FloatBytes(px)...), nil
}

// FinishOpaque gives Finish's colors with alpha 255, on both ways of
// reading, and refuses float targets.
func TestFinishOpaque(t *testing.T) {
	defer func(v bool) { AsyncReads = v }(AsyncReads)
	for _, async := range []bool{true, false} {
		AsyncReads = async
		err := shared(t).Do(func(gs *gls.GLS) error {
			fb, err := NewFramebuffer(gs, 5, 3, ColorRGBA8)
			if err != nil {
				return err
			}
			defer fb.Delete(gs)
			fb.Clear(gs, 0.2, 0.4, 0.6, 0.4)
			plain, opaque := make([]byte, 60), make([]byte, 60)
			for k, dst := range [][]byte{plain, opaque} {
				p, err := fb.StartRead(gs)
				if err != nil {
					return err
				}
				if k == 0 {
					err = p.Finish(gs, dst)
				} else {
					err = p.FinishOpaque(gs, dst)
				}
				if err != nil {
					return err
				}
			}
			for i := range plain {
				want := plain[i]
				if i%4 == 3 {
					if plain[i] != 102 {
						return fmt.Errorf("Finish's alpha %d, want 102 (0.4)", plain[i])
					}
					want = 255
				}
				if opaque[i] != want {
					return fmt.Errorf("FinishOpaque's byte %d is %d, want %d", i, opaque[i], want)
				}
			}
			f32, err := NewFramebuffer(gs, 5, 3, ColorRGBA32F)
			if err != nil {
				return err
			}
			defer f32.Delete(gs)
			p, err := f32.StartRead(gs)
			if err != nil {
				return err
			}
			defer p.Drop(gs)
			if err := p.FinishOpaque(gs, make([]byte, p.Size())); err == nil {
				return fmt.Errorf("FinishOpaque of a float target gave no error")
			}
			return nil
		})
		if err != nil {
			t.Fatalf("async %v: %v", async, err)
		}
	}
}
