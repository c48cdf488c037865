package foxglove

import (
	"fmt"
	"sync"
	"unicode/utf8"
)

// MaxEcho is the most bytes of a client's own input (a name, an op, an
// encoding, an origin) that an error message repeats; longer input is cut
// and its length given. MaxErrorText bounds a whole status or failure
// message (a host's refusal included).
const (
	MaxEcho      = 64
	MaxErrorText = 4096
)

// echo returns s for an error message: at most MaxEcho bytes of it, cut
// on a character boundary, with its length when cut.
func echo(s string) string {
	if len(s) <= MaxEcho {
		return s
	}
	cut := MaxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:cut], len(s))
}

// clip bounds a message sent to a client to MaxErrorText bytes.
func clip(s string) string {
	if len(s) <= MaxErrorText {
		return s
	}
	cut := MaxErrorText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes in all)", s[:cut], len(s))
}

// fairQueue holds what each connection asked of the host, in order per
// connection, and hands it out a connection at a time in turn: one
// connection's backlog never delays another's next item by more than one
// item of each other connection.
type fairQueue[T any] struct {
	mu    sync.Mutex
	q     map[*client][]T
	ready []*client
	wake  chan struct{}
}

func (f *fairQueue[T]) init() {
	f.q = map[*client][]T{}
	f.wake = make(chan struct{}, 1)
}

// push queues v for c unless c has max items waiting already; it returns
// how many c had waiting.
func (f *fairQueue[T]) push(c *client, v T, max int) (int, bool) {
	f.mu.Lock()
	n := len(f.q[c])
	if n >= max {
		f.mu.Unlock()
		return n, false
	}
	if n == 0 {
		f.ready = append(f.ready, c)
	}
	f.q[c] = append(f.q[c], v)
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
	return n, true
}

// pop takes the next item: the first of the connection whose turn it is.
func (f *fairQueue[T]) pop() (T, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.ready) > 0 {
		c := f.ready[0]
		f.ready[0] = nil
		f.ready = f.ready[1:]
		l := f.q[c]
		if len(l) == 0 {
			delete(f.q, c)
			continue
		}
		v := l[0]
		var zero T
		l[0] = zero
		if len(l) == 1 {
			delete(f.q, c)
		} else {
			f.q[c] = l[1:]
			f.ready = append(f.ready, c)
		}
		return v, true
	}
	var zero T
	return zero, false
}

// drop forgets a disconnected client's items.
func (f *fairQueue[T]) drop(c *client) {
	f.mu.Lock()
	delete(f.q, c)
	f.mu.Unlock()
}

// run hands items to do until the server closes.
func (f *fairQueue[T]) run(done <-chan struct{}, do func(T)) {
	for {
		select {
		case <-done:
			return
		case <-f.wake:
		}
		for {
			v, ok := f.pop()
			if !ok {
				break
			}
			do(v)
		}
	}
}
