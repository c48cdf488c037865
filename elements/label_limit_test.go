package elements

import (
	"strings"
	"testing"

	"github.com/simvis/simvis/scene"
)

// A label's text is drawn whole into one texture: longer text than
// maxLabelText is refused (a request could otherwise make the host draw a
// picture of hundreds of megabytes), the longest allowed is drawn.
func TestLabelTextBounded(t *testing.T) {
	s := scene.New(scene.Options{})
	long := strings.Repeat("x", maxLabelText+1)
	c, err := scene.ParseCommand(`<element type="label" name="L" insert_at="ROOT" text="`+long+`"/>`, "req", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(c); err == nil || !strings.Contains(err.Error(), "at most 256") {
		t.Errorf("a label of %d bytes: %v, want refused", len(long), err)
	}
	c, err = scene.ParseCommand(`<element type="label" name="L" insert_at="ROOT" text="`+long[1:]+`"/>`, "req", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(c); err != nil {
		t.Errorf("a label of %d bytes: %v", maxLabelText, err)
	}
}
