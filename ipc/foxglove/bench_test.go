package foxglove

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
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
