package models

import (
	"slices"
	"testing"
)

func TestExternalURIsAndFileURI(t *testing.T) {
	doc := `{"asset":{"version":"2.0"},"buffers":[{"uri":"a%20b.bin"},{"byteLength":4}],"images":[{"uri":"data:image/png;base64,AA=="},{"uri":"tex/c.png"}]}`
	uris := ExternalURIs([]byte(doc))
	if !slices.Equal(uris, []string{"a%20b.bin", "", "data:image/png;base64,AA==", "tex/c.png"}) {
		t.Fatalf("uris %q", uris)
	}
	if ExternalURIs([]byte("glTF\x02")) != nil {
		t.Error("a binary text has uris")
	}
	for _, tc := range []struct {
		uri, path string
		ok        bool
		err       string
	}{
		{"a%20b.bin", "a b.bin", true, ""},
		{"tex/c.png", "tex/c.png", true, ""},
		{"", "", false, ""},
		{"data:,x", "", false, ""},
		{"%2Fetc%2Fpasswd", "", false, `uri "%2Fetc%2Fpasswd": absolute paths are not allowed`},
		{"/etc/passwd", "", false, `uri "/etc/passwd": absolute paths are not allowed`},
		{"%zz", "", false, `uri "%zz": invalid URL escape "%zz"`},
	} {
		p, ok, err := FileURI(tc.uri)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if p != tc.path || ok != tc.ok || msg != tc.err {
			t.Errorf("FileURI(%q) = %q %v %q, want %q %v %q", tc.uri, p, ok, msg, tc.path, tc.ok, tc.err)
		}
	}
}
