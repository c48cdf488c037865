package natsipc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/simvis/simvis/models"
)

// fileChunk bounds a file reply, well under the server's message limit.
const fileChunk = 512 << 10

// fileRequest asks for part of a file in one of the log's directories.
type fileRequest struct {
	Dir    string `json:"dir"`
	Path   string `json:"path"` // relative, slash-separated
	Offset int64  `json:"offset"`
}

// onFile serves model files to mirrors on other machines: only the files
// that logged commands loaded (their records' file lists), only where they
// stay inside the record's directory (symbolic links included), at most
// fileChunk bytes a reply.
func (p *Publisher) onFile(m *nats.Msg) {
	reply := nats.NewMsg(m.Reply)
	fail := func(format string, args ...any) {
		reply.Header.Set(hdrError, fmt.Sprintf(format, args...))
		m.RespondMsg(reply)
	}
	var req fileRequest
	if err := json.Unmarshal(m.Data, &req); err != nil {
		fail("bad file request: %v", err)
		return
	}
	p.filesMu.Lock()
	known := p.files[req.Dir][req.Path]
	p.filesMu.Unlock()
	rel := filepath.FromSlash(req.Path)
	if !known {
		fail("%s in %s is not a file the scene's logged commands loaded", req.Path, req.Dir)
		return
	}
	if !filepath.IsLocal(rel) {
		fail("%q leaves the scene's directory", req.Path)
		return
	}
	path := filepath.Join(req.Dir, rel)
	real, err := filepath.EvalSymlinks(path)
	base, berr := filepath.EvalSymlinks(req.Dir)
	if err != nil || berr != nil {
		fail("%s: not found", req.Path)
		return
	}
	if r, err := filepath.Rel(base, real); err != nil || !filepath.IsLocal(r) {
		fail("%q leads out of the scene's directory", req.Path)
		return
	}
	if req.Offset < 0 {
		fail("%s: negative offset %d", req.Path, req.Offset)
		return
	}
	// Opened without blocking and checked on the descriptor: a FIFO
	// would otherwise stall this handler, and every later file request,
	// for good. Replies are chunked, so any size can be served.
	f, size, err := models.OpenRegular(real, -1)
	if err != nil {
		if errors.Is(err, models.ErrNotRegular) {
			// Without the host's path, which is not the client's to know.
			fail("%s: %s", req.Path, strings.TrimPrefix(err.Error(), real+": "))
		} else {
			fail("%s: %v", req.Path, errors.Unwrap(err))
		}
		return
	}
	defer f.Close()
	buf := make([]byte, min(fileChunk, max(0, size-req.Offset)))
	n, err := f.ReadAt(buf, req.Offset)
	if err != nil && err != io.EOF {
		fail("%s: %v", req.Path, err)
		return
	}
	reply.Header.Set(hdrSize, strconv.FormatInt(size, 10))
	reply.Data = buf[:n]
	m.RespondMsg(reply)
}
