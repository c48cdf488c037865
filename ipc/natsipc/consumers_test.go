package natsipc_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/natsipc"
)

// A viewer that creates durable consumers on the change log (which no
// simvis client makes) has at most Limits.Consumers of them at once, and
// the host removes them: server memory stays bounded and new mirrors
// still attach. The bound is checked on what the server holds after each
// creation, since a sweep during the flood frees slots for more.
func TestViewerCannotPileUpConsumers(t *testing.T) {
	defer func(d time.Duration) { natsipc.SweepEvery = d }(natsipc.SweepEvery)
	// Long enough that 17 creations fit between two sweeps on a slow
	// machine, so the limit is reached; short enough to see the removal.
	natsipc.SweepEvery = time.Second
	srv := startServer(t, natsipc.ServerOptions{})
	serve(t, srv, natsipc.Limits{Consumers: 16}, nil)
	js := jetStreamOf(t, srv.URLFor(natsipc.RoleViewer))
	// The server's consumers are looked at with the host's rights: a
	// viewer may not list them.
	hjs := jetStreamOf(t, srv.URLFor(natsipc.RoleHost))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	durables := func() (int, error) {
		st, err := hjs.Stream(ctx, "SIMVIS_test")
		if err != nil {
			return 0, err
		}
		list := st.ListConsumers(ctx)
		n := 0
		for info := range list.Info() {
			if info.Config.Durable != "" {
				n++
			}
		}
		return n, list.Err()
	}
	made, refused, most := 0, 0, 0
	for i := 0; i < 64 && refused == 0; i++ {
		_, err := js.CreateConsumer(ctx, "SIMVIS_test", jetstream.ConsumerConfig{Durable: fmt.Sprintf("D%d", i)})
		if err != nil {
			refused++
			continue
		}
		made++
		n, err := durables()
		if err != nil {
			t.Fatalf("listing the consumers: %v", err)
		}
		most = max(most, n)
	}
	t.Logf("made %d durable consumers before one was refused; at most %d at once", made, most)
	if most > 16 || refused == 0 {
		t.Errorf("a viewer held %d durable consumers at once (%d made, %d refused), want at most 16 and a refusal", most, made, refused)
	}
	eventually(t, "the durable consumers removed", func() bool {
		n, err := durables()
		return err == nil && n == 0
	})
	// A client still attaches and follows the log.
	c, err := ipc.Dial(srv.URL() + "/test")
	if err != nil {
		t.Fatalf("a client after the flood: %v", err)
	}
	defer c.Close()
	m, err := ipc.NewMirrorWith(c, ipc.MirrorOptions{})
	if err != nil {
		t.Fatalf("a mirror after the flood: %v", err)
	}
	m.Close()
}
