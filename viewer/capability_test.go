package viewer

import (
	"testing"

	"github.com/simvis/simvis/scene"
)

// cart is an element type of the test's own that moves the robot: the
// viewer follows it because it says so (scene.Mobile), not by its type
// name. lamp does not. (That the still-mesh cache asks scene.Kinematic is
// viewer/layering's test.)
type (
	cart struct{}
	lamp struct{}
)

func (cart) Params() []scene.Param { return []scene.Param{{Name: "x"}} }
func (cart) Apply([]float64) error { return nil }
func (cart) Mobile() bool          { return true }
func (cart) Kinematic() bool       { return true }
func (lamp) Params() []scene.Param { return []scene.Param{{Name: "on"}} }
func (lamp) Apply([]float64) error { return nil }

func init() {
	scene.RegisterElement("test-cart", func(*scene.Context) (scene.Element, error) { return cart{}, nil })
	scene.RegisterElement("test-lamp", func(*scene.Context) (scene.Element, error) { return lamp{}, nil })
}

func TestViewerAsksElements(t *testing.T) {
	s := scene.New(scene.Options{})
	for _, x := range []string{`<element type="test-lamp" name="L" insert_at="ROOT"/>`, `<element type="test-cart" name="C" insert_at="ROOT"/>`} {
		c, err := scene.ParseCommand(x, "test", ".")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Exec(c); err != nil {
			t.Fatal(err)
		}
	}
	cartE, _ := s.Element("C")
	n, ok := (&Viewer{}).followFrame(s)
	want, err := s.Frame(cartE.At)
	if !ok || err != nil || n != want {
		t.Errorf("followed %v (%v), want the cart's insertion point %s", n, ok, cartE.At)
	}
}
