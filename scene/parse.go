package scene

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/beevik/etree"
	"github.com/simvis/simvis/models"
)

// ReadCommands reads a scene file: either a <scene> root holding part, element
// and sensor commands, or a bare list of commands like the paper's Fig. 1.
func ReadCommands(path string) ([]*Command, error) {
	data, err := readSceneFile(path)
	if err != nil {
		return nil, fmt.Errorf("scene: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("scene: %w", err)
	}
	return ParseCommands(data, path, filepath.Dir(abs))
}

// MaxSceneFileBytes bounds the scene files ReadCommands reads.
const MaxSceneFileBytes = 256 << 20

// readSceneFile reads a regular file of at most MaxSceneFileBytes, as
// model files are read (models.ReadRegular): a FIFO or a device named as a
// scene would block or never end.
func readSceneFile(path string) ([]byte, error) {
	data, err := models.ReadRegular(path, MaxSceneFileBytes)
	var le *models.LimitError
	if errors.As(err, &le) { // its text names the model limits' flags
		return nil, fmt.Errorf("%s: %d bytes, more than the %d a scene file may have", path, le.Have, le.Max)
	}
	return data, err
}

// ParseCommands parses scene XML held in memory. file names the source in
// errors; dir is what relative file= paths resolve against.
func ParseCommands(data []byte, file, dir string) ([]*Command, error) {
	// A UTF-8 byte-order mark, which some editors write, is no content.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	// etree keeps no positions, so a first pass with encoding/xml checks the
	// syntax and records the line of every start tag in document order.
	lines, err := startLines(data, file)
	if err != nil {
		return nil, err
	}
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(data); err != nil {
		return nil, &Error{File: file, Err: err}
	}
	lineOf := map[*etree.Element]int{}
	i := 0
	var number func(e *etree.Element)
	number = func(e *etree.Element) {
		if i < len(lines) {
			lineOf[e] = lines[i]
		}
		i++
		for _, c := range e.ChildElements() {
			number(c)
		}
	}
	roots := doc.ChildElements()
	for _, r := range roots {
		number(r)
	}
	if len(roots) == 0 {
		return nil, &Error{File: file, Err: errors.New("no commands (want <scene> or part/element/sensor commands)")}
	}
	elems := roots
	if err := strayText(&doc.Element, file, 0, ""); err != nil {
		return nil, err
	}
	if len(roots) == 1 && roots[0].Tag == "scene" {
		s := roots[0]
		if len(s.Attr) > 0 {
			return nil, &Error{File: file, Line: lineOf[s], What: "scene", Attr: s.Attr[0].Key, Err: errors.New("unknown attribute")}
		}
		if err := strayText(s, file, lineOf[s], "scene"); err != nil {
			return nil, err
		}
		elems = s.ChildElements()
	}
	cmds := make([]*Command, 0, len(elems))
	for _, e := range elems {
		c := &Command{Elem: e, File: file, Line: lineOf[e], Dir: dir}
		switch e.Tag {
		case "part", "element", "sensor", "remove":
		default:
			return nil, &Error{File: file, Line: c.Line, What: fmt.Sprintf("<%s>", e.FullTag()),
				Err: errors.New("unknown command (want part, element or sensor)")}
		}
		if e.Space != "" {
			return nil, c.Errorf("", "namespaced command %q not supported", e.FullTag())
		}
		// Commands take attributes only: content would be silently
		// ignored, so a nested command (a part's element, say) is an error.
		if children := e.ChildElements(); len(children) > 0 {
			return nil, &Error{File: file, Line: lineOf[children[0]], What: c.what(),
				Err: fmt.Errorf("child <%s> not allowed: commands take attributes only (write nested commands after it, with insert_at)", children[0].FullTag())}
		}
		if err := strayText(e, file, c.Line, c.what()); err != nil {
			return nil, err
		}
		cmds = append(cmds, c)
	}
	return cmds, nil
}

// strayText returns an error for content of e other than child elements,
// comments and white space: text, CDATA or processing instructions that
// would otherwise be ignored.
func strayText(e *etree.Element, file string, line int, what string) error {
	for _, t := range e.Child {
		switch t := t.(type) {
		case *etree.CharData:
			if text := strings.TrimSpace(t.Data); text != "" {
				if r := []rune(text); len(r) > 40 {
					text = string(r[:40]) + "..."
				}
				return &Error{File: file, Line: line, What: what, Err: fmt.Errorf("text %q not allowed: commands take attributes only", text)}
			}
		case *etree.ProcInst:
			if e.Parent() != nil { // the document's own (<?xml ...?>) are fine
				return &Error{File: file, Line: line, What: what, Err: fmt.Errorf("processing instruction <?%s?> not allowed", t.Target)}
			}
		}
	}
	return nil
}

// startLines returns the line of each start tag in document order, and a
// located error for malformed XML or a repeated attribute.
func startLines(data []byte, file string) ([]int, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	var lines []int
	for {
		// Before Token, the position is at the '<' of the next tag, because
		// text between tags comes back as its own token.
		line, _ := d.InputPos()
		tok, err := d.Token()
		if err == io.EOF {
			return lines, nil
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return nil, &Error{File: file, Line: se.Line, Err: fmt.Errorf("XML syntax: %s", se.Msg)}
			}
			return nil, &Error{File: file, Line: line, Err: fmt.Errorf("XML: %v", err)}
		}
		if se, ok := tok.(xml.StartElement); ok {
			seen := map[xml.Name]bool{}
			for _, a := range se.Attr {
				if seen[a.Name] {
					return nil, &Error{File: file, Line: line, What: "<" + se.Name.Local + ">", Attr: a.Name.Local, Err: errors.New("given twice")}
				}
				seen[a.Name] = true
			}
			lines = append(lines, line)
		}
	}
}
