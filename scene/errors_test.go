package scene_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// Every bad scene file gets an error naming the file, line and attribute.
func TestBadSceneFiles(t *testing.T) {
	dir := t.TempDir()
	writeBoxModel(t, dir, "box.glb", 1)
	writeFile(t, dir, "broken.glb", "not a gltf file")
	cases := []struct{ name, xml, want string }{
		{"syntax", "<scene>\n<part file=\"box.glb\" name=\"A\">\n</scene>",
			"s.xml:3: XML syntax: element <part> closed by </scene>"},
		{"unknown command", "<scene>\n<parts file=\"box.glb\" name=\"A\"/>\n</scene>",
			"s.xml:2: <parts>: unknown command (want part, element or sensor)"},
		{"empty", "<!-- nothing -->",
			"s.xml: no commands (want <scene> or part/element/sensor commands)"},
		{"scene attribute", "<scene version=\"2\"/>",
			`s.xml:1: scene: attribute "version": unknown attribute`},
		{"missing file", "<part name=\"A\"/>",
			`s.xml:1: part "A": attribute "file": missing`},
		{"missing name", "<part file=\"box.glb\"/>",
			`s.xml:1: part: attribute "name": missing`},
		{"bad name", "<part file=\"box.glb\" name=\"A.B\"/>",
			`s.xml:1: part "A.B": attribute "name": "A.B" is not a valid name (letters, digits, '_' and '-', not starting with a digit or '-')`},
		{"duplicate name", "<part file=\"box.glb\" name=\"A\"/>\n\n<part file=\"box.glb\" name=\"A\"/>",
			`s.xml:3: part "A": attribute "name": "A" is already used by part "A"`},
		{"reserved name", "<part file=\"box.glb\" name=\"ROOT\"/>",
			`s.xml:1: part "ROOT": attribute "name": "ROOT" is already used by the root insertion point`},
		{"unknown insertion point", "<part file=\"box.glb\" name=\"A\" insert_at=\"TABLE\"/>",
			`s.xml:1: part "A": attribute "insert_at": no insertion point "TABLE" (have ROOT)`},
		{"short pose", "<part file=\"box.glb\" name=\"A\" pose_offset=\"1 2 3 4 5\"/>",
			`s.xml:1: part "A": attribute "pose_offset": want 6 numbers "x y z roll pitch yaw", got 5`},
		{"bad pose number", "<part file=\"box.glb\" name=\"A\" pose_offset=\"1 2 x 4 5 6\"/>",
			`s.xml:1: part "A": attribute "pose_offset": value 3: "x" is not a number`},
		{"infinite pose", "<part file=\"box.glb\" name=\"A\" pose_offset=\"1 2 inf 4 5 6\"/>",
			`s.xml:1: part "A": attribute "pose_offset": value 3: "inf" is not finite`},
		{"missing model", "<part file=\"nope.glb\" name=\"A\"/>",
			`s.xml:1: part "A": attribute "file": `},
		{"unreadable model", "<part file=\"broken.glb\" name=\"A\"/>",
			`s.xml:1: part "A": attribute "file": `},
		{"typo attribute", "<part file=\"box.glb\" name=\"A\" pose_ofset=\"0 0 0 0 0 0\"/>",
			`s.xml:1: part "A": attribute "pose_ofset": unknown attribute for part`},
		{"twice attribute", "<scene>\n  <part file=\"box.glb\" name=\"A\" name=\"B\"/>\n</scene>",
			`s.xml:2: <part>: attribute "name": given twice`},
		{"unknown element type", "<element type=\"teleport\" name=\"E\"/>",
			`s.xml:1: element "E": attribute "type": unknown element type "teleport" (have `},
		{"missing element type", "<element name=\"E\"/>",
			`s.xml:1: element "E": attribute "type": missing`},
		{"bad parameter value", "<element type=\"pose\" name=\"E\" yaw=\"north\"/>",
			`s.xml:1: element "E": attribute "yaw": "north" is not a number`},
		{"unknown element attribute", "<element type=\"pose\" name=\"E\" heading=\"3\"/>",
			`s.xml:1: element "E": attribute "heading": unknown attribute for element type "pose"`},
		{"unknown sensor type", "<sensor type=\"sonar\" name=\"S\"/>",
			`s.xml:1: sensor "S": attribute "type": unknown sensor type "sonar" (have camera`},
		{"bad sensor setting", "<sensor type=\"camera\" name=\"S\" width=\"-4\"/>",
			`s.xml:1: sensor "S": attribute "width": -4 is out of range [1, 16384]`},
		{"sensor far before near", "<sensor type=\"camera\" name=\"S\" near=\"2\" far=\"1\"/>",
			`s.xml:1: sensor "S": attribute "far": 1 must be greater than near (2)`},
		{"child command", "<scene>\n<part file=\"box.glb\" name=\"A\">\n  <element type=\"pose\" name=\"E\"/>\n</part>\n</scene>",
			`s.xml:3: part "A": child <element> not allowed: commands take attributes only (write nested commands after it, with insert_at)`},
		{"child of a bare command", "<sensor type=\"camera\" name=\"S\"><noise/></sensor>",
			`s.xml:1: sensor "S": child <noise> not allowed`},
		{"text in a command", "<scene>\n<part file=\"box.glb\" name=\"A\">\n  hello\n</part>\n</scene>",
			`s.xml:2: part "A": text "hello" not allowed: commands take attributes only`},
		{"CDATA in a command", "<part file=\"box.glb\" name=\"A\"><![CDATA[x]]></part>",
			`s.xml:1: part "A": text "x" not allowed`},
		{"processing instruction in a command", "<part file=\"box.glb\" name=\"A\"><?run x?></part>",
			`s.xml:1: part "A": processing instruction <?run?> not allowed`},
		{"text in the scene", "<scene>\n<part file=\"box.glb\" name=\"A\"/>\n oops\n</scene>",
			`s.xml:1: scene: text "oops" not allowed`},
		{"out of range pose", "<part file=\"box.glb\" name=\"A\" pose_offset=\"1e39 0 0 0 0 0\"/>",
			`s.xml:1: part "A": attribute "pose_offset": the composed world transform of separator "A" is out of range`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, dir, "s.xml", c.xml)
			_, err := scene.Load(path, scene.Options{})
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			got := err.Error()
			// The error names the path the file was given as.
			if len(got) < len(path) || got[:len(path)] != path {
				t.Fatalf("error %q does not start with the file %q", got, path)
			}
			got = "s.xml" + got[len(path):]
			if len(got) < len(c.want) || got[:len(c.want)] != c.want {
				t.Errorf("error\n  %q\nwant prefix\n  %q", got, c.want)
			}
		})
	}
}

// Requests and commands embedded in models take no content either.
func TestCommandContentRefused(t *testing.T) {
	_, err := scene.ParseCommand(`<part file="box.glb" name="A"><element type="pose" name="E"/></part>`, "req", "")
	if err == nil || err.Error() != `req:1: part "A": child <element> not allowed: commands take attributes only (write nested commands after it, with insert_at)` {
		t.Errorf("request: %v", err)
	}
	dir := t.TempDir()
	writeEmbedding(t, dir, "m.glb", `<element type="pose" name="E">
  <sensor type="camera" name="S"/>
</element>`)
	err = exec(t, scene.New(scene.Options{}), dir, `<part file="m.glb" name="P"/>`)
	if err == nil || !strings.HasPrefix(err.Error(), `req:1: part "P": attribute "file": embedded command 1: `) ||
		!strings.HasSuffix(err.Error(), `:2: element "E": child <sensor> not allowed: commands take attributes only (write nested commands after it, with insert_at)`) {
		t.Errorf("embedded: %v", err)
	}
}

// A scene file that is not a regular file (a FIFO would block the reader)
// or too large is refused at once, naming the file.
func TestSceneFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	_, err := scene.ReadCommands(dir)
	if err == nil || err.Error() != "scene: "+dir+": not a regular file (a directory)" {
		t.Errorf("directory: %v", err)
	}
	big := filepath.Join(dir, "big.xml")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, scene.MaxSceneFileBytes+1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	_, err = scene.ReadCommands(big)
	if want := fmt.Sprintf("scene: %s: %d bytes, more than the %d a scene file may have", big, scene.MaxSceneFileBytes+1, scene.MaxSceneFileBytes); err == nil || err.Error() != want {
		t.Errorf("big: %v\nwant %s", err, want)
	}
	fifo := filepath.Join(dir, "scene.xml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	_, err = scene.ReadCommands(fifo)
	if err == nil || err.Error() != "scene: "+fifo+": not a regular file (a named pipe)" {
		t.Errorf("fifo: %v", err)
	}
}

// An error in commands embedded several models deep names the request in
// full, the failing command in full (file, line, attribute) and between
// them one short step per level, a repeated step once: each level's full
// location once made a 16-deep self-including model's error 2,100
// characters. What the failing command wrapped stays reachable.
func TestEmbeddedErrorChain(t *testing.T) {
	dir := t.TempDir()
	writeEmbedding(t, dir, "self.glb", `<part file="self.glb" name="S"/>`)
	err := exec(t, scene.New(scene.Options{}), dir, `<part file="self.glb" name="A"/>`)
	want := `req:1: part "A": attribute "file": embedded command 1 (part "S"), 15 times > embedded command 1: ` +
		filepath.Join(dir, "self.glb") + `: scene 0 extras.simvis.commands[0]:1: part "S": attribute "file": parts nested more than 16 deep (does a model include itself?)`
	if err == nil || err.Error() != want {
		t.Errorf("self-including:\n%v\nwant\n%s", err, want)
	}

	writeEmbedding(t, dir, "outer.glb", `<part file="box.glb" name="B"/>`, `<part file="mid.glb" name="M"/>`)
	writeEmbedding(t, dir, "mid.glb", `<part file="two.glb" name="T"/>`)
	writeEmbedding(t, dir, "box.glb")
	m := models.NewModel("two")
	m.AddNode(m.AddNode(nil, "a", mgl64.Ident4(), nil), "b", mgl64.Ident4(), nil)
	if err := models.Write(filepath.Join(dir, "two.glb"), m); err != nil {
		t.Fatal(err)
	}
	s := scene.New(scene.Options{Limits: scene.Limits{Model: models.Limits{Nodes: 1}}})
	err = exec(t, s, dir, `<part file="outer.glb" name="O"/>`)
	want = `req:1: part "O": attribute "file": embedded command 2 (part "M") > embedded command 1: ` +
		filepath.Join(dir, "mid.glb") + `: scene 0 extras.simvis.commands[0]:1: part "T": attribute "file": models: ` +
		filepath.Join(dir, "two.glb") + `: the document has 2 nodes, over the limit of 1 (raise it with --max-nodes or scene.Options.Limits.Model.Nodes)`
	if err == nil || err.Error() != want {
		t.Errorf("two levels:\n%v\nwant\n%s", err, want)
	}
	var le *models.LimitError
	if !errors.As(err, &le) || le.Field != "Nodes" || le.Have != 2 || le.Max != 1 {
		t.Errorf("errors.As LimitError: %v", le)
	}
	if len(s.Parts()) != 0 {
		t.Errorf("refused command left %d parts", len(s.Parts()))
	}
}
