package cli

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/live"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// BenchmarkFoxglove measures `serve --foxglove` on loopback: a host with
// the quickstart world, a robot and a 181-beam laser scanning every cycle,
// and N clients (in this process) subscribed to the scan, /tf and the
// values. fast: cycles back to back (host cycle rate and frames per second
// each client receives); 30Hz: a real-time host (latency from publishing a
// scan to a client reading it). Run with -benchtime 1x: each case runs 3 s.
//
//	go test -run XXX -bench Foxglove -benchtime 1x ./cli/
func BenchmarkFoxglove(b *testing.B) {
	for _, mode := range []string{"fast", "30Hz"} {
		for _, n := range []int{-1, 0, 1, 10} {
			name := fmt.Sprintf("%s/clients=%d", mode, n)
			if n < 0 {
				name = mode + "/no-server"
			}
			b.Run(name, func(b *testing.B) { benchFoxglove(b, mode == "fast", n) })
		}
	}
}

func benchFoxglove(b *testing.B, fast bool, clients int) {
	dir := b.TempDir()
	sceneFile := benchScene(b, dir)
	h, err := ipc.NewHost(filepath.Join(dir, "region"), sceneFile, ipc.HostOptions{Rate: 30, Fast: fast, Warnings: &strings.Builder{}})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	// clients < 0: no server at all, the host's own rate.
	var fox *live.Foxglove
	if clients >= 0 {
		if fox, err = live.StartFoxglove(h, live.FoxgloveOptions{Addr: "127.0.0.1:0"}, "simvis serve", nil, func(string, string, ...any) {}); err != nil {
			b.Fatal(err)
		}
		defer fox.Close()
	}
	clients = max(clients, 0)
	var sentMu sync.Mutex
	sent := map[uint64]time.Time{} // scan stamp -> when it was published
	sink := live.SinkFunc(func(se *scene.SensorEntry, f *sensors.Frame, st *sensors.Stamp) error {
		sentMu.Lock()
		sent[uint64(st.Time*1e9)] = time.Now()
		sentMu.Unlock()
		if fox == nil {
			return nil
		}
		return fox.Frame(se, f, st)
	})
	hs, err := live.NewLoop(h.Scene, sink, 30, func(string, string, ...any) {})
	if err != nil {
		b.Skip(err)
	}
	defer hs.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// One cycle first, so that the scan's channel exists.
	if err := h.Run(ctx, 1, func(_ int, t time.Duration) error { hs.Cycle(h.Scene, t.Seconds()); return nil }); err != nil {
		b.Fatal(err)
	}
	type result struct {
		scans int
		lat   []time.Duration
	}
	results := make([]result, clients)
	var wg sync.WaitGroup
	ready := make(chan struct{}, clients)
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			conn, _, err := websocket.Dial(ctx, fox.URL(), &websocket.DialOptions{Subprotocols: []string{"foxglove.websocket.v1"}})
			if err != nil {
				b.Error(err)
				ready <- struct{}{}
				return
			}
			defer conn.CloseNow()
			conn.SetReadLimit(64 << 20)
			scanSub := uint32(0)
			for scanSub == 0 {
				_, data, err := conn.Read(ctx)
				if err != nil {
					b.Error(err)
					ready <- struct{}{}
					return
				}
				var m struct {
					Op       string
					Channels []struct {
						ID    uint32
						Topic string
					}
				}
				json.Unmarshal(data, &m)
				for _, ch := range m.Channels {
					if ch.Topic == "/SCAN/scan" || ch.Topic == "/tf" || ch.Topic == "/simvis/values" {
						sub, _ := json.Marshal(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": ch.ID, "channelId": ch.ID}}})
						conn.Write(ctx, websocket.MessageText, sub)
						if ch.Topic == "/SCAN/scan" {
							scanSub = ch.ID
						}
					}
				}
			}
			ready <- struct{}{}
			for {
				typ, data, err := conn.Read(ctx)
				if err != nil {
					return
				}
				now := time.Now()
				if typ != websocket.MessageBinary || data[0] != 1 || binary.LittleEndian.Uint32(data[1:]) != scanSub {
					continue
				}
				sentMu.Lock()
				at, ok := sent[binary.LittleEndian.Uint64(data[5:])]
				sentMu.Unlock()
				results[i].scans++
				if ok {
					results[i].lat = append(results[i].lat, now.Sub(at))
				}
			}
		}(i)
	}
	for i := 0; i < clients; i++ {
		<-ready
	}
	time.Sleep(200 * time.Millisecond) // the subscriptions are in
	start := time.Now()
	c0 := h.Region.Cycles()
	runCtx, stop := context.WithTimeout(ctx, 3*time.Second)
	err = h.Run(runCtx, 0, func(_ int, t time.Duration) error { hs.Cycle(h.Scene, t.Seconds()); return nil })
	stop()
	elapsed := time.Since(start)
	cycles := h.Region.Cycles() - c0
	time.Sleep(100 * time.Millisecond) // the last frames arrive
	cancel()
	wg.Wait()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(cycles)/elapsed.Seconds(), "cycles/s")
	if fox == nil || clients == 0 {
		return
	}
	var all []time.Duration
	scans := 0
	for _, r := range results {
		scans += r.scans
		all = append(all, r.lat...)
	}
	slices.Sort(all)
	b.ReportMetric(float64(scans)/float64(clients)/elapsed.Seconds(), "scans/s/client")
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
	}
	st := fox.Stats()
	b.ReportMetric(float64(st.Dropped)/float64(clients)/elapsed.Seconds(), "dropped/s/client")
}

// benchScene is the test scene with the laser scanning every cycle.
func benchScene(b *testing.B, dir string) string {
	return foxgloveSceneIn(b, dir, "")
}

// BenchmarkFoxgloveCycle is the server's work in one host cycle of the
// benchmark scene with no client: transforms, parameters, scene, values.
func BenchmarkFoxgloveCycle(b *testing.B) {
	dir := b.TempDir()
	h, err := ipc.NewHost(filepath.Join(dir, "region"), benchScene(b, dir), ipc.HostOptions{Rate: 30, Warnings: &strings.Builder{}})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	fox, err := live.StartFoxglove(h, live.FoxgloveOptions{Addr: "127.0.0.1:0"}, "simvis serve", nil, func(string, string, ...any) {})
	if err != nil {
		b.Fatal(err)
	}
	defer fox.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fox.Update(h.Scene, time.Duration(i)*time.Millisecond)
	}
}
