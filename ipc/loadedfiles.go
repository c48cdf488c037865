package ipc

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/simvis/simvis/models"
)

// FileHash is a file a logged command loaded, with its SHA-256 as the host
// read it when it logged the command (LAYOUT.md, "Change log").
type FileHash struct {
	Path   string `json:"path"`   // relative to the record's Dir, slash-separated
	SHA256 string `json:"sha256"` // lower-case hex
}

// Bounds of a record's file list: what one command may load.
const (
	maxLoadedFiles = 4096
	maxModelDepth  = 16
)

// loadedFiles lists the files a command loads: the model its file
// attribute names, that model's external buffers and images, and the
// models that commands embedded in it name, recursively, each hashed as it
// is on disk now; for a model of another format (a URDF, an OBJ, a Collada
// file) every file its load reads (models.Model.Files: a URDF's meshes,
// their materials, the package.xml that makes its own package). Paths
// are relative to dir; files of the host's own commands up to MaxUp
// levels above it are listed too, as "../" paths (scenes/arm names
// ../quickstart/world.gltf), while a confined command's (a request's)
// must lie inside dir, as its execution requires. Files further out are
// left out: a mirror cannot be served them (a package found through the
// search path far from the scene resolves on the mirror through its own).
// A file that cannot be read is left out too: the command's own execution
// reports it. A confined command's models are loaded confined to dir, as
// its execution loads them.
func loadedFiles(dir, command string, lo loadOpts, memo *fileMemo) []FileHash {
	w := &fileWalker{dir: dir, seen: map[string]bool{}, memo: memo, lo: lo}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		w.realDir = real
	}
	if !lo.confined && filepath.IsAbs(dir) {
		w.up = min(MaxUp, dirLevels(dir))
	}
	for _, f := range fileAttrs(command) {
		w.model(filepath.ToSlash(f), 0)
	}
	return w.out
}

// loadOpts are how a command's models load: confined to the command's
// directory or not, within the host's per-model limits.
type loadOpts struct {
	confined bool
	limits   models.Limits
	// packages is the package search path (HostOptions.PackagePath),
	// joined by NULs so that loadOpts compares with ==; pathSet tells an
	// empty path (no packages) from none given (the default).
	packages string
	pathSet  bool
}

// packagePath is the search path loadOpts holds.
func (lo loadOpts) packagePath() []string {
	switch {
	case !lo.pathSet:
		return nil
	case lo.packages == "":
		return []string{}
	}
	return strings.Split(lo.packages, "\x00")
}

type fileWalker struct {
	dir     string
	realDir string // dir, symbolic links resolved
	up      int    // levels above dir a listed file may lie
	seen    map[string]bool
	out     []FileHash
	memo    *fileMemo
	lo      loadOpts
}

// add hashes one file (rel cleaned, see model); it reports whether the
// file is in the list.
func (w *fileWalker) add(rel string) bool {
	if w.seen[rel] {
		return false
	}
	w.seen[rel] = true
	if up, _, err := splitListed(rel); err != nil || up > w.up || len(w.out) >= maxLoadedFiles {
		return false
	}
	e, ok := w.memo.get(filepath.Join(w.dir, filepath.FromSlash(rel)), false)
	if !ok {
		return false
	}
	w.out = append(w.out, FileHash{Path: rel, SHA256: e.sum})
	return true
}

func (w *fileWalker) model(rel string, depth int) {
	// One spelling per file ("sub/../x" is "x", "../arm/x" from scenes/arm
	// stays as the host resolved it): the list and the served paths agree.
	rel = path.Clean(rel)
	if depth > maxModelDepth || !w.add(rel) {
		return
	}
	full := filepath.Join(w.dir, filepath.FromSlash(rel))
	if !isGLTF(rel) {
		w.otherFormat(full)
		return
	}
	e, ok := w.memo.get(full, true)
	if !ok {
		return
	}
	base := pathDir(rel)
	for _, u := range e.uris {
		if p, ok := localURI(u); ok {
			w.add(path.Clean(joinRel(base, p)))
		}
	}
	for _, c := range e.cmds {
		for _, f := range fileAttrs(c) {
			w.model(joinRel(base, filepath.ToSlash(f)), depth+1)
		}
	}
}

func isGLTF(rel string) bool {
	ext := strings.ToLower(path.Ext(rel))
	return ext == ".gltf" || ext == ".glb"
}

// otherFormat adds the files a model of a format other than glTF reads
// (its load's Model.Files) that lie inside the directory. The list is
// remembered with the model file's identity, for the same load options.
func (w *fileWalker) otherFormat(full string) {
	e, ok := w.memo.get(full, false)
	if !ok {
		return
	}
	if !e.loaded || e.loadedWith != w.lo {
		root := ""
		if w.lo.confined {
			root = w.dir
		}
		m, err := models.LoadWith(full, models.LoadOptions{Root: root, Limits: w.lo.limits, PackagePath: w.lo.packagePath()})
		if err != nil {
			return // the command's own execution reports it
		}
		e.files, e.loaded, e.loadedWith = m.Files(), true, w.lo
		w.memo.put(full, e)
	}
	for _, abs := range e.files {
		r, err := filepath.Rel(w.realDir, abs)
		if err != nil || w.realDir == "" {
			continue
		}
		if !filepath.IsLocal(r) {
			// Above the directory: listed only where the path a mirror is
			// served (dir's ancestor, lexically, as the host serves it)
			// leads to this very file, whatever links dir's path holds.
			if real, err := filepath.EvalSymlinks(filepath.Join(w.dir, r)); err != nil || real != abs {
				continue
			}
		}
		w.add(path.Clean(filepath.ToSlash(r)))
	}
}

// fileMemo remembers the SHA-256 (and for models, the references) of
// files by path, device, inode, size and modification time, so that a
// scene placing one model a thousand times reads and hashes it once. A
// file rewritten within the file system's timestamp granularity at the
// same size would be missed; a rewrite in place by another process is
// what the hash guards against, not what it can catch at every instant.
type fileMemo struct {
	m map[string]memoEntry
}

type memoEntry struct {
	dev, ino uint64
	size     int64
	mtime    time.Time
	sum      string
	parsed   bool     // uris and cmds hold the model's references
	uris     []string // buffers' and images' uris
	cmds     []string // embedded commands
	// For models of other formats: the files their load read (absolute,
	// links resolved), loaded with loadedWith.
	loaded     bool
	loadedWith loadOpts
	files      []string
}

// get returns the entry of the regular file at path, hashed, and with its
// glTF references when refs is set; false if it cannot be read.
func (fm *fileMemo) get(path string, refs bool) (memoEntry, bool) {
	f, _, err := models.OpenRegular(path, -1)
	if err != nil {
		return memoEntry{}, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return memoEntry{}, false
	}
	var dev, ino uint64
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		dev, ino = uint64(sys.Dev), sys.Ino
	}
	e, ok := fm.m[path]
	if !ok || e.dev != dev || e.ino != ino || e.size != st.Size() || !e.mtime.Equal(st.ModTime()) {
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return memoEntry{}, false
		}
		e = memoEntry{dev: dev, ino: ino, size: st.Size(), mtime: st.ModTime(), sum: hex.EncodeToString(h.Sum(nil))}
	}
	if refs && !e.parsed && st.Size() <= models.DefaultLimits.FileBytes {
		if _, err := f.Seek(0, io.SeekStart); err == nil {
			if data, err := io.ReadAll(io.LimitReader(f, st.Size())); err == nil {
				e.uris, e.cmds = gltfRefs(data)
				e.parsed = true
			}
		}
	}
	fm.put(path, e)
	return e, true
}

func (fm *fileMemo) put(path string, e memoEntry) {
	if fm.m == nil {
		fm.m = map[string]memoEntry{}
	}
	if _, ok := fm.m[path]; !ok && len(fm.m) >= maxMemo {
		clear(fm.m) // bounded: a scene of more distinct files starts over
	}
	fm.m[path] = e
}

// maxMemo bounds the files a memo remembers.
const maxMemo = 16384

// localURI turns a buffer's or image's uri into a relative path; data URIs
// and absolute paths are no files of the model's directory.
func localURI(u string) (string, bool) {
	p, ok, err := models.FileURI(u)
	return p, ok && err == nil
}

// gltfRefs returns the external uris of a .gltf or .glb document's
// buffers and images and its embedded commands (those of the default
// scene, else of the asset, as models loads them).
func gltfRefs(data []byte) (uris, commands []string) {
	if len(data) >= 20 && string(data[:4]) == "glTF" {
		n := int64(binary.LittleEndian.Uint32(data[12:]))
		if string(data[16:20]) != "JSON" || n > int64(len(data)-20) {
			return nil, nil
		}
		data = data[20 : 20+n]
	}
	type extras struct {
		Simvis *struct {
			Commands json.RawMessage `json:"commands"`
		} `json:"simvis"`
	}
	var doc struct {
		Scene  *int `json:"scene"`
		Scenes []struct {
			Extras extras `json:"extras"`
		} `json:"scenes"`
		Asset struct {
			Extras extras `json:"extras"`
		} `json:"asset"`
		Buffers []struct{ URI string } `json:"buffers"`
		Images  []struct{ URI string } `json:"images"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return nil, nil
	}
	for _, b := range doc.Buffers {
		uris = append(uris, b.URI)
	}
	for _, im := range doc.Images {
		uris = append(uris, im.URI)
	}
	pick := func(e extras) ([]string, bool) {
		if e.Simvis == nil {
			return nil, false
		}
		raw := bytes.TrimSpace(e.Simvis.Commands)
		var one string
		var list []string
		switch {
		case len(raw) == 0 || string(raw) == "null":
			return nil, false
		case json.Unmarshal(raw, &one) == nil:
			return []string{one}, true
		case json.Unmarshal(raw, &list) == nil:
			return list, true
		}
		return nil, false
	}
	si := 0
	if doc.Scene != nil {
		si = *doc.Scene
	}
	if si >= 0 && si < len(doc.Scenes) {
		if cmds, ok := pick(doc.Scenes[si].Extras); ok {
			return uris, cmds
		}
	}
	cmds, _ := pick(doc.Asset.Extras)
	return uris, cmds
}

// fileAttrs returns the file attributes of the elements in an XML text of
// one or more commands.
func fileAttrs(text string) []string {
	d := xml.NewDecoder(strings.NewReader("<r>" + text + "</r>"))
	var out []string
	for {
		tok, err := d.Token()
		if err != nil {
			return out
		}
		if se, ok := tok.(xml.StartElement); ok {
			for _, a := range se.Attr {
				if a.Name.Local == "file" && a.Name.Space == "" && a.Value != "" {
					out = append(out, a.Value)
				}
			}
		}
	}
}

// encodeFiles is a record's file list as stored in the change log: JSON,
// nothing when the command loaded no file.
func encodeFiles(files []FileHash) []byte {
	if len(files) == 0 {
		return nil
	}
	b, _ := json.Marshal(files)
	return b
}

// DecodeFiles reads a record's file list (the bytes after its text in the
// change log, without their padding; a NATS record's Simvis-Files header)
// and checks it: relative paths that leave the record's directory only
// through at most MaxUp leading "..", SHA-256 in hex.
func DecodeFiles(b []byte) ([]FileHash, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var files []FileHash
	if err := json.Unmarshal(b, &files); err != nil {
		return nil, fmt.Errorf("file list: %v", err)
	}
	if len(files) > maxLoadedFiles {
		return nil, fmt.Errorf("file list of %d files, at most %d", len(files), maxLoadedFiles)
	}
	for _, f := range files {
		if _, _, err := splitListed(f.Path); err != nil {
			return nil, fmt.Errorf("file list: %v", err)
		}
		if len(f.SHA256) != 64 || strings.ToLower(f.SHA256) != f.SHA256 {
			return nil, fmt.Errorf("file list: %s: bad SHA-256 %s", quotePath(f.Path), quotePath(f.SHA256))
		}
		if _, err := hex.DecodeString(f.SHA256); err != nil {
			return nil, fmt.Errorf("file list: %s: bad SHA-256 %s", quotePath(f.Path), quotePath(f.SHA256))
		}
	}
	return files, nil
}

var errHashDiffers = errors.New("its SHA-256 differs from the one its command loaded")
