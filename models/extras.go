package models

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

var insertionPointName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// simvisExtras is the "simvis" member of a glTF extras object.
type simvisExtras struct {
	InsertionPoint *string         `json:"insertion_point"`
	Commands       json.RawMessage `json:"commands"`
}

// parseSimvis returns the "simvis" member of extras, or nil if there is none.
// Extras that are not a JSON object belong to someone else and are ignored;
// a "simvis" member that is not well formed is an error.
func parseSimvis(extras any) (*simvisExtras, error) {
	if extras == nil {
		return nil, nil
	}
	// Extras may hold any Go value (decoded JSON or built in memory), so go
	// through JSON to get one representation.
	raw, err := json.Marshal(extras)
	if err != nil {
		return nil, fmt.Errorf("extras: %v", err)
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return nil, nil
	}
	s, ok := top["simvis"]
	if !ok || string(s) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(s))
	dec.DisallowUnknownFields() // catch misspelt keys rather than dropping them silently
	var se simvisExtras
	if err := dec.Decode(&se); err != nil {
		return nil, fmt.Errorf("extras.simvis: %v", err)
	}
	return &se, nil
}

// insertionPoint returns the insertion point named in a node's extras.
func insertionPoint(extras any) (string, error) {
	se, err := parseSimvis(extras)
	if err != nil || se == nil {
		return "", err
	}
	if se.Commands != nil {
		return "", errors.New("extras.simvis.commands belong in the scene's or asset's extras, not a node's")
	}
	if se.InsertionPoint == nil {
		return "", nil
	}
	if !insertionPointName.MatchString(*se.InsertionPoint) {
		return "", fmt.Errorf("extras.simvis.insertion_point %q is not a valid name (want %s)", *se.InsertionPoint, insertionPointName)
	}
	return *se.InsertionPoint, nil
}

// commands returns the commands in scene or asset extras; where names the
// owner in Sources and errors ("robot.glb: scene 0").
func commands(extras any, where string) ([]Command, bool, error) {
	se, err := parseSimvis(extras)
	if err != nil || se == nil {
		return nil, false, err
	}
	if se.InsertionPoint != nil {
		return nil, false, errors.New("extras.simvis.insertion_point belongs in a node's extras")
	}
	raw := bytes.TrimSpace(se.Commands)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false, nil
	}
	var out []Command
	switch raw[0] {
	case '"':
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, false, fmt.Errorf("extras.simvis.commands: %v", err)
		}
		elems, err := splitElements(text)
		if err != nil {
			return nil, false, fmt.Errorf("extras.simvis.commands: %v", err)
		}
		for _, e := range elems {
			out = append(out, Command{XML: e.text, Source: fmt.Sprintf("%s extras.simvis.commands line %d", where, e.line)})
		}
	case '[':
		var list []string
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, false, errors.New("extras.simvis.commands must be a string or a list of strings")
		}
		for i, s := range list {
			x, err := singleElement(s)
			if err != nil {
				return nil, false, fmt.Errorf("extras.simvis.commands[%d]: %v", i, err)
			}
			out = append(out, Command{XML: x, Source: fmt.Sprintf("%s extras.simvis.commands[%d]", where, i)})
		}
	default:
		return nil, false, errors.New("extras.simvis.commands must be a string or a list of strings")
	}
	return out, true, nil
}

// singleElement checks that s is exactly one XML element and returns it
// without surrounding space.
func singleElement(s string) (string, error) {
	elems, err := splitElements(s)
	if err != nil {
		return "", err
	}
	if len(elems) != 1 {
		return "", fmt.Errorf("want one XML command element, have %d", len(elems))
	}
	return elems[0].text, nil
}

type xmlElement struct {
	text string // exact source text of the element
	line int    // 1-based line it starts on
}

// splitElements splits XML text into its top-level elements, keeping each
// element's text exactly as written. Comments and processing instructions
// between elements are skipped; other text is an error.
func splitElements(text string) ([]xmlElement, error) {
	dec := xml.NewDecoder(strings.NewReader(text))
	var (
		out   []xmlElement
		depth int
		start int64
	)
	for {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				start = off
			}
			depth++
		case xml.EndElement:
			depth--
			if depth == 0 {
				end := dec.InputOffset()
				out = append(out, xmlElement{text: text[start:end], line: 1 + strings.Count(text[:start], "\n")})
			}
		case xml.CharData:
			if depth == 0 && len(bytes.TrimSpace(t)) > 0 {
				lead := int64(len(t) - len(bytes.TrimLeft(t, " \t\r\n")))
				line := 1 + strings.Count(text[:off+lead], "\n")
				return nil, fmt.Errorf("line %d: text %q outside a command element", line, bytes.TrimSpace(t))
			}
		}
	}
	if depth != 0 {
		return nil, errors.New("unexpected end of XML")
	}
	return out, nil
}

// simvisNodeExtras and simvisSceneExtras build the extras Write stores.
func simvisNodeExtras(ip string) any {
	return map[string]any{"simvis": map[string]any{"insertion_point": ip}}
}

func simvisSceneExtras(cmds []string) any {
	return map[string]any{"simvis": map[string]any{"commands": cmds}}
}
