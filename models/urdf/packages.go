package urdf

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// resolve turns a mesh URI into a path.
func (rd *reader) resolve(uri string) (string, error) {
	switch {
	case strings.HasPrefix(uri, "package://"):
		rest := strings.TrimPrefix(uri, "package://")
		pkg, rel, ok := strings.Cut(rest, "/")
		if !ok || pkg == "" || rel == "" {
			return "", fmt.Errorf("want package://PACKAGE/PATH")
		}
		rel, err := url.PathUnescape(rel)
		if err != nil {
			return "", err
		}
		dir, err := rd.findPackage(pkg)
		if err != nil {
			return "", err
		}
		if !filepath.IsLocal(filepath.FromSlash(rel)) {
			return "", fmt.Errorf("the path leads out of package %q", pkg)
		}
		return filepath.Join(dir, filepath.FromSlash(rel)), nil
	case strings.HasPrefix(uri, "file://"):
		u, err := url.Parse(uri)
		if err != nil {
			return "", err
		}
		if u.Host != "" && u.Host != "localhost" {
			return "", fmt.Errorf("file URI with host %q (want file:///ABSOLUTE/PATH)", u.Host)
		}
		if !filepath.IsAbs(u.Path) {
			return "", fmt.Errorf("want file:///ABSOLUTE/PATH")
		}
		return filepath.Clean(u.Path), nil
	}
	if i := strings.Index(uri, "://"); i > 0 && !strings.ContainsAny(uri[:i], "/\\") {
		return "", fmt.Errorf("unsupported URI scheme %q (want a path, file:// or package://)", uri[:i])
	}
	if filepath.IsAbs(uri) {
		return filepath.Clean(uri), nil
	}
	return filepath.Join(rd.dir, filepath.FromSlash(uri)), nil
}

// findPackage finds package pkg: the URDF's own enclosing package first,
// then the search path.
func (rd *reader) findPackage(pkg string) (string, error) {
	root := rd.r.Options().Root
	if root != "" {
		if abs, err := filepath.Abs(root); err == nil {
			root = abs
		}
	}
	for dir := rd.dir; ; dir = filepath.Dir(dir) {
		if root != "" {
			if rel, err := filepath.Rel(root, dir); err != nil || !filepath.IsLocal(rel) && rel != "." {
				break
			}
		}
		if isFile(filepath.Join(dir, "package.xml")) {
			// Read through the load, so that it counts and Model.Files
			// lists it: a mirror or a recording needs it to find the
			// same package.
			data, err := rd.r.ReadFile(filepath.Join(dir, "package.xml"))
			if err != nil {
				return "", fmt.Errorf("package.xml of %s: %w", dir, err)
			}
			if filepath.Base(dir) == pkg || packageName(data) == pkg {
				return dir, nil
			}
			break // the nearest package.xml is the enclosing package
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	path := rd.r.Options().PackagePath
	for _, entry := range path {
		if entry == "" {
			continue
		}
		if filepath.Base(filepath.Clean(entry)) == pkg && isFile(filepath.Join(entry, "package.xml")) {
			return filepath.Abs(entry)
		}
		if st, err := os.Stat(filepath.Join(entry, pkg)); err == nil && st.IsDir() {
			return filepath.Abs(filepath.Join(entry, pkg))
		}
	}
	where := "the package path is empty (set ROS_PACKAGE_PATH or give --package-path DIR)"
	if len(path) > 0 {
		where = "not in the package path " + clip(strings.Join(path, string(filepath.ListSeparator)))
	}
	return "", fmt.Errorf("unknown package %q: not the URDF's own package and %s", pkg, where)
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

var nameTag = regexp.MustCompile(`<name>\s*([^<\s]+)\s*</name>`)

// packageName is the <name> of a package.xml (found in its first 64 KiB).
func packageName(data []byte) string {
	if m := nameTag.FindSubmatch(data[:min(len(data), 64<<10)]); m != nil {
		return string(m[1])
	}
	return ""
}
