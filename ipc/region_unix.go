//go:build !js

package ipc

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// createExclusive creates a new file beside path with an unpredictable
// name: O_EXCL and O_NOFOLLOW, so nothing another user planted in a shared
// directory (a file, a symbolic link) is opened or written through.
func createExclusive(path string) (*os.File, string, error) {
	for try := 0; ; try++ {
		var rnd [8]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return nil, "", err
		}
		tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".new-"+hex.EncodeToString(rnd[:]))
		fd, err := syscall.Open(tmp, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
		if err == nil {
			return os.NewFile(uintptr(fd), tmp), tmp, nil
		}
		if !errors.Is(err, syscall.EEXIST) || try == 10 {
			return nil, "", &os.PathError{Op: "create", Path: tmp, Err: err}
		}
	}
}

// openOwned opens an existing region file for reading and writing: never
// through a symbolic link, only a regular file, and only one owned by this
// user (another user may plant files in /dev/shm).
func openOwned(path string) (*os.File, os.FileInfo, error) {
	fd, err := syscall.Open(path, syscall.O_RDWR|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, nil, fmt.Errorf("ipc: %s is a symbolic link, not a region file (refused)", path)
		}
		return nil, nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("ipc: %w", err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("ipc: %s is not a regular file (%v)", path, st.Mode().Type())
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		f.Close()
		return nil, nil, fmt.Errorf("ipc: %s belongs to user %d, not to this user (%d): refused", path, sys.Uid, os.Getuid())
	}
	return f, st, nil
}

// mapShared maps size bytes of f for reading and writing, shared with
// every process that maps the same file.
func mapShared(f *os.File, size int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
}

// unmap releases a mapping mapShared made.
func unmap(mem []byte) error { return syscall.Munmap(mem) }
