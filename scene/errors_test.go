package scene_test

import (
	"testing"

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
