package foxglove

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors/ros2"
)

// The scene channel is not a frame published to every client. The host's
// goroutine (Update) only describes the parts (sceneJob); the builder
// goroutine encodes each distinct model once (by content: parts that
// load the same file share one encoding) within MaxSceneBytes and makes
// a snapshot of entities; each client's writer sends that client what it
// lacks of the latest snapshot: entities it does not have with this
// content, and the deletions. A model goes to a client once, however many
// parts are added after it, and the message is streamed from the shared
// encodings, never copied per client.

// scenePart is one part as the host's goroutine saw it.
type scenePart struct {
	name, file, at string
	m              *models.Model
	pose           mgl64.Mat4
	look           look
}

type sceneJob struct {
	ts    uint64
	parts []scenePart
}

// blob is one model encoding: base64 binary glTF, shared by every key
// (model and color) whose encoding has the same bytes.
type blob struct {
	b64  []byte
	hash [32]byte
}

// snapEntity is one entity of a snapshot: its JSON with the model's data
// left out (prefix + blob + suffix), and key, which changes when anything
// but the timestamp does.
type snapEntity struct {
	id, key        string
	prefix, suffix []byte
	blob           *blob
}

type sceneSnap struct {
	ts        uint64
	entities  []snapEntity
	deletions []string // parts switched off
	off       string   // deletions joined: what a client was last told
}

// sceneBuilder takes the latest job (latest wins: a job replaced before
// the builder took it is never built) and owns the model encodings.
type sceneBuilder struct {
	mu     sync.Mutex
	job    *sceneJob
	busy   bool
	idle   *sync.Cond
	wake   chan struct{}
	glb    map[glbKey]*blob
	glbErr map[glbKey]bool
	byHash map[[32]byte]*blob
	total  int64 // bytes of the blobs in byHash
}

func (b *sceneBuilder) init() {
	b.idle = sync.NewCond(&b.mu)
	b.wake = make(chan struct{}, 1)
	b.glb, b.glbErr, b.byHash = map[glbKey]*blob{}, map[glbKey]bool{}, map[[32]byte]*blob{}
}

func (b *sceneBuilder) submit(j *sceneJob) {
	b.mu.Lock()
	b.job = j
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// flush waits until the builder built the last job submitted (tests).
func (s *Server) flushScene() {
	b := &s.build
	b.mu.Lock()
	for b.job != nil || b.busy {
		b.idle.Wait()
	}
	b.mu.Unlock()
}

func (s *Server) sceneWorker() {
	defer s.wg.Done()
	b := &s.build
	for {
		select {
		case <-s.done:
			b.mu.Lock()
			b.job = nil
			b.idle.Broadcast()
			b.mu.Unlock()
			return
		case <-b.wake:
		}
		b.mu.Lock()
		j := b.job
		b.job, b.busy = nil, j != nil
		b.mu.Unlock()
		if j != nil {
			s.buildScene(j)
		}
		b.mu.Lock()
		b.busy = false
		b.idle.Broadcast()
		b.mu.Unlock()
	}
}

// modelMarker stands for a model's data in an entity's JSON until it is
// split there; it is the last string of the entity (LastIndex).
const modelMarker = "@@simvis-model-data@@"

func (s *Server) buildScene(j *sceneJob) {
	b := &s.build
	snap := &sceneSnap{ts: j.ts}
	used := map[glbKey]bool{}
	for _, p := range j.parts {
		if p.m != nil && p.look.shown {
			used[glbKey{m: p.m, colored: p.look.colored, color: p.look.color}] = true
		}
	}
	for _, p := range j.parts {
		id := "part:" + p.name
		if !p.look.shown {
			snap.deletions = append(snap.deletions, id)
			continue
		}
		e := newEntity(id, ros2.FrameID(p.name), 0) // the tf frame id of its insertion point
		e.Metadata = append(e.Metadata, fgKV{"file", p.file}, fgKV{"insert_at", p.at})
		var bl *blob
		if p.m != nil {
			if bl = s.modelBlob(glbKey{m: p.m, colored: p.look.colored, color: p.look.color}, p.name, used); bl != nil {
				e.Models = append(e.Models, fgModel{Pose: poseOf(p.pose), Scale: fgVec3{1, 1, 1},
					Color: fgColor{1, 1, 1, 1}, MediaType: "model/gltf-binary", Data: modelMarker})
			}
		}
		keyJSON, _ := json.Marshal(e)
		e.Timestamp = stampOf(j.ts)
		full, _ := json.Marshal(e)
		se := snapEntity{id: id, prefix: full}
		if bl != nil {
			i := bytes.LastIndex(full, []byte(modelMarker))
			se.prefix, se.suffix, se.blob = full[:i], full[i+len(modelMarker):], bl
			keyJSON = append(keyJSON, bl.hash[:]...)
		}
		h := sha256.Sum256(keyJSON)
		se.key = string(h[:])
		snap.entities = append(snap.entities, se)
	}
	snap.off = fmt.Sprint(snap.deletions)
	// Recolored encodings are kept while in use only: a slider leaves one
	// per model, not one per color it passed.
	for k := range b.glb {
		if k.colored && !used[k] {
			delete(b.glb, k)
		}
	}
	for k := range b.glbErr {
		if !used[k] {
			delete(b.glbErr, k)
		}
	}
	b.collect()
	s.mu.Lock()
	s.snap = snap
	id := s.sceneChan.Load()
	if id >= 1 && int(id) <= len(s.channels) {
		f := &frame{ts: j.ts, scene: true}
		s.channels[id-1].latest = f
		for c := range s.clients {
			c.offer(id, f)
		}
	}
	s.mu.Unlock()
}

// collect drops the blobs no key uses and counts the rest.
func (b *sceneBuilder) collect() {
	live := map[*blob]bool{}
	for _, bl := range b.glb {
		live[bl] = true
	}
	b.total = 0
	for h, bl := range b.byHash {
		if !live[bl] {
			delete(b.byHash, h)
			continue
		}
		b.total += int64(len(bl.b64))
	}
}

// modelBlob returns the encoding of a model as the part shows it
// (recolored where k says so, as simvis export writes it), encoding it
// once per key and keeping one copy per distinct content, within
// MaxSceneBytes; nil when it cannot be encoded or does not fit.
func (s *Server) modelBlob(k glbKey, part string, used map[glbKey]bool) *blob {
	b := &s.build
	if bl, ok := b.glb[k]; ok {
		return bl
	}
	if b.glbErr[k] {
		return nil
	}
	m := k.m
	if k.colored {
		m = scene.Recolor(m, k.color)
	}
	data, err := models.GLB(m)
	if err != nil {
		b.glbErr[k] = true
		s.opts.Warn("foxglove-model", "foxglove: model %s not sent: %v", m.Name, err)
		return nil
	}
	h := sha256.Sum256(data)
	if bl, ok := b.byHash[h]; ok {
		b.glb[k] = bl
		return bl
	}
	size := int64(base64.StdEncoding.EncodedLen(len(data)))
	if b.total+size > s.opts.MaxSceneBytes {
		// Make room: encodings no part of this scene uses go first.
		for key := range b.glb {
			if !used[key] {
				delete(b.glb, key)
			}
		}
		b.collect()
	}
	if b.total+size > s.opts.MaxSceneBytes {
		b.glbErr[k] = true
		s.opts.Warn("foxglove-scene-budget", "foxglove: part %s: model %s (%.1f MiB encoded) not sent: the scene's models take %.1f MiB, the budget is %.1f MiB (raise it with --foxglove-max-scene-mib)",
			part, m.Name, float64(size)/(1<<20), float64(b.total)/(1<<20), float64(s.opts.MaxSceneBytes)/(1<<20))
		return nil
	}
	bl := &blob{b64: make([]byte, size), hash: h}
	base64.StdEncoding.Encode(bl.b64, data)
	b.byHash[h] = bl
	b.glb[k] = bl
	b.total += size
	return bl
}

// progress resets a watchdog on every write: a client that takes no part
// of a message for WriteTimeout is too slow.
type progress struct {
	w     io.Writer
	timer *time.Timer
	d     time.Duration
}

func (p *progress) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.timer.Reset(p.d)
	return n, err
}

// writeScene sends the client what it lacks of the latest scene: the
// entities it does not have as they are now and every deletion, as one
// SceneUpdate streamed from the shared encodings. Nothing is sent when it
// lacks nothing.
func (c *client) writeScene(sub uint32) error {
	c.s.mu.RLock()
	snap := c.s.snap
	c.s.mu.RUnlock()
	if snap == nil {
		return nil
	}
	c.mu.Lock()
	sent := c.sceneSent
	if sent == nil {
		sent = map[string]string{}
	}
	off := c.sceneOff
	c.mu.Unlock()
	var send []*snapEntity
	present := make(map[string]bool, len(snap.entities))
	for i := range snap.entities {
		e := &snap.entities[i]
		present[e.id] = true
		if sent[e.id] != e.key {
			send = append(send, e)
		}
	}
	deletions := append([]string(nil), snap.deletions...)
	offNow := map[string]bool{}
	for _, id := range deletions {
		offNow[id] = true
	}
	var gone []string
	for id := range sent {
		if !present[id] && !offNow[id] {
			gone = append(gone, id) // a part the scene no longer has
		}
	}
	sort.Strings(gone)
	deletions = append(deletions, gone...)
	if len(send) == 0 && len(gone) == 0 && off == snap.off && c.sceneSent != nil {
		return nil
	}
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	timer := time.AfterFunc(c.s.opts.WriteTimeout, cancel)
	defer timer.Stop()
	ww, err := c.conn.Writer(ctx, websocket.MessageBinary)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(&progress{ww, timer, c.s.opts.WriteTimeout}, 64<<10)
	hdr := make([]byte, 13)
	hdr[0] = 1 // message data
	binary.LittleEndian.PutUint32(hdr[1:], sub)
	binary.LittleEndian.PutUint64(hdr[5:], snap.ts)
	w.Write(hdr)
	w.WriteString(`{"deletions":[`)
	for i, id := range deletions {
		if i > 0 {
			w.WriteByte(',')
		}
		d, _ := json.Marshal(fgDeletion{Timestamp: stampOf(snap.ts), Type: 0, ID: id})
		w.Write(d)
	}
	w.WriteString(`],"entities":[`)
	for i, e := range send {
		if i > 0 {
			w.WriteByte(',')
		}
		w.Write(e.prefix)
		if e.blob != nil {
			w.Write(e.blob.b64)
			w.Write(e.suffix)
		}
	}
	w.WriteString(`]}`)
	err = w.Flush()
	if err == nil {
		err = ww.Close()
	}
	if err != nil {
		if ctx.Err() != nil && c.ctx.Err() == nil {
			c.s.slow.Add(1)
			c.s.opts.Warn("foxglove-slow", "foxglove: disconnected %s: it took no part of a scene message for %v", c, c.s.opts.WriteTimeout)
		}
		return err
	}
	c.s.sent.Add(1)
	next := make(map[string]string, len(snap.entities))
	for _, e := range snap.entities {
		if sent[e.id] == e.key {
			next[e.id] = e.key
		}
	}
	for _, e := range send {
		next[e.id] = e.key
	}
	c.mu.Lock()
	if _, still := c.bySub[c.s.sceneChan.Load()]; still {
		c.sceneSent, c.sceneOff = next, snap.off
	}
	c.mu.Unlock()
	return nil
}
