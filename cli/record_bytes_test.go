package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// sensorMessages collects the sensor frames a NATS viewer receives, by
// subject and frame number: kind, description (the info header, or the
// message itself for the JSON kinds) and data, as they came.
type sensorMessages struct {
	mu     sync.Mutex
	frames map[string][3]string
}

func collectSensors(t *testing.T, nc *nats.Conn, name string) *sensorMessages {
	t.Helper()
	c := &sensorMessages{frames: map[string][3]string{}}
	if _, err := nc.Subscribe("simvis."+name+".sensor.>", func(m *nats.Msg) {
		desc := m.Header.Get("Simvis-Info")
		if desc == "" {
			desc = string(m.Data)
		}
		var st struct{ Stamp struct{ Frame int } }
		if err := json.Unmarshal([]byte(desc), &st); err != nil {
			t.Errorf("%s: %v", m.Subject, err)
			return
		}
		c.mu.Lock()
		c.frames[fmt.Sprintf("%s#%d", strings.TrimPrefix(m.Subject, "simvis."+name+"."), st.Stamp.Frame)] = [3]string{m.Header.Get("Simvis-Kind"), desc, string(m.Data)}
		c.mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return c
}

// A host's recording played back republishes, for every frame, the bytes
// the host published (kind, description and data): each sensor kind the
// recording scene has (depth image, scan, 3D cloud, PSD reading), ranges
// beyond the maximum (null) included.
func TestPlayRepublishesWhatTheHostPublished(t *testing.T) {
	scenePath := recordScene(t)
	file := filepath.Join(t.TempDir(), "a.mcap")
	host := fmt.Sprintf("bytesh%d", os.Getpid())
	_, stop := startServeProc(t, scenePath, "--shm", host, "--listen", "127.0.0.1:0", "--record", file, "--rate", "20")
	_, after, _ := strings.Cut(firstLine, " and ")
	url := strings.TrimSuffix(strings.Fields(after)[0], ":")
	live := collectSensors(t, connectAsViewer(t, url[:strings.LastIndex(url, "/")], host), host)
	time.Sleep(1500 * time.Millisecond)
	stop()

	player := fmt.Sprintf("bytesp%d", os.Getpid())
	p := startPlayer(t, file, "--shm", player, "--listen", "127.0.0.1:0", "--fast")
	played := collectSensors(t, p.viewer(t, player), player)
	fmt.Fprintln(p.stdin, "resume")
	for p.lines.Scan() && !strings.HasPrefix(p.lines.Text(), "played to") {
	}
	time.Sleep(200 * time.Millisecond) // the last frames in flight

	live.mu.Lock()
	played.mu.Lock()
	defer live.mu.Unlock()
	defer played.mu.Unlock()
	same := map[string]int{}
	for key, want := range live.frames {
		got, ok := played.frames[key]
		if !ok {
			t.Errorf("%s: published live, not by the player", key)
			continue
		}
		for i, what := range []string{"kind", "description", "data"} {
			if got[i] != want[i] {
				t.Errorf("%s: the player's %s differs from the host's:\n%.300q\n%.300q", key, what, got[i], want[i])
			}
		}
		same[strings.Split(key, "#")[0]]++
	}
	for _, sensor := range []string{"DEPTH", "SCAN", "CLOUD", "PSD"} {
		if same["sensor."+sensor] < 10 {
			t.Errorf("sensor %s: %d frames compared (want 10 or more of the host's ~30)", sensor, same["sensor."+sensor])
		}
	}
}
