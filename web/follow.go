package web

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/web/client"
)

// snapshot is what the server knows of the host at one moment. It is never
// changed once published: pages' writers read it without locks. records
// only grows within a run (a new run starts a new slice), so a writer's
// cursor into it stays valid.
type snapshot struct {
	gen      uint64 // 1, 2, ... per snapshot published
	epoch    uint64
	status   string
	cycle    uint64
	records  []client.Record
	elemGen  uint64 // changes whenever elements does
	elements []client.Element
	values   []float64
	files    map[fileKey]string // the files the run's records list, with their SHA-256
	returns  map[string]*sensorReturns
	sights   map[string]scene.FieldOfView
	sightGen uint64 // changes whenever sights does
}

// sensorReturns are a range sensor's newest returns as pages get them.
type sensorReturns struct {
	gen    uint64 // the server's count of returns published, when these came
	header client.Returns
	points []byte // float32 x y z
}

type fileKey struct{ dir, path string }

// follower reads the host as a client does, Rate times a second, and
// publishes a snapshot each time. It never writes to the host: the host's
// cycle cannot wait on it, nor on any page.
type follower struct {
	dial   func() (*ipc.Client, error)
	period time.Duration

	c       *ipc.Client
	cur     ipc.LogCursor
	epoch   uint64
	records []client.Record
	files   map[fileKey]string
	elemGen uint64
	elems   []client.Element
	nextTry time.Time
}

// step reads the host once and returns the next snapshot (gen unset), and
// an error worth reporting when it changed.
func (f *follower) step() (*snapshot, error) {
	if f.c == nil {
		if time.Now().Before(f.nextTry) {
			return f.stopped(), nil
		}
		c, err := f.dial()
		if err != nil {
			f.nextTry = time.Now().Add(time.Second)
			return f.stopped(), err
		}
		f.c = c
		f.newRun()
	}
	if err := f.c.Check(); err != nil {
		before := f.c.Epoch()
		if rerr := f.c.Reopen(); rerr != nil || f.c.Epoch() == before {
			if errors.Is(err, ipc.ErrHostReplaced) || errors.Is(err, ipc.ErrHostStopped) {
				return f.stopped(), err
			}
			f.c.Close()
			f.c = nil
			return f.stopped(), err
		}
		f.newRun()
	}
	recs, err := f.c.Conn().ReadLog(&f.cur)
	if err != nil {
		return f.stopped(), err
	}
	if len(recs) > 0 || f.elems == nil {
		descs, err := f.c.Elements()
		if err != nil {
			return f.stopped(), err
		}
		f.elems = make([]client.Element, len(descs))
		for i, d := range descs {
			f.elems[i] = client.ToElement(d)
		}
		f.elemGen++
		// A new slice when the map grows: snapshots already published
		// keep theirs.
		files := make(map[fileKey]string, len(f.files))
		for k, v := range f.files {
			files[k] = v
		}
		for _, r := range recs {
			f.records = append(f.records, client.ToRecord(r))
			for _, fh := range r.Files {
				files[fileKey{r.Dir, fh.Path}] = fh.SHA256
			}
		}
		f.files = files
	}
	n := 0
	for _, e := range f.elems {
		n = max(n, e.Start+len(e.Params))
	}
	values := make([]float64, n)
	if err := f.c.Conn().ReadValues(0, values); err != nil {
		return f.stopped(), err
	}
	var cycle uint64
	if hc, ok := f.c.Conn().(interface{ HostCycles() uint64 }); ok {
		cycle = hc.HostCycles()
	}
	return &snapshot{epoch: f.epoch, status: client.Running, cycle: cycle, records: f.records,
		elemGen: f.elemGen, elements: f.elems, values: values, files: f.files}, nil
}

// newRun starts following the run the client is attached to now.
func (f *follower) newRun() {
	f.epoch = f.c.Epoch()
	f.cur = ipc.LogCursor{}
	f.records, f.files, f.elems = nil, map[fileKey]string{}, nil
}

// stopped is the snapshot of a host that is not there (now).
func (f *follower) stopped() *snapshot {
	return &snapshot{epoch: f.epoch, status: client.Stopped, records: f.records, elemGen: f.elemGen,
		elements: f.elems, files: f.files}
}

func (f *follower) close() {
	if f.c != nil {
		f.c.Close()
	}
}

// driver is the server's connection for pages' sets and requests: a second
// client of the host, so that a request waiting for the host never holds
// up the follower. One page's call at a time.
type driver struct {
	dial func() (*ipc.Client, error)
	mu   sync.Mutex
	c    *ipc.Client
}

// do runs fn on a client attached to run epoch, reopening it after a
// restart; a page whose run is gone is told so.
func (d *driver) do(epoch uint64, fn func(c *ipc.Client) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c == nil {
		c, err := d.dial()
		if err != nil {
			return err
		}
		d.c = c
	}
	// epoch 0 (a request, a file): any run; reopening remaps the whole
	// region, so only a restart does it.
	if epoch != 0 && d.c.Epoch() != epoch || d.c.Check() != nil {
		if err := d.c.Reopen(); err != nil {
			return err
		}
	}
	if epoch != 0 && d.c.Epoch() != epoch {
		return errors.New("the host was restarted since the page last heard from it: the value indices changed")
	}
	return fn(d.c)
}

func (d *driver) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c != nil {
		d.c.Close()
		d.c = nil
	}
}

// maxCachedFiles bounds the bytes of fetched files the server keeps.
const maxCachedFiles = 512 << 20

// fileCache keeps the files fetched from the host for pages (FetchFiles),
// per run; past maxCachedFiles it starts afresh.
type fileCache struct {
	mu    sync.Mutex
	epoch uint64
	files map[fileKey][]byte
	bytes int
}

// fetched returns a file the run's records list, fetched from the host
// through the driver's connection once, and checked against its SHA-256.
func (s *Server) fetched(epoch uint64, k fileKey, sum string) ([]byte, error) {
	fc := &s.cache
	fc.mu.Lock()
	defer fc.mu.Unlock() // one fetch at a time: pages asking for the same file wait for it
	if fc.epoch != epoch || fc.files == nil || fc.bytes > maxCachedFiles {
		fc.epoch, fc.files, fc.bytes = epoch, map[fileKey][]byte{}, 0
	}
	if data, ok := fc.files[k]; ok {
		return data, nil
	}
	var data []byte
	err := s.drv.do(0, func(c *ipc.Client) error {
		ff, ok := c.Conn().(ipc.FileFetcher)
		if !ok {
			return errors.New("this host's transport cannot fetch files")
		}
		var err error
		data, err = ff.FetchFile(k.dir, k.path)
		return err
	})
	if err != nil {
		return nil, err
	}
	if got := sha256.Sum256(data); sum != "" && hex.EncodeToString(got[:]) != sum {
		return nil, fmt.Errorf("%s: the host sent a file whose SHA-256 is not the one its change log lists", k.path)
	}
	fc.files[k] = data
	fc.bytes += len(data)
	return data, nil
}
