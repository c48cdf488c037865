package ipc

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// FileFetcher is a Conn that can fetch files from the host's scene
// directories, for mirrors on machines that do not have them (the NATS
// transport is one).
type FileFetcher interface {
	// FetchFile returns the file at path (relative, slash-separated)
	// inside dir, a directory the host's change log names.
	FetchFile(dir, path string) ([]byte, error)
}

// fileCache holds the model files a mirror fetched, laid out as on the
// host: a record's files go under root/H/N1/.../Nk, where H stands for the
// host's directory k levels above the record's (k the most levels its
// file list climbs, at most MaxUp) and N1...Nk are the real names of the
// directories from there down to the record's, so that its "../" paths
// resolve inside root/H exactly as on the host. Real names, because
// a "../" path may name them (scenes/arm's ../arm/x); the host sends them
// already, as the record's directory.
type fileCache struct {
	root   string            // "" until the first fetch
	hashes map[string]string // SHA-256 of the files written into the cache, by path
	// byHash names a file written into the cache with that SHA-256: a
	// record of the same directory whose list climbs another number of
	// "../" lays its files out in another copy (root/H), and takes them
	// from here instead of from the host again.
	byHash  map[string]string
	memo    fileMemo // what this machine's copies of host directories hold
	fetcher FileFetcher
	always  bool          // fetch even where the host's directory exists here
	confine bool          // run commands from the cache confined to it (see command)
	limits  models.Limits // per model, as scenes apply them; zero fields take models.DefaultLimits
	// stored is the size of each file written into the cache, total their
	// sum; maxTotal bounds it (0: cacheFiles largest model files).
	stored   map[string]int64
	total    int64
	maxTotal int64
}

// cacheFiles bounds what a fetching mirror writes into its copy of the
// host's files, all files together (a file written again counts once, at
// its newest size), in largest model files (models.Limits.FileBytes: 16 x
// 256 MiB = 4 GiB by default): a hostile host naming ever new files in
// ever new records cannot fill the mirror's disk. A mirror whose model
// limits are off (a negative FileBytes) has no such bound either.
const cacheFiles = 16

// store writes a fetched file into the cache, within the bound on the
// cache's total.
func (fc *fileCache) store(path, rel string, data []byte) error {
	limit := fc.maxTotal
	if limit == 0 {
		limit = cacheFiles * fc.fileBytes() // negative: the limits are off
	}
	total := fc.total - fc.stored[path] + int64(len(data))
	if limit > 0 && total > limit {
		return fmt.Errorf("fetching %s from the host: the mirror's copy of the host's files would hold %d bytes, over its bound of %d (%d largest model files: see --max-model-mib)", rel, total, limit, cacheFiles)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	if fc.stored == nil {
		fc.stored = map[string]int64{}
	}
	fc.stored[path], fc.total = int64(len(data)), total
	return nil
}

// resolve returns where the mirror resolves a record's files, having
// made sure they are there. A record lists the files its command loaded
// with their SHA-256: the host's own directory serves if this machine has
// every one of them with that hash (and fetching is not forced); else the
// cache's copy of the directory, into which each file missing there or
// different is copied from this machine's copy where that matches, or
// from a copy of it the cache holds already (under another number of
// "../"), or fetched from the host and checked against its hash.
func (fc *fileCache) resolve(rec LogRecord) (string, error) {
	if fc.fetcher == nil {
		return rec.Dir, nil
	}
	if len(rec.Files) == 0 {
		return fc.localDir(rec.Dir)
	}
	// Checked here too: records reach a mirror from hosts and servers it
	// does not trust, and not all through DecodeFiles.
	up, err := listedUp(rec.Files)
	if err != nil {
		return "", fmt.Errorf("change %d: file list: %w", rec.Seq, err)
	}
	if !fc.always && fc.allMatch(rec.Dir, rec.Files) {
		return rec.Dir, nil
	}
	tree, local, err := fc.cacheTree(rec.Dir, up)
	if err != nil {
		return "", fmt.Errorf("change %d: %w", rec.Seq, err)
	}
	for _, f := range rec.Files {
		path := filepath.Join(local, filepath.FromSlash(f.Path))
		if !within(tree, path) {
			return "", fmt.Errorf("change %d: file %s would lie outside the mirror's copy of the host's directory", rec.Seq, quotePath(f.Path))
		}
		if fc.hashes[path] == f.SHA256 {
			continue
		}
		var data []byte
		if !fc.always {
			if d, err := models.ReadRegular(filepath.Join(rec.Dir, filepath.FromSlash(f.Path)), fc.fileBytes()); err == nil && hashOf(d) == f.SHA256 {
				data = d
			}
		}
		if cached, ok := fc.byHash[f.SHA256]; ok && data == nil {
			// Checked again: the cached path may have been written over
			// since.
			if d, err := models.ReadRegular(cached, fc.fileBytes()); err == nil && hashOf(d) == f.SHA256 {
				data = d
			}
		}
		if data == nil {
			if data, err = fc.fetcher.FetchFile(rec.Dir, f.Path); err != nil {
				return "", fmt.Errorf("fetching %s from the host: %w", f.Path, err)
			}
			if max := fc.fileBytes(); max >= 0 && int64(len(data)) > max {
				return "", fmt.Errorf("fetching %s from the host: %w", f.Path, &models.LimitError{Field: "FileBytes", Have: int64(len(data)), Max: max})
			}
			if got := hashOf(data); got != f.SHA256 {
				return "", fmt.Errorf("fetching %s from the host: the host's copy changed since change %d loaded it: %w (SHA-256 %s, logged %s)", f.Path, rec.Seq, errHashDiffers, got, f.SHA256)
			}
		}
		if err := fc.store(path, f.Path, data); err != nil {
			return "", err
		}
		if fc.hashes == nil {
			fc.hashes = map[string]string{}
		}
		if fc.byHash == nil {
			fc.byHash = map[string]string{}
		}
		fc.hashes[path], fc.byHash[f.SHA256] = f.SHA256, path
	}
	return local, nil
}

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// allMatch reports whether dir holds every file with its hash.
func (fc *fileCache) allMatch(dir string, files []FileHash) bool {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return false
	}
	for _, f := range files {
		e, ok := fc.memo.get(filepath.Join(dir, filepath.FromSlash(f.Path)), false)
		if !ok || e.sum != f.SHA256 {
			return false
		}
	}
	return true
}

// localDir returns where the mirror resolves the files of a record
// without a file list: the host's own directory if this machine has it,
// else the cache's copy of it.
func (fc *fileCache) localDir(hostDir string) (string, error) {
	if fc.fetcher == nil {
		return hostDir, nil
	}
	if st, err := os.Stat(hostDir); !fc.always && err == nil && st.IsDir() {
		return hostDir, nil
	}
	return fc.cacheDir(hostDir)
}

// cacheDir is the cache's copy of a host directory.
func (fc *fileCache) cacheDir(hostDir string) (string, error) {
	_, local, err := fc.cacheTree(hostDir, 0)
	return local, err
}

// cacheTree returns the cache's copy of the host's directory up levels
// above hostDir (tree: every file of the record must lie in it) and where
// hostDir lies inside it (local), its names checked (see fileCache).
func (fc *fileCache) cacheTree(hostDir string, up int) (tree, local string, err error) {
	ancestor, names, err := hostDirTail(hostDir, up)
	if err != nil {
		return "", "", err
	}
	if fc.root == "" {
		root, err := os.MkdirTemp("", "simvis-mirror-files")
		if err != nil {
			return "", "", err
		}
		fc.root = root
	}
	sum := sha256.Sum256([]byte(ancestor))
	tree = filepath.Join(fc.root, hex.EncodeToString(sum[:8]))
	local = filepath.Join(append([]string{tree}, names...)...)
	if !within(tree, local) && local != tree {
		return "", "", fmt.Errorf("record directory %s cannot be laid out in the mirror's copy", quotePath(hostDir))
	}
	return tree, local, nil
}

// command parses a record's command to run where its files are: in place,
// or from the cache's copy (fetching what it needs), then, with confine,
// confined to that copy, so that no path a host's record holds, listed or
// not (an absolute path in its XML or in a model's embedded command),
// makes the mirror read outside it. A mirror with a package search path
// runs them unconfined: it finds packages the host found through its own
// search path (docs/urdf.md) in that path, outside the copy.
func (fc *fileCache) command(rec LogRecord) (*scene.Command, error) {
	dir, err := fc.resolve(rec)
	if err != nil {
		return nil, err
	}
	c, err := scene.ParseCommand(rec.XML, rec.Source, dir)
	if err != nil {
		return nil, err
	}
	if tree := fc.copyRoot(dir); tree != "" && fc.confine {
		c.Confined, c.Root = true, tree
	}
	if len(rec.Files) == 0 {
		// A record without a file list: find what its command needs.
		if err := fc.prefetch(c, rec.Dir, dir); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// copyRoot returns the copy of a host directory (root/H, see fileCache)
// that dir lies in, or "" for a directory outside the cache (the host's
// own, on this machine).
func (fc *fileCache) copyRoot(dir string) string {
	if fc.root == "" || !within(fc.root, dir) {
		return ""
	}
	r, _ := filepath.Rel(fc.root, dir)
	first, _, _ := strings.Cut(filepath.ToSlash(r), "/")
	return filepath.Join(fc.root, first)
}

// prefetch fetches what a command needs before it runs in the cache: its
// model file, the model's external buffers and images, and what commands
// embedded in the model name, recursively.
func (fc *fileCache) prefetch(c *scene.Command, hostDir, local string) error {
	if local == hostDir {
		return nil
	}
	file := c.Elem.SelectAttrValue("file", "")
	if file == "" {
		return nil
	}
	return fc.fetchModel(hostDir, local, filepath.ToSlash(file), 0)
}

func (fc *fileCache) fetchModel(hostDir, local, rel string, depth int) error {
	if depth > 16 {
		return fmt.Errorf("models embedded more than 16 deep at %s", rel)
	}
	path, err := fc.fetch(hostDir, local, rel)
	if err != nil {
		return err
	}
	data, err := models.ReadRegular(path, fc.fileBytes())
	if err != nil {
		return err
	}
	base := pathDir(rel)
	if strings.HasSuffix(strings.ToLower(rel), ".gltf") {
		for _, u := range models.ExternalURIs(data) {
			p, ok, err := models.FileURI(u)
			if err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
			if !ok {
				continue
			}
			if _, err := fc.fetch(hostDir, local, joinRel(base, p)); err != nil {
				return err
			}
		}
	}
	// Within the cache and the limits, as the command's execution will load
	// it: a hostile record cannot make the mirror read or fetch more.
	m, err := models.LoadWith(path, models.LoadOptions{Root: local, Limits: fc.limits})
	if err != nil {
		return nil // the command's own execution reports a bad model
	}
	for _, ec := range m.Commands {
		cmd, err := scene.ParseCommand(ec.XML, rel, "")
		if err != nil {
			continue
		}
		if f := cmd.Elem.SelectAttrValue("file", ""); f != "" {
			if err := fc.fetchModel(hostDir, local, joinRel(base, filepath.ToSlash(f)), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// fetch copies one file into the cache unless it is there already.
func (fc *fileCache) fetch(hostDir, local, rel string) (string, error) {
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return "", fmt.Errorf("file %q is outside the host's scene directory", rel)
	}
	path := filepath.Join(local, filepath.FromSlash(rel))
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	data, err := fc.fetcher.FetchFile(hostDir, rel)
	if err != nil {
		return "", fmt.Errorf("fetching %s from the host: %w", rel, err)
	}
	if max := fc.fileBytes(); max >= 0 && int64(len(data)) > max {
		return "", fmt.Errorf("fetching %s from the host: %w", rel, &models.LimitError{Field: "FileBytes", Have: int64(len(data)), Max: max})
	}
	return path, fc.store(path, rel, data)
}

// fileBytes is the largest file the cache takes (negative: any).
func (fc *fileCache) fileBytes() int64 {
	if fc.limits.FileBytes == 0 {
		return models.DefaultLimits.FileBytes
	}
	return fc.limits.FileBytes
}

func pathDir(rel string) string {
	if i := strings.LastIndex(rel, "/"); i >= 0 {
		return rel[:i]
	}
	return ""
}

func joinRel(base, p string) string {
	if base == "" {
		return p
	}
	return base + "/" + p
}

func (fc *fileCache) close() {
	if fc.root != "" {
		os.RemoveAll(fc.root)
		fc.root = ""
	}
}
