// Package privfile writes and reads the small files a host keeps for its
// own user's tools (NATS credentials, the Foxglove driver token): mode
// 0600, never through a symbolic link, never into or from a file another
// user made. Both transports keep their secrets the same way through it.
package privfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// MaxBytes bounds what ReadJSON reads.
const MaxBytes = 64 << 10

// Write creates path holding data, exclusively, mode 0600, and returns
// the file's identity (to remove it later only if it is still the one
// written). A regular file of this user left at path (by a host that was
// killed) is replaced; anything else there is refused, the error ending
// with hint (what the user may do instead).
func Write(path string, data []byte, hint string) (os.FileInfo, error) {
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
				return nil, fmt.Errorf("writing %s: %w", path, werr)
			}
			return st, nil
		}
		if !errors.Is(err, os.ErrExist) || try > 0 {
			return nil, err
		}
		st, lerr := os.Lstat(path)
		if lerr != nil {
			continue // gone meanwhile: create it
		}
		if !ownRegular(st) {
			return nil, fmt.Errorf("%s exists and is not a file of this user: %s", path, hint)
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
}

// RemoveIfSame removes path if it is still the file st describes.
func RemoveIfSame(path string, st os.FileInfo) {
	if now, err := os.Lstat(path); err == nil && os.SameFile(now, st) {
		os.Remove(path)
	}
}

// ReadJSON decodes the JSON in path into v: only a regular file of this
// user that no one else may read, opened without following a link or
// blocking (a FIFO), at most MaxBytes of it.
func ReadJSON(path string, v any) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !ownRegular(st) || st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is not a private file of this user", path)
	}
	if err := json.NewDecoder(io.LimitReader(f, MaxBytes)).Decode(v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ownRegular reports whether st is a regular file of this process's user.
func ownRegular(st os.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && st.Mode().IsRegular() && int(sys.Uid) == os.Getuid()
}
