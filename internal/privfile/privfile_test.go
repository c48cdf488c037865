package privfile

import (
	"os"
	"path/filepath"
	"testing"
)

// A private file round-trips; a leftover of this user is replaced; a
// file others may read, or a link, is not read.
func TestWriteAndRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "secret")
	os.WriteFile(path, []byte("left by a killed host"), 0o644)
	st, err := Write(path, []byte(`{"token":"t"}`), "pick another name")
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	var v struct{ Token string }
	if err := ReadJSON(path, &v); err != nil || v.Token != "t" {
		t.Fatalf("read back %+v: %v", v, err)
	}
	os.Chmod(path, 0o644)
	if err := ReadJSON(path, &v); err == nil || err.Error() != path+" is not a private file of this user" {
		t.Errorf("a file others may read: %v", err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(path, link)
	if err := ReadJSON(link, &v); err == nil {
		t.Error("read through a symbolic link")
	}
	RemoveIfSame(path, st)
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("RemoveIfSame left the file it wrote: %v", err)
	}
}
