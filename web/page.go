package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/simvis/simvis/web/assets"
)

// pageHandler serves the page's files: index.html at /, the others by
// name, the program (/simvis.wasm) gzip-encoded to browsers that take it.
// Every answer carries an ETag, so a reload fetches nothing unchanged.
func (s *Server) pageHandler() http.Handler {
	var mu sync.Mutex
	etags := map[string]string{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "GET only", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
		if name == "" {
			name = "index.html"
		}
		gz := false
		if name == "simvis.wasm" {
			name, gz = assets.Program, true
		}
		if strings.Contains(name, "/") || name == assets.Program && !gz {
			http.NotFound(w, r)
			return
		}
		data, err := fs.ReadFile(s.opts.Assets, name)
		if err != nil {
			if gz {
				http.Error(w, "this simvis was built without the browser program: build it with make (go generate ./web/assets)", http.StatusNotFound)
				return
			}
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		tag, ok := etags[name]
		if !ok {
			sum := sha256.Sum256(data)
			tag = `"` + hex.EncodeToString(sum[:12]) + `"`
			etags[name] = tag
		}
		mu.Unlock()
		h := w.Header()
		h.Set("ETag", tag)
		h.Set("Cache-Control", "no-cache")
		if gz {
			h.Set("Content-Type", "application/wasm")
			h.Add("Vary", "Accept-Encoding")
			if acceptsGzip(r) {
				h.Set("Content-Encoding", "gzip")
			} else if data, err = gunzip(data); err != nil {
				http.Error(w, "the embedded program is damaged", http.StatusInternalServerError)
				return
			}
		} else if t := mime.TypeByExtension(path.Ext(name)); t != "" {
			h.Set("Content-Type", t)
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
	})
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

func gunzip(data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}
