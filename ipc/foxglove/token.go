package foxglove

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"

	"github.com/simvis/simvis/internal/privfile"
)

// A host's driver token for local tools: a file next to the host's region
// and NATS credentials (/dev/shm/simvis-NAME.foxglove), created by the
// host's user with mode 0600, never through a link or into a file another
// user made, removed when the server stops.

// TokenFile is what the file holds.
type TokenFile struct {
	URL    string `json:"url"`    // the server's ws:// or wss:// address
	Driver string `json:"driver"` // the driver token
}

// NewToken returns a random token (24 bytes, hex).
func NewToken() (string, error) {
	b := make([]byte, 24)
	if _, err := io.ReadFull(rand.Reader, b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// WriteTokenFile creates path (0600, exclusively; a file of this user left
// by a killed host is replaced) and returns a function that removes it if
// it is still the one written.
func WriteTokenFile(path string, tf TokenFile) (func(), error) {
	data, err := json.Marshal(tf)
	if err != nil {
		return nil, err
	}
	st, err := privfile.Write(path, data, "remove it, or pick another scene name (--shm)")
	if err != nil {
		return nil, fmt.Errorf("foxglove: %w", err)
	}
	return func() { privfile.RemoveIfSame(path, st) }, nil
}

// ReadTokenFile reads a token file, only a regular file of this user that
// no one else may read.
func ReadTokenFile(path string) (TokenFile, error) {
	var tf TokenFile
	if err := privfile.ReadJSON(path, &tf); err != nil {
		return tf, fmt.Errorf("foxglove: %w", err)
	}
	return tf, nil
}

// TokenDir is where hosts keep their token files (beside their regions).
var TokenDir = "/dev/shm"

// DriverURL returns the address of the server at serverURL with the
// driver token of this user's host that serves it (a token file in
// TokenDir naming that address): how this user's tools drive a local
// host. Another user's files are never read.
func DriverURL(serverURL string) (string, error) {
	files, _ := filepath.Glob(filepath.Join(TokenDir, "simvis-*.foxglove"))
	for _, f := range files {
		tf, err := ReadTokenFile(f)
		if err != nil || tf.URL != serverURL || tf.Driver == "" {
			continue
		}
		u, err := url.Parse(serverURL)
		if err != nil {
			return "", err
		}
		q := u.Query()
		q.Set("token", tf.Driver)
		u.RawQuery = q.Encode()
		if u.Path == "" {
			u.Path = "/"
		}
		return u.String(), nil
	}
	return "", fmt.Errorf("foxglove: no driver token of this user for %s in %s/simvis-*.foxglove", serverURL, TokenDir)
}
