package viewer

import (
	"testing"

	"github.com/simvis/simvis/scene"
)

// cart is an element type of the test's own that moves the robot and
// whose values only move meshes: the viewer follows it and keeps its
// still-mesh cache across its values because it says so (scene.Mobile,
// scene.Kinematic), not by its type name. lamp says neither.
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
	lampE, _ := s.Element("L")
	cartE, _ := s.Element("C")
	if kinematic(lampE.Element) || !kinematic(cartE.Element) {
		t.Errorf("kinematic: lamp %v, cart %v; want false, true", kinematic(lampE.Element), kinematic(cartE.Element))
	}
	n, ok := (&Viewer{}).followFrame(s)
	want, err := s.Frame(cartE.At)
	if !ok || err != nil || n != want {
		t.Errorf("followed %v (%v), want the cart's insertion point %s", n, ok, cartE.At)
	}
}
