package foxglove

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/simvis/simvis/scene"
)

// parameter is a parameter as the server sends it.
type parameter struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Type  string  `json:"type"`
}

// rawParameter is a parameter as a client sends it: its value is checked
// before it means anything.
type rawParameter struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value"`
	Type  string          `json:"type"`
}

// paramState mirrors the scene's parameter table for the clients'
// goroutines: names (ELEMENT.PARAM), their value indices and the values
// as of the last Update, and the writes waiting to show.
type paramState struct {
	mu      sync.Mutex
	names   []string
	index   map[string]int
	values  []float64
	known   int // elements named so far
	pending []*pendingSet
	waiting int    // items of pending not yet settled
	gen     uint64 // Updates so far
}

func (p *paramState) init() { p.index = map[string]int{} }

// pendingSet is one setParameters a driver sent, waiting until every value
// it wrote shows in the scene (accepted) or does not after Settle and two
// updates (refused: the host reset it).
type pendingSet struct {
	c     *client
	id    string
	items []pendingItem
	gen0  uint64 // paramState.gen when it was written
	since time.Time
}

type pendingItem struct {
	name  string
	index int
	want  float64
	done  bool
}

type setRequest struct {
	c      *client
	params []rawParameter
	id     string
}

// current returns the values of names (those that exist), in order.
func (p *paramState) current(names []string) []parameter {
	out := make([]parameter, 0, len(names))
	for _, n := range names {
		if i, ok := p.index[n]; ok && i < len(p.values) {
			out = append(out, parameter{Name: n, Value: p.values[i], Type: "float64"})
		}
	}
	return out
}

func (s *Server) reply(c *client, id string, list []parameter) {
	msg := map[string]any{"op": "parameterValues", "parameters": list}
	if id != "" {
		msg["id"] = id
	}
	c.sendJSON(msg)
}

func (s *Server) getParameters(c *client, names []string, id string) {
	p := &s.params
	p.mu.Lock()
	if len(names) == 0 {
		names = p.names
	}
	var unknown []string
	for _, n := range names {
		if _, ok := p.index[n]; !ok {
			unknown = append(unknown, n)
		}
	}
	list := p.current(names)
	p.mu.Unlock()
	if len(unknown) > 0 {
		c.status(1, fmt.Sprintf("getParameters: no parameter %s (names are ELEMENT.PARAM)", quoteList(unknown)))
	}
	s.reply(c, id, list)
}

func quoteList(names []string) string {
	n := len(names)
	if n > 5 {
		names = names[:5]
	}
	list := make([]string, len(names), len(names)+1)
	for i, name := range names {
		list[i] = echo(name)
	}
	if n > 5 {
		list = append(list, fmt.Sprintf("... (%d names)", n))
	}
	return fmt.Sprintf("%q", list)
}

// maxUnknownParamSubs bounds the names of parameters that do not exist
// (yet: a later command may add their element) one client may subscribe
// to. Without it a client grows the server's memory without limit.
const maxUnknownParamSubs = 1024

func (s *Server) subscribeParameters(c *client, names []string, on bool) {
	p := &s.params
	p.mu.Lock() // before c.mu, as nowhere the other way round
	if len(names) == 0 && on {
		names = append([]string(nil), p.names...)
	}
	var unknown []string
	refused := 0
	c.mu.Lock()
	waiting := 0 // subscribed names that do not exist
	for n := range c.paramSubs {
		if _, ok := p.index[n]; !ok {
			waiting++
		}
	}
	if len(names) == 0 && !on {
		clear(c.paramSubs)
	}
	for _, n := range names {
		_, exists := p.index[n]
		switch {
		case !on:
			delete(c.paramSubs, n)
		case exists || c.paramSubs[n]:
			c.paramSubs[n] = true
		case waiting >= maxUnknownParamSubs:
			refused++
		default:
			unknown = append(unknown, n)
			c.paramSubs[n] = true
			waiting++
		}
	}
	c.mu.Unlock()
	p.mu.Unlock()
	if len(unknown) > 0 {
		c.status(1, fmt.Sprintf("subscribeParameterUpdates: no parameter %s yet", quoteList(unknown)))
	}
	if refused > 0 {
		c.status(2, fmt.Sprintf("subscribeParameterUpdates: %d names refused: a client may wait for at most %d parameters that do not exist yet", refused, maxUnknownParamSubs))
	}
}

// setParameters queues a driver's writes for the set worker; a viewer's
// are refused at once and answered with the values as they are.
// refuseSet refuses a whole setParameters: a status message, and the
// values as they are.
func (s *Server) refuseSet(c *client, params []rawParameter, id, why string) {
	s.setsRefused.Add(uint64(len(params)))
	c.status(2, "setParameters refused: "+why)
	if len(params) > s.opts.MaxSetEntries {
		s.reply(c, id, []parameter{}) // too many to look up
		return
	}
	names := make([]string, len(params))
	for i, prm := range params {
		names[i] = prm.Name
	}
	s.params.mu.Lock()
	list := s.params.current(names)
	s.params.mu.Unlock()
	s.reply(c, id, list)
}

func (s *Server) setParameters(c *client, params []rawParameter, id string) {
	refuse := func(why string) { s.refuseSet(c, params, id, why) }
	switch {
	case c.role != RoleDriver:
		refuse("a viewer token may only subscribe; connect with the driver token to set parameters")
		return
	case s.drv == nil:
		refuse("this server cannot drive the host")
		return
	case len(params) > s.opts.MaxSetEntries:
		s.opts.Warn("foxglove-set", "foxglove: %s: setParameters of %d entries refused (budget %d a message, --foxglove-max-set-entries)", c, len(params), s.opts.MaxSetEntries)
		refuse(fmt.Sprintf("%d entries, over the budget of %d a message (raise it with --foxglove-max-set-entries)", len(params), s.opts.MaxSetEntries))
		return
	}
	if n, ok := s.sets.push(c, setRequest{c, params, id}, s.opts.MaxPending); !ok {
		s.opts.Warn("foxglove-pending", "foxglove: %s: setParameters refused: %d of its messages wait, the budget per connection (--foxglove-max-pending)", c, n)
		refuse(fmt.Sprintf("%d setParameters messages of this connection wait for the host already, the budget per connection (raise it with --foxglove-max-pending)", n))
	}
}

// setWorker checks each write and hands it to the driver, connections in
// turn; the settle worker decides whether the host took it.
func (s *Server) setWorker() {
	defer s.wg.Done()
	s.sets.run(s.done, s.set)
}

func (s *Server) set(r setRequest) {
	p := &s.params
	p.mu.Lock()
	waiting := p.waiting
	if waiting+len(r.params) <= s.opts.MaxPendingSets {
		p.waiting += len(r.params) // reserved; given back below for what is not pending
	}
	gen := p.gen
	p.mu.Unlock()
	if waiting+len(r.params) > s.opts.MaxPendingSets {
		// Nothing was written: the host has not settled the earlier ones.
		s.opts.Warn("foxglove-pending", "foxglove: %s: setParameters refused: %d writes wait for the host (budget %d, --foxglove-max-pending-sets)", r.c, waiting, s.opts.MaxPendingSets)
		s.refuseSet(r.c, r.params, r.id, fmt.Sprintf("%d parameter writes of all clients wait for the host already; %d more would pass the budget of %d (raise it with --foxglove-max-pending-sets)", waiting, len(r.params), s.opts.MaxPendingSets))
		return
	}
	reserved := len(r.params)
	ps := &pendingSet{c: r.c, id: r.id, since: time.Now(), gen0: gen}
	var refused []string
	var problems []string
	for _, prm := range r.params {
		p.mu.Lock()
		index, ok := p.index[prm.Name]
		p.mu.Unlock()
		var v float64
		var why string
		switch {
		case !ok:
			why = "no such parameter (names are ELEMENT.PARAM)"
		case prm.Type != "" && prm.Type != "float64":
			why = fmt.Sprintf("type %q: parameters are float64", prm.Type)
		case !number(prm.Value, &v):
			why = fmt.Sprintf("value %s is not a number", echo(string(prm.Value)))
		case math.IsInf(v, 0) || math.IsNaN(v):
			why = "value not finite"
		}
		if why == "" {
			if err := s.drv.Set(index, v); err != nil {
				why = err.Error()
			}
		}
		if why != "" {
			refused = append(refused, prm.Name)
			if len(problems) < 8 {
				problems = append(problems, fmt.Sprintf("%s: %s", echo(prm.Name), why))
			} else if len(problems) == 8 {
				problems = append(problems, "...")
			}
			continue
		}
		ps.items = append(ps.items, pendingItem{name: prm.Name, index: index, want: v})
	}
	if len(refused) > 0 {
		s.setsRefused.Add(uint64(len(refused)))
		r.c.status(2, fmt.Sprintf("setParameters refused %d of %d: %s", len(refused), len(r.params), strings.Join(problems, "; ")))
	}
	p.mu.Lock()
	p.waiting -= reserved
	if len(ps.items) > 0 {
		p.waiting += len(ps.items)
		// The refused names are answered with the rest once the host
		// decided; their values stay as they were.
		for _, n := range refused {
			if i, ok := p.index[n]; ok {
				ps.items = append(ps.items, pendingItem{name: n, index: i, done: true})
			}
		}
		p.pending = append(p.pending, ps)
		p.mu.Unlock()
		return
	}
	names := refused
	for _, it := range ps.items {
		names = append(names, it.name)
	}
	list := p.current(names)
	p.mu.Unlock()
	s.reply(r.c, r.id, list)
}

// updateParams takes the scene's parameter table after a cycle: it names
// new elements' parameters, tells subscribers what changed and settles
// pending writes.
func (s *Server) updateParams(sc *scene.Scene) {
	p := &s.params
	els := sc.Elements()
	vals := sc.Values()
	type change struct {
		name string
		v    float64
	}
	var changes []change
	p.mu.Lock()
	for _, e := range els[p.known:] {
		for i, prm := range e.Params {
			name := e.Name + "." + prm.Name
			p.names = append(p.names, name)
			p.index[name] = e.Start + i
		}
	}
	p.known = len(els)
	old := len(p.values)
	for _, name := range p.names {
		idx := p.index[name]
		if idx >= len(vals) {
			continue
		}
		v := vals[idx]
		if idx >= old || math.Float64bits(p.values[idx]) != math.Float64bits(v) {
			changes = append(changes, change{name, v})
		}
	}
	p.values = append(p.values[:0], vals...)
	p.gen++
	p.mu.Unlock()
	// Pending writes are settled off the host's goroutine.
	select {
	case s.settle <- struct{}{}:
	default:
	}
	if len(changes) > 0 {
		s.mu.RLock()
		for c := range s.clients {
			for _, ch := range changes {
				c.paramUpdate(ch.name, ch.v)
			}
		}
		s.mu.RUnlock()
	}
}

// settleWorker settles pending writes after each Update: a write whose
// value shows is accepted; one that does not after Settle and two updates
// was refused by the host.
func (s *Server) settleWorker() {
	defer s.wg.Done()
	for {
		select {
		case <-s.done:
			return
		case <-s.settle:
			s.settlePending()
		}
	}
}

func (s *Server) settlePending() {
	p := &s.params
	type answer struct {
		c       *client
		id      string
		list    []parameter
		refused []string
	}
	var answers []answer
	p.mu.Lock()
	vals := p.values
	now := time.Now()
	kept := p.pending[:0]
	for _, ps := range p.pending {
		settled := p.gen-ps.gen0 >= 2 && now.Sub(ps.since) >= s.opts.Settle
		all := true
		var refused []string
		for k := range ps.items {
			it := &ps.items[k]
			if it.done {
				continue
			}
			if it.index < len(vals) && vals[it.index] == it.want {
				it.done = true
				p.waiting--
			} else if it.index >= len(vals) {
				// A new scene (a mirror rebuilt) without that value.
				it.done = true
				p.waiting--
				refused = append(refused, fmt.Sprintf("%s = %g (the scene was replaced)", it.name, it.want))
			} else if settled {
				it.done = true
				p.waiting--
				refused = append(refused, fmt.Sprintf("%s = %g (it stays %g)", it.name, it.want, vals[it.index]))
			} else {
				all = false
			}
		}
		if !all {
			kept = append(kept, ps)
			if len(refused) > 0 {
				answers = append(answers, answer{c: ps.c, refused: refused})
			}
			continue
		}
		names := make([]string, len(ps.items))
		for k, it := range ps.items {
			names[k] = it.name
		}
		answers = append(answers, answer{ps.c, ps.id, p.current(names), refused})
	}
	clear(p.pending[len(kept):])
	p.pending = kept
	p.mu.Unlock()

	for _, a := range answers {
		if len(a.refused) > 0 {
			s.setsRefused.Add(uint64(len(a.refused)))
			a.c.status(2, "setParameters: the host refused "+strings.Join(a.refused, ", "))
		}
		if a.list != nil {
			s.reply(a.c, a.id, a.list)
		}
	}
}

// number reads a JSON number: null, strings and the rest are refused (a
// null would otherwise read as 0).
func number(raw json.RawMessage, v *float64) bool {
	var x any
	if len(raw) == 0 || json.Unmarshal(raw, &x) != nil {
		return false
	}
	f, ok := x.(float64)
	*v = f
	return ok
}
