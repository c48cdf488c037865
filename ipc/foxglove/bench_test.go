package foxglove

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/simvis/simvis/scene"
)

// BenchmarkServerFrames is the server alone on loopback: one publisher
// offering frames of a size as fast as it can for 2 s (yielding after
// each) to N clients that read as fast as they can (in this process). It
// reports the frames each client received per second, the frames published
// per second (the publisher never waits for a client: latest wins). At
// this saturation the socket buffers hold many frames, so latency is
// measured with a host at its rate instead (cli's BenchmarkFoxglove).
//
//	go test -run XXX -bench ServerFrames -benchtime 1x ./ipc/foxglove/
func BenchmarkServerFrames(b *testing.B) {
	for _, size := range []int{1 << 10, 1 << 20} {
		for _, n := range []int{1, 10} {
			b.Run(fmt.Sprintf("%dKiB/clients=%d", size>>10, n), func(b *testing.B) { benchFrames(b, size, n) })
		}
	}
}

func benchFrames(b *testing.B, size, clients int) {
	s, err := Listen(Options{Addr: "127.0.0.1:0", MaxClients: clients}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	id := s.Advertise(Channel{Topic: "/x", Encoding: "json", SchemaName: "x"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make([]int, clients)
	var wg, ready sync.WaitGroup
	for i := 0; i < clients; i++ {
		wg.Add(1)
		ready.Add(1)
		go func(i int) {
			defer wg.Done()
			conn, _, err := websocket.Dial(ctx, s.URL(), &websocket.DialOptions{Subprotocols: []string{Subprotocol}})
			if err != nil {
				b.Error(err)
				ready.Done()
				return
			}
			defer conn.CloseNow()
			conn.SetReadLimit(64 << 20)
			sub := fmt.Appendf(nil, `{"op":"subscribe","subscriptions":[{"id":1,"channelId":%d}]}`, id)
			conn.Write(ctx, websocket.MessageText, sub)
			conn.Write(ctx, websocket.MessageText, []byte(`{"op":"getParameters","parameterNames":[],"id":"s"}`))
			for {
				typ, data, err := conn.Read(ctx)
				if err != nil {
					ready.Done()
					return
				}
				if typ == websocket.MessageText && bytes.Contains(data, []byte(`"op":"parameterValues"`)) {
					break // subscribed
				}
			}
			ready.Done()
			for {
				typ, data, err := conn.Read(ctx)
				if err != nil {
					return
				}
				if typ == websocket.MessageBinary && data[0] == 1 {
					got[i]++
				}
			}
		}(i)
	}
	ready.Wait()
	payload := make([]byte, size)
	published := 0
	t0 := time.Now()
	for time.Since(t0) < 2*time.Second {
		s.Publish(id, uint64(published), payload)
		published++
		runtime.Gosched() // a producer that also lets the writers run on 2 cores
	}
	elapsed := time.Since(t0)
	time.Sleep(100 * time.Millisecond)
	cancel()
	wg.Wait()
	total := 0
	for _, g := range got {
		total += g
	}
	b.ReportMetric(float64(published)/elapsed.Seconds(), "published/s")
	b.ReportMetric(float64(total)/float64(clients)/elapsed.Seconds(), "frames/s/client")
	b.ReportMetric(float64(total)*float64(size)/elapsed.Seconds()/1e6, "MB/s-total")
}

// BenchmarkRestyle is one scene message that a color change made, on the
// RAVON scene's parts: the foliage opacity changes every iteration (the clock past
// StyleInterval each time), so each one recolors and encodes the leaves'
// model anew (its textures encoded as PNG again, most of the time) and
// marshals every part. It reports the size of a message with every entity (what a new subscriber gets); a client moving the
// slider gets at most 4 of these a second.
//
//	go test -run XXX -bench Restyle ./ipc/foxglove/
func BenchmarkRestyle(b *testing.B) {
	s, err := Listen(Options{Addr: "127.0.0.1:0"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	// The RAVON scene's parts and foliage element, without its sensors
	// (this package knows none).
	dir := b.TempDir()
	for _, f := range []string{"terrain.glb", "sky.glb", "foliage.glb", "ravon.glb"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "scenes", "ravon", f))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	file := filepath.Join(dir, "scene.xml")
	err = os.WriteFile(file, []byte(`<scene>
  <part file="terrain.glb" name="TERRAIN"/>
  <part file="sky.glb" name="SKY" insert_at="TERRAIN"/>
  <part file="foliage.glb" name="FOLIAGE" insert_at="TERRAIN"/>
  <element type="foliage" name="LEAVES" insert_at="FOLIAGE" opacity="1"/>
  <part file="ravon.glb" name="RAVON" insert_at="TERRAIN"/>
</scene>`), 0o644)
	if err != nil {
		b.Fatal(err)
	}
	sc, err := scene.Load(file, scene.Options{})
	if err != nil {
		b.Fatal(err)
	}
	clock := time.Unix(0, 0)
	s.scene.now = func() time.Time { return clock }
	s.Update(sc, 0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := sc.Set("LEAVES", "opacity", 0.2+0.6*float64(i%100)/100); err != nil {
			b.Fatal(err)
		}
		if err := sc.Update(); err != nil {
			b.Fatal(err)
		}
		clock = clock.Add(time.Second)
		s.Update(sc, uint64(i+1))
		s.flushScene() // the builder encodes off the host's goroutine
		if f, _ := s.latest(s.scene.ids[0]); f == nil || f.ts != uint64(i+1) {
			b.Fatal("no scene message for the change")
		}
	}
	s.mu.RLock()
	var size int
	for _, e := range s.snap.entities {
		size += len(e.prefix) + len(e.suffix)
		if e.blob != nil {
			size += len(e.blob.b64)
		}
	}
	s.mu.RUnlock()
	b.ReportMetric(float64(size)/1e6, "MB/msg")
}
