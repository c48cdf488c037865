package ipc

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// MaxUp is how many directory levels above a record's directory the files
// of the host's own commands (the scene file's and those embedded in its
// models) may lie and still be listed in the change log, served and
// fetched: scenes/arm naming ../quickstart/world.gltf needs one. A bound,
// so that a mirror's copy (and what a host serves) stays within a known
// ancestor of the scene rather than the whole file system; four levels
// reach any sibling of a scenes/, models/, robots/ tree of a project.
// Requests stay confined to the directory itself.
const MaxUp = 4

// Bounds of a listed path, as the file systems simvis runs on bound names.
const (
	maxListedPath = 4096 // bytes of a whole path
	maxPathName   = 255  // bytes of one of its names
)

// splitListed checks a path a file list holds (slash-separated, relative
// to the record's directory) and returns how many levels above that
// directory it climbs first and the rest, cleaned: "../quickstart/w.gltf"
// is 1 and "quickstart/w.gltf". The rest never climbs again: a listed path
// leaves the directory only through its leading "..", at most MaxUp of
// them. Errors name the path.
func splitListed(p string) (up int, rest string, err error) {
	bad := func(why string, args ...any) (int, string, error) {
		return 0, "", fmt.Errorf("path %s %s", quotePath(p), fmt.Sprintf(why, args...))
	}
	switch {
	case p == "":
		return bad("is empty")
	case len(p) > maxListedPath:
		return bad("is %d bytes long, at most %d", len(p), maxListedPath)
	case strings.IndexByte(p, 0) >= 0:
		return bad("holds a NUL byte")
	case strings.HasPrefix(p, "/") || filepath.IsAbs(filepath.FromSlash(p)):
		return bad("is absolute")
	}
	c := path.Clean(p)
	for c == ".." || strings.HasPrefix(c, "../") {
		up++
		c = strings.TrimPrefix(strings.TrimPrefix(c, ".."), "/")
	}
	switch {
	case c == "" || c == ".":
		return bad("names a directory, not a file")
	case up > MaxUp:
		return bad("climbs %d levels above the record's directory, at most %d", up, MaxUp)
	case !filepath.IsLocal(filepath.FromSlash(c)):
		return bad("is not relative")
	}
	for _, name := range strings.Split(c, "/") {
		if len(name) > maxPathName {
			return bad("has a name of %d bytes, at most %d", len(name), maxPathName)
		}
	}
	return up, c, nil
}

// quotePath quotes a path for an error, clipped: a path of 10 MB must not
// become an error of 10 MB.
func quotePath(p string) string {
	if len(p) > 200 {
		return fmt.Sprintf("%q... (%d bytes)", p[:200], len(p))
	}
	return fmt.Sprintf("%q", p)
}

// listedUp returns the most levels any of files climbs above the record's
// directory, having checked every path (a record may come from a hostile
// host or a page's server, not only from DecodeFiles).
func listedUp(files []FileHash) (int, error) {
	most := 0
	for _, f := range files {
		up, _, err := splitListed(f.Path)
		if err != nil {
			return 0, err
		}
		most = max(most, up)
	}
	return most, nil
}

// hostDirTail splits a host's record directory (absolute, slash-separated,
// as the host wrote it) into the ancestor up levels above it and the names
// of the up directories below that ancestor, down to the directory: the
// names a mirror's copy lays out so that "../" paths resolve inside it as
// on the host. Each name is checked, since a hostile host chooses them.
func hostDirTail(dir string, up int) (ancestor string, names []string, err error) {
	if up == 0 {
		return dir, nil, nil
	}
	if !path.IsAbs(dir) || path.Clean(dir) != dir || len(dir) > maxListedPath {
		return "", nil, fmt.Errorf("record directory %s is not a clean absolute path, so files above it cannot be laid out", quotePath(dir))
	}
	all := strings.Split(strings.TrimPrefix(dir, "/"), "/")
	if dir == "/" || len(all) < up {
		return "", nil, fmt.Errorf("record directory %s has fewer than %d levels above it", quotePath(dir), up)
	}
	names = all[len(all)-up:]
	for _, n := range names {
		if err := checkName(n); err != nil {
			return "", nil, fmt.Errorf("record directory %s: %v", quotePath(dir), err)
		}
	}
	return "/" + strings.Join(all[:len(all)-up], "/"), names, nil
}

// checkName checks one directory name a mirror creates.
func checkName(n string) error {
	switch {
	case n == "" || n == "." || n == "..":
		return fmt.Errorf("name %q is no directory name", n)
	case len(n) > maxPathName:
		return fmt.Errorf("name %s is %d bytes long, at most %d", quotePath(n), len(n), maxPathName)
	case strings.ContainsAny(n, "/\\\x00"):
		return fmt.Errorf("name %s holds a separator or a NUL byte", quotePath(n))
	}
	return nil
}

// within reports whether p lies inside root (both cleaned by filepath):
// the last check before a mirror writes or reads a copy.
func within(root, p string) bool {
	r, err := filepath.Rel(root, p)
	return err == nil && filepath.IsLocal(r)
}

// dirLevels is how many names an absolute directory has: how far up from
// it "../" can go.
func dirLevels(dir string) int {
	n := 0
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if filepath.Dir(d) == d {
			return n
		}
		n++
	}
}
