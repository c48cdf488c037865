package scene_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simvis/simvis/scene"
)

// A scene file may start with a UTF-8 byte-order mark; lines still count
// from the first.
func TestSceneFileWithByteOrderMark(t *testing.T) {
	cmds, err := scene.ParseCommands([]byte("\xef\xbb\xbf<scene>\n  <element type=\"pose\" name=\"P\" insert_at=\"ROOT\"/>\n</scene>\n"), "bom.xml", ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 1 || cmds[0].Line != 2 {
		t.Fatalf("commands %d, line %d: want one, on line 2", len(cmds), cmds[0].Line)
	}
}

// An error echoes what it refuses, but a 10 MB attribute value (or name)
// does not make a 10 MB error line: the start and the end of what is
// echoed stay, with a note of how much was left out.
func TestErrorsEchoBoundedInput(t *testing.T) {
	dir := t.TempDir()
	huge := strings.Repeat("7x", 5<<20)
	file := filepath.Join(dir, "scene.xml")
	os.WriteFile(file, []byte("<scene>\n<element type=\"pose\" name=\"P\" insert_at=\"ROOT\" x=\""+huge+"\"/>\n</scene>\n"), 0o644)
	_, err := scene.Load(file, scene.Options{})
	if err == nil {
		t.Fatal("a pose with x of 10 MB of text loaded")
	}
	msg := err.Error()
	if len(msg) > 2048 || !strings.Contains(msg, "scene.xml:2") || !strings.Contains(msg, `attribute "x"`) || !strings.Contains(msg, "bytes left out") {
		t.Errorf("error of %d bytes: %.300q", len(msg), msg)
	}
	name := strings.Repeat("N", 1<<20)
	os.WriteFile(file, []byte("<scene>\n<element type=\"pose\" name=\""+name+"\" insert_at=\"NOWHERE\"/>\n</scene>\n"), 0o644)
	if _, err := scene.Load(file, scene.Options{}); err == nil || len(err.Error()) > 2048 {
		t.Errorf("an element of a 1 MB name at an unknown point: error of %d bytes", len(err.Error()))
	}
}
