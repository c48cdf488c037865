package scene

import (
	"unicode"
	"unicode/utf8"
)

// maxClassLen bounds a class attribute in bytes: class names travel into
// every segmentation sensor's labels file.
const maxClassLen = 128

// readClass reads the class attribute every part and element command may
// carry: the semantic class (e.g. "robot", "tree") that segmentation sensors
// report for the meshes the command makes. A command embedded in a part's
// model that has none takes the part's class (prefix is the part's name),
// so that a robot's embedded parts count as the robot unless they say
// otherwise. "" means unclassed.
func (s *Scene) readClass(c *Command, prefix string) (string, error) {
	v, ok := c.Attr("class")
	if !ok {
		if prefix != "" {
			return s.classes[prefix], nil
		}
		return "", nil
	}
	switch {
	case v == "":
		return "", c.Errorf("class", "empty")
	case len(v) > maxClassLen:
		return "", c.Errorf("class", "longer than %d bytes", maxClassLen)
	case !utf8.ValidString(v):
		return "", c.Errorf("class", "not valid UTF-8")
	}
	for _, r := range v {
		if !unicode.IsPrint(r) {
			return "", c.Errorf("class", "%q holds a control or unprintable character", v)
		}
	}
	if unicode.IsSpace([]rune(v)[0]) || v[len(v)-1] == ' ' {
		return "", c.Errorf("class", "%q starts or ends with a space", v)
	}
	return v, nil
}

// setClass records the class of the part or element name, undone with the
// command.
func (s *Scene) setClass(name, class string) {
	if class == "" {
		return
	}
	if s.classes == nil {
		s.classes = map[string]string{}
	}
	s.classes[name] = class
	s.undo = append(s.undo, func() { delete(s.classes, name) })
}

// Class returns the class of the part or element named owner (a Node's
// Owner), "" if it has none.
func (s *Scene) Class(owner string) string { return s.classes[owner] }
