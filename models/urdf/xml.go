package urdf

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// elem is an XML element with the line of its start tag: URDF errors name
// the line of what they refuse (etree keeps no positions).
type elem struct {
	name     string
	attrs    []xml.Attr
	children []*elem
	line     int
}

func (e *elem) attr(name string) (string, bool) {
	for _, a := range e.attrs {
		if a.Name.Space == "" && a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

func (e *elem) all(name string) []*elem {
	var out []*elem
	for _, c := range e.children {
		if c.name == name {
			out = append(out, c)
		}
	}
	return out
}

func (e *elem) first(name string) *elem {
	for _, c := range e.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

// maxDepth bounds the XML nesting: URDF nests five deep.
const maxDepth = 64

// parseXML reads a document into elements, at most maxElems of them.
// Namespaced elements (xacro leftovers, gazebo extensions) are kept with
// their local name prefixed by the namespace, so they match nothing.
func parseXML(data []byte, maxElems int) (*elem, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	var root *elem
	var stack []*elem
	count := 0
	for {
		line, _ := d.InputPos()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return nil, located(se.Line, "XML syntax: %s", se.Msg)
			}
			return nil, located(line, "XML: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			count++
			if maxElems >= 0 && count > maxElems {
				return nil, located(line, "more than %d XML elements", maxElems)
			}
			if len(stack) >= maxDepth {
				return nil, located(line, "XML nested more than %d deep", maxDepth)
			}
			name := t.Name.Local
			if t.Name.Space != "" {
				name = t.Name.Space + ":" + name
			}
			e := &elem{name: name, attrs: t.Copy().Attr, line: line}
			seen := map[xml.Name]bool{}
			for _, a := range t.Attr {
				if seen[a.Name] {
					return nil, located(line, "<%s>: attribute %q given twice", name, a.Name.Local)
				}
				seen[a.Name] = true
			}
			if len(stack) == 0 {
				if root != nil {
					return nil, located(line, "a second root element <%s>", name)
				}
				root = e
			} else {
				p := stack[len(stack)-1]
				p.children = append(p.children, e)
			}
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 0 && strings.TrimSpace(string(t)) != "" {
				return nil, located(line, "text outside the root element")
			}
		}
	}
	if root == nil {
		return nil, located(0, "no root element (want <robot>)")
	}
	return root, nil
}

// lineError is an error at a line of the URDF file (0: the whole file).
type lineError struct {
	line int
	msg  string
}

func (e *lineError) Error() string { return e.msg }

func located(line int, format string, args ...any) error {
	return &lineError{line: line, msg: fmt.Sprintf(format, args...)}
}
