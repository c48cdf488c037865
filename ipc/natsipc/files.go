package natsipc

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/simvis/simvis/ipc"
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
	if !known {
		fail("%s in %s is not a file the scene's logged commands loaded", req.Path, req.Dir)
		return
	}
	// Confined to the record's directory, links included, opened without
	// blocking (a FIFO would stall this handler and every later file
	// request): ipc.ReadLoggedChunk, as the web viewer's server does.
	// Replies are chunked, so any size can be served.
	data, size, err := ipc.ReadLoggedChunk(req.Dir, req.Path, req.Offset, fileChunk)
	if err != nil {
		fail("%v", err)
		return
	}
	reply.Header.Set(hdrSize, strconv.FormatInt(size, 10))
	reply.Data = data
	m.RespondMsg(reply)
}
