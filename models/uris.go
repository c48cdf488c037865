package models

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// ExternalURIs returns the uris of a .gltf document's buffers and images,
// as written (empty and data: uris included; see FileURI); nil for a text
// that is not a glTF JSON document. The host, its mirrors and recordings
// list a model's files with it, as Load resolves them.
func ExternalURIs(gltfJSON []byte) []string {
	var doc struct {
		Buffers []struct{ URI string } `json:"buffers"`
		Images  []struct{ URI string } `json:"images"`
	}
	if json.Unmarshal(gltfJSON, &doc) != nil {
		return nil
	}
	var uris []string
	for _, b := range doc.Buffers {
		uris = append(uris, b.URI)
	}
	for _, im := range doc.Images {
		uris = append(uris, im.URI)
	}
	return uris
}

// FileURI turns a buffer's or image's uri into the slash-separated path of
// a file relative to the model's directory: ok is false for an embedded
// one (no uri, or a data: uri); an escape that does not decode or an
// absolute path is an error (joined to a directory it would look local;
// Load refuses it).
func FileURI(u string) (path string, ok bool, err error) {
	if u == "" || strings.HasPrefix(u, "data:") {
		return "", false, nil
	}
	p, err := url.PathUnescape(u)
	if err != nil {
		return "", false, fmt.Errorf("uri %q: %w", u, err)
	}
	if strings.HasPrefix(p, "/") || filepath.IsAbs(filepath.FromSlash(p)) {
		return "", false, fmt.Errorf("uri %q: absolute paths are not allowed", u)
	}
	return p, true, nil
}
