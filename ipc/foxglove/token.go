package foxglove

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
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
	for try := 0; ; try++ {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if err == nil {
			_, werr := f.Write(data)
			st, serr := f.Stat()
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr == nil {
				werr = serr
			}
			if werr != nil {
				os.Remove(path)
				return nil, fmt.Errorf("foxglove: writing %s: %w", path, werr)
			}
			return func() {
				if now, err := os.Lstat(path); err == nil && os.SameFile(now, st) {
					os.Remove(path)
				}
			}, nil
		}
		if !errors.Is(err, os.ErrExist) || try > 0 {
			return nil, fmt.Errorf("foxglove: %w", err)
		}
		if !ownFile(path, false) {
			return nil, fmt.Errorf("foxglove: %s exists and is not a file of this user: remove it, or pick another scene name (--shm)", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("foxglove: %w", err)
		}
	}
}

// ownFile reports whether path is a regular file of this user (and, with
// private, readable by no one else).
func ownFile(path string, private bool) bool {
	st, err := os.Lstat(path)
	if err != nil {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && st.Mode().IsRegular() && int(sys.Uid) == os.Getuid() && (!private || st.Mode().Perm()&0o077 == 0)
}

// ReadTokenFile reads a token file, only a regular file of this user that
// no one else may read.
func ReadTokenFile(path string) (TokenFile, error) {
	var tf TokenFile
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return tf, fmt.Errorf("foxglove: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return tf, fmt.Errorf("foxglove: %w", err)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); !ok || !st.Mode().IsRegular() || int(sys.Uid) != os.Getuid() || st.Mode().Perm()&0o077 != 0 {
		return tf, fmt.Errorf("foxglove: %s is not a private file of this user", path)
	}
	if err := json.NewDecoder(io.LimitReader(f, 64<<10)).Decode(&tf); err != nil {
		return tf, fmt.Errorf("foxglove: %s: %w", path, err)
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
