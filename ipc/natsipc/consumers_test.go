package natsipc_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/natsipc"
)

// A viewer that creates durable consumers on the change log (which no
// simvis client makes) gets at most Limits.Consumers of them, and the host
// removes them: server memory stays bounded and new mirrors still attach.
func TestViewerCannotPileUpConsumers(t *testing.T) {
	defer func(d time.Duration) { natsipc.SweepEvery = d }(natsipc.SweepEvery)
	natsipc.SweepEvery = 50 * time.Millisecond
	srv := startServer(t, natsipc.ServerOptions{})
	serve(t, srv, natsipc.Limits{Consumers: 16}, nil)
	nc, err := nats.Connect(srv.URLFor(natsipc.RoleViewer), inboxOf(srv.URLFor(natsipc.RoleViewer)))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	made, refused := 0, 0
	for i := 0; i < 64; i++ {
		_, err := js.CreateConsumer(ctx, "SIMVIS_test", jetstream.ConsumerConfig{Durable: fmt.Sprintf("D%d", i)})
		if err != nil {
			refused++
			continue
		}
		made++
	}
	if made > 16 || refused == 0 {
		t.Errorf("a viewer made %d durable consumers (%d refused), want at most 16", made, refused)
	}
	t.Logf("made %d durable consumers, %d refused", made, refused)
	// The host removes them (looked at with the host's rights: a viewer
	// may not list consumers).
	hc, err := nats.Connect(srv.URLFor(natsipc.RoleHost))
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	hjs, err := jetstream.New(hc)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the durable consumers removed", func() bool {
		st, err := hjs.Stream(ctx, "SIMVIS_test")
		if err != nil {
			return false
		}
		list := st.ListConsumers(ctx)
		for info := range list.Info() {
			if info.Config.Durable != "" {
				return false
			}
		}
		return list.Err() == nil
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
