package ipc

import (
	"errors"
	"fmt"

	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// Mirror is a local replica of a host's scene (the paper's process C): it
// replays the change log on a scene of its own, copies the values every
// Sync, and may add overlay commands that only it shows. It rebuilds from
// the start when the host restarts.
type Mirror struct {
	client  *Client
	overlay []*scene.Command
	opts    scene.Options
	files   fileCache

	scene    *scene.Scene
	follower *Follower
	applied  uint64      // last change-log sequence replayed
	runs     []valueRun  // host values copied into the local table
	stale    bool        // runs must be worked out again
	held     []LogRecord // records not replayed yet because one failed
	Rebuilds int         // times the replica was rebuilt after a host restart
}

// valueRun copies n values from the host's table at host to the local
// table at local. Overlay elements take local slots too, so indices differ.
type valueRun struct{ host, local, n int }

// MirrorOptions configure a mirror.
type MirrorOptions struct {
	// Overlay commands are executed after the host's; their names must not
	// clash with the host's.
	Overlay []*scene.Command
	// Scene configures the local scene (its parameter table must be its
	// own, not a region's).
	Scene scene.Options
	// FetchFiles fetches model files from the host even where the host's
	// scene directory exists on this machine. Without it they are fetched
	// (over transports that can) only where it does not.
	FetchFiles bool
}

// NewMirror builds a replica of the host c is attached to, with overlay
// commands and options for the local scene (see MirrorOptions).
func NewMirror(c *Client, overlay []*scene.Command, opts scene.Options) (*Mirror, error) {
	return NewMirrorWith(c, MirrorOptions{Overlay: overlay, Scene: opts})
}

// NewMirrorWith builds a replica of the host c is attached to. Model files
// the host's commands name are read where the host has them if this
// machine has the same directory, else fetched from the host into a
// temporary directory (Close removes it).
func NewMirrorWith(c *Client, mo MirrorOptions) (*Mirror, error) {
	opts, overlay := mo.Scene, mo.Overlay
	if opts.ParamStorage != nil {
		return nil, errors.New("ipc: a mirror's scene keeps its own parameter table")
	}
	if opts.OnRejected == nil {
		// The copy may catch a client's bad value before the host reset it;
		// the next copy brings the host's value back.
		opts.OnRejected = func(*scene.RejectedError) {}
	}
	if opts.Limits.Elements == 0 {
		// Every element the mirror replays, the host admitted, within its
		// own element budget and descriptor table; the other whole-scene
		// budgets (nodes, triangles, ...) still bound the replica.
		opts.Limits.Elements = -1
	}
	m := &Mirror{client: c, overlay: overlay, opts: opts}
	m.files.fetcher, _ = c.conn.(FileFetcher)
	m.files.always = mo.FetchFiles
	m.files.limits = mo.Scene.Limits.Model
	m.files.confine = !hasPackages(mo.Scene.PackagePath)
	if mo.FetchFiles && m.files.fetcher == nil {
		return nil, errors.New("ipc: this transport cannot fetch files from the host")
	}
	if err := m.rebuild(); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// Close removes the files the mirror fetched. The replica stays usable.
func (m *Mirror) Close() { m.files.close() }

// Scene is the replica. It changes identity on a rebuild.
func (m *Mirror) Scene() *scene.Scene { return m.scene }

// Applied is the last change-log sequence number replayed.
func (m *Mirror) Applied() uint64 { return m.applied }

func (m *Mirror) rebuild() error {
	m.scene = scene.New(m.opts)
	m.follower = m.client.Follow(1)
	m.applied, m.runs, m.stale, m.held = 0, nil, true, nil
	if err := m.replay(); err != nil {
		return err
	}
	for _, c := range m.overlay {
		// Commands are consumed by executing them; run a fresh copy.
		cc := scene.NewCommand(c.Elem.Copy(), c.File, c.Line, c.Dir)
		if err := m.scene.Exec(cc); err != nil {
			return fmt.Errorf("overlay: %w", err)
		}
	}
	return m.copyValues()
}

// replay executes the change-log records published since the last call,
// after those a failure held back: a record that fails is tried again at
// the next Sync, and nothing after it runs before it.
func (m *Mirror) replay() error {
	recs, err := m.follower.Poll()
	recs = append(m.held, recs...)
	m.held = nil
	for i, rec := range recs {
		c, perr := m.files.command(rec)
		if perr == nil {
			perr = m.scene.Exec(c)
		}
		if perr != nil {
			m.held = recs[i:]
			return fmt.Errorf("replaying change %d: %w", rec.Seq, perr)
		}
		m.applied = rec.Seq
		m.stale = true // new elements: the value runs change
	}
	return err
}

// Sync brings the replica up to date: new commands, then the values. It
// rebuilds the replica after a host restart and returns ErrHostStopped
// (wrapped) when the host is gone.
func (m *Mirror) Sync() error {
	if err := m.client.Check(); err != nil {
		before := m.client.Epoch()
		if errors.Is(err, ErrHostStopped) {
			// A host that stopped may have been followed by a new one
			// under the same name.
			if m.client.Reopen() != nil || m.client.Epoch() == before {
				return err
			}
		} else if !errors.Is(err, ErrHostReplaced) {
			return err
		} else if err := m.client.Reopen(); err != nil {
			return err
		}
		m.Rebuilds++
		return m.rebuild()
	}
	err := m.replay()
	if errors.Is(err, ErrHostReplaced) {
		return m.Sync()
	}
	if err != nil {
		return err
	}
	return m.copyValues()
}

// copyValues copies the host's values into the local table and applies
// them.
func (m *Mirror) copyValues() error {
	if m.stale {
		descs, err := m.client.Elements()
		if err != nil {
			return err
		}
		m.runs = m.runs[:0]
		for _, d := range descs {
			e, ok := m.scene.Element(d.Name)
			if !ok || len(e.Params) != len(d.Params) {
				continue // its change-log record was not replayed yet
			}
			m.runs = append(m.runs, valueRun{host: d.Start, local: e.Start, n: len(d.Params)})
		}
		m.stale = false
	}
	local := m.scene.Values()
	for _, run := range m.runs {
		if err := m.client.conn.ReadValues(run.host, local[run.local:run.local+run.n]); err != nil {
			return err
		}
	}
	return m.scene.Update()
}

// hasPackages reports whether a scene loads URDF packages from a search
// path (nil: models.DefaultPackagePath, $ROS_PACKAGE_PATH).
func hasPackages(path []string) bool {
	if path == nil {
		path = models.DefaultPackagePath
	}
	for _, e := range path {
		if e != "" {
			return true
		}
	}
	return false
}
