package scene

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/beevik/etree"
)

// Command is one part, element or sensor command with where it came from.
// Element and sensor constructors read their configuration from it; every
// attribute a command carries must be read by someone, so a misspelt
// attribute is an error rather than a silently ignored setting.
type Command struct {
	Elem *etree.Element // the whole XML command
	File string         // file (or embedded source) the command came from
	Line int            // 1-based line of the command's start tag
	Dir  string         // directory that relative file= paths resolve against
	// Confined commands come from untrusted sources (requests of a running
	// host): their file paths must be relative and stay inside Root, also
	// after symbolic links are followed, and so must everything the models
	// they load name (buffers, images, embedded commands, recursively).
	Confined bool
	// Root is the directory a confined command's files must stay inside;
	// "" means Dir. Commands embedded in a model that a confined command
	// loads get the command's root, while their relative paths resolve
	// against the model's directory (their Dir).
	Root string

	used map[string]bool
}

// Error is a bad-input error located at a command and, where it applies, one
// attribute of it.
type Error struct {
	File string
	Line int
	What string // e.g. `part "ROBOT"`
	Attr string // "" when the error is about the command as a whole
	Err  error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(clip(e.File, maxEchoName))
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	if e.What != "" {
		b.WriteString(clip(e.What, maxEchoName))
		b.WriteString(": ")
	}
	if e.Attr != "" {
		fmt.Fprintf(&b, "attribute %q: ", clip(e.Attr, maxEchoName))
	}
	b.WriteString(clip(e.Err.Error(), maxEchoText))
	return b.String()
}

// Errors echo what they refuse, but never more than these many bytes of
// it: a 10 MB attribute value must not become a 10 MB error line (in a
// host's log, a request's outcome, a client's terminal).
const (
	maxEchoName = 256  // a file, command or attribute name
	maxEchoText = 1024 // the rest of the message
)

// clip shortens s to about max bytes, keeping its start and its end (where
// messages name the budget or flag that applies) around a note of how much
// was left out, cut at character boundaries.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	head, tail := max/2, max/4
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	start := len(s) - tail
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return fmt.Sprintf("%s[... %d bytes left out ...]%s", s[:head], start-head, s[start:])
}

func (e *Error) Unwrap() error { return e.Err }

// NewCommand wraps an XML element as a command, e.g. for commands built in code.
func NewCommand(elem *etree.Element, file string, line int, dir string) *Command {
	return &Command{Elem: elem, File: file, Line: line, Dir: dir}
}

// ParseCommand parses the XML text of a single command.
func ParseCommand(xmlText, file, dir string) (*Command, error) {
	cmds, err := ParseCommands([]byte(xmlText), file, dir)
	if err != nil {
		return nil, err
	}
	if len(cmds) != 1 {
		return nil, &Error{File: file, Err: fmt.Errorf("want exactly one command, got %d", len(cmds))}
	}
	return cmds[0], nil
}

// Kind is the command name: "part", "element", "sensor" or "remove" (a
// host's request, ipc.Host).
func (c *Command) Kind() string { return c.Elem.Tag }

// Name is the command's name attribute ("" if absent).
func (c *Command) Name() string { return c.Elem.SelectAttrValue("name", "") }

// String returns the command as XML text.
func (c *Command) String() string {
	d := etree.NewDocument()
	d.SetRoot(c.Elem.Copy())
	s, _ := d.WriteToString()
	return s
}

func (c *Command) what() string {
	if name := c.Name(); name != "" {
		return fmt.Sprintf("%s %q", c.Kind(), name)
	}
	return c.Kind()
}

// Errorf returns an Error naming this command and attr ("" for the whole command).
func (c *Command) Errorf(attr, format string, args ...any) error {
	return &Error{File: c.File, Line: c.Line, What: c.what(), Attr: attr, Err: fmt.Errorf(format, args...)}
}

// Attr returns an attribute's value and marks it as read.
func (c *Command) Attr(name string) (string, bool) {
	if c.used == nil {
		c.used = map[string]bool{}
	}
	c.used[name] = true
	a := c.Elem.SelectAttr(name)
	if a == nil {
		return "", false
	}
	return a.Value, true
}

// Has reports whether the attribute is present (without marking it read).
func (c *Command) Has(name string) bool { return c.Elem.SelectAttr(name) != nil }

// Required returns an attribute that must be present and not empty.
func (c *Command) Required(name string) (string, error) {
	v, ok := c.Attr(name)
	if !ok {
		return "", c.Errorf(name, "missing")
	}
	if strings.TrimSpace(v) == "" {
		return "", c.Errorf(name, "empty")
	}
	return v, nil
}

// Float returns a finite float attribute, or def when it is absent.
func (c *Command) Float(name string, def float64) (float64, error) {
	v, ok := c.Attr(name)
	if !ok {
		return def, nil
	}
	x, err := parseFinite(v)
	if err != nil {
		return 0, c.Errorf(name, "%v", err)
	}
	return x, nil
}

// FloatIn is Float with an inclusive range check.
func (c *Command) FloatIn(name string, def, min, max float64) (float64, error) {
	x, err := c.Float(name, def)
	if err != nil {
		return 0, err
	}
	if x < min || x > max {
		return 0, c.Errorf(name, "%g is out of range [%g, %g]", x, min, max)
	}
	return x, nil
}

// Int returns an integer attribute in [min, max], or def when it is absent.
func (c *Command) Int(name string, def, min, max int) (int, error) {
	v, ok := c.Attr(name)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, c.Errorf(name, "%q is not an integer", v)
	}
	if n < min || n > max {
		return 0, c.Errorf(name, "%d is out of range [%d, %d]", n, min, max)
	}
	return n, nil
}

// Bool returns a boolean attribute ("true"/"false"/"1"/"0"), or def when absent.
func (c *Command) Bool(name string, def bool) (bool, error) {
	v, ok := c.Attr(name)
	if !ok {
		return def, nil
	}
	switch strings.TrimSpace(v) {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, c.Errorf(name, "%q is not a boolean (true/false)", v)
}

// Pose returns a pose attribute ("x y z roll pitch yaw"), identity when absent.
func (c *Command) Pose(name string) (Pose, error) {
	v, ok := c.Attr(name)
	if !ok {
		return Pose{}, nil
	}
	p, err := ParsePose(v)
	if err != nil {
		return Pose{}, c.Errorf(name, "%v", err)
	}
	return p, nil
}

// Path returns a file attribute resolved against the command's directory.
func (c *Command) Path(name string) (string, error) {
	v, err := c.Required(name)
	if err != nil {
		return "", err
	}
	if c.Confined {
		return c.confinedPath(name, v)
	}
	if !filepath.IsAbs(v) && c.Dir != "" {
		v = filepath.Join(c.Dir, v)
	}
	return v, nil
}

// root returns the absolute directory a confined command is confined to
// ("" for commands that are not confined).
func (c *Command) root() string {
	if !c.Confined {
		return ""
	}
	r := c.Root
	if r == "" {
		r = c.Dir
	}
	if abs, err := filepath.Abs(r); err == nil {
		r = abs
	}
	return r
}

func (c *Command) confinedPath(name, v string) (string, error) {
	if filepath.IsAbs(v) {
		return "", c.Errorf(name, "absolute path %q refused: requests may only name files inside the scene's directory", v)
	}
	root := c.root()
	full, err := filepath.Abs(filepath.Join(c.Dir, v))
	if err != nil {
		return "", c.Errorf(name, "%v", err)
	}
	if rel, err := filepath.Rel(root, full); err != nil || !filepath.IsLocal(rel) {
		return "", c.Errorf(name, "path %q refused: it leaves the scene's directory", v)
	}
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		return full, nil // a missing file is reported by whoever opens it
	}
	base, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", c.Errorf(name, "%v", err)
	}
	if rel, err := filepath.Rel(base, real); err != nil || !filepath.IsLocal(rel) {
		return "", c.Errorf(name, "path %q refused: a symbolic link leads out of the scene's directory", v)
	}
	return full, nil
}

var namePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// ValidName reports whether s may name a part, element, sensor or parameter:
// letters, digits, '_' and '-', not starting with a digit or '-'.
func ValidName(s string) bool { return namePattern.MatchString(s) }

// checkName validates a name attribute: names appear in NAME.PARAM syntax and
// in PART/NAME paths, so dots, slashes and spaces are reserved.
func (c *Command) checkName(attr, v string) error {
	if !namePattern.MatchString(v) {
		return c.Errorf(attr, "%q is not a valid name (letters, digits, '_' and '-', not starting with a digit or '-')", v)
	}
	return nil
}

// unused returns an error for the first attribute nobody read.
func (c *Command) unused() error {
	for _, a := range c.Elem.Attr {
		key := a.Key
		if a.Space != "" {
			key = a.Space + ":" + a.Key
		}
		if !c.used[key] {
			return c.Errorf(key, "unknown attribute for %s", c.typeDesc())
		}
	}
	return nil
}

func (c *Command) typeDesc() string {
	if t := c.Elem.SelectAttrValue("type", ""); t != "" && c.Kind() != "part" {
		return fmt.Sprintf("%s type %q", c.Kind(), t)
	}
	return c.Kind()
}

// Floats returns an attribute holding exactly n finite numbers separated by
// spaces or commas ("0 0 1"), or def when it is absent.
func (c *Command) Floats(name string, n int, def []float64) ([]float64, error) {
	v, ok := c.Attr(name)
	if !ok {
		return def, nil
	}
	fields := splitNumbers(v)
	if len(fields) != n {
		return nil, c.Errorf(name, "want %d numbers, got %d in %q", n, len(fields), v)
	}
	out := make([]float64, n)
	for i, f := range fields {
		x, err := parseFinite(f)
		if err != nil {
			return nil, c.Errorf(name, "value %d: %v", i+1, err)
		}
		out[i] = x
	}
	return out, nil
}

// FloatList returns an attribute holding any number of finite numbers
// separated by spaces or commas, and whether it is present.
func (c *Command) FloatList(name string) ([]float64, bool, error) {
	v, ok := c.Attr(name)
	if !ok {
		return nil, false, nil
	}
	out, err := c.Floats(name, len(splitNumbers(v)), nil)
	return out, true, err
}

// RGB returns an "r g b" color attribute with components in 0..1, or def
// when it is absent.
func (c *Command) RGB(name string, def [3]float64) ([3]float32, error) {
	v, err := c.Floats(name, 3, def[:])
	if err != nil {
		return [3]float32{}, err
	}
	var col [3]float32
	for i, x := range v {
		if x < 0 || x > 1 {
			return col, c.Errorf(name, "component %d = %g is outside 0..1", i+1, x)
		}
		col[i] = float32(x)
	}
	return col, nil
}

// Rand reads a seed attribute (default 1) and returns it with a generator
// seeded by it; stream keeps the generators of different uses apart.
// The same seed gives the same sequence on every run.
func (c *Command) Rand(name string, stream uint64) (int64, *rand.Rand, error) {
	seed, err := c.Int(name, 1, math.MinInt64, math.MaxInt64)
	if err != nil {
		return 0, nil, err
	}
	return int64(seed), rand.New(rand.NewPCG(uint64(seed), stream)), nil
}
