package cli

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/record"
	"github.com/simvis/simvis/scene"
)

// A mirror's recording across host restarts: a restart with the same
// scene records nothing again; a restart whose scene differs (another
// file, or without the part a client had added) is recorded whole after
// a Reset marker. play shows at each time the scene the mirror showed:
// it restarts its host where the recorded scene was replaced, also when
// seeking back across a replacement.
func TestMirrorRecordingAcrossHostRestarts(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "room.glb", func(m *models.Model) {
		m.AddNode(nil, "room", mgl64.Translate3D(0, 0, 1.5), models.Box("room", 8, 6, 3, [4]float32{1, 1, 1, 1}))
	})
	testkit.WriteModel(t, dir, "box.glb", func(m *models.Model) {
		m.AddNode(nil, "box", mgl64.Ident4(), models.Box("box", 0.6, 0.6, 0.6, [4]float32{1, 0, 0, 1}))
	})
	s1, s2 := filepath.Join(dir, "one.xml"), filepath.Join(dir, "two.xml")
	os.WriteFile(s1, []byte(`<scene>
  <part file="room.glb" name="ROOM"/>
  <part file="box.glb" name="A" insert_at="ROOM" pose_offset="2 0 1 0 0 0"/>
</scene>`), 0o644)
	os.WriteFile(s2, []byte(`<scene>
  <part file="room.glb" name="ROOM"/>
  <part file="box.glb" name="B" insert_at="ROOM"/>
  <element type="pose" name="P2" insert_at="B" x="0"/>
</scene>`), 0o644)
	shm := filepath.Join(dir, "simvis-host")
	host := func(file string) *ipc.Host {
		h, err := ipc.NewHost(shm, file, ipc.HostOptions{Rate: 10})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		return h
	}
	host(s1)
	c, err := ipc.Open(shm)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m, err := ipc.NewMirror(c, nil, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	file := filepath.Join(dir, "m.mcap")
	w, err := record.Create(file, record.Options{Meta: record.Meta{Rate: 10}})
	if err != nil {
		t.Fatal(err)
	}
	cycle := func(at float64) {
		t.Helper()
		if err := m.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := w.Cycle(m.Scene(), at); err != nil {
			t.Fatal(err)
		}
	}
	cycle(0)
	h := host(s1) // restarted with the same scene: nothing to record again
	cycle(0.1)
	if _, err := h.Execute(`<part file="box.glb" name="EXTRA" insert_at="ROOM" pose_offset="0 2 1 0 0 0"/>`, "client"); err != nil {
		t.Fatal(err)
	}
	h.Cycle()
	cycle(0.2)
	host(s1) // the same file, but without the client's EXTRA
	cycle(0.3)
	h = host(s2) // another scene
	cycle(0.4)
	x, err := c.Param("P2", "x")
	if err != nil {
		t.Fatal(err)
	}
	c.Set(x, 1.5)
	h.Cycle()
	cycle(0.5)
	if m.Rebuilds != 3 {
		t.Fatalf("%d rebuilds, want 3", m.Rebuilds)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	rec, err := record.Read(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ch := range rec.Changes {
		name := ch.Msg.XML[strings.Index(ch.Msg.XML, `name="`)+6:]
		got = append(got, fmt.Sprintf("%.1f %d %s %v", float64(ch.Time-rec.Meta.EpochNs)/1e9, ch.Msg.Seq, name[:strings.Index(name, `"`)], ch.Msg.Reset))
	}
	want := []string{"0.0 1 ROOM false", "0.0 2 A false", "0.2 3 EXTRA false",
		"0.3 1 ROOM true", "0.3 2 A false",
		"0.4 1 ROOM true", "0.4 2 B false", "0.4 3 P2 false"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("recorded changes:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(rec.Attachments) != 2 {
		t.Errorf("%d attachments, want room.glb and box.glb once each", len(rec.Attachments))
	}

	play := filepath.Join(dir, "simvis-player")
	cmd := exec.Command(os.Args[0], "play", file, "--paused", "--no-nats", "--shm", play)
	cmd.Env = append(os.Environ(), "SIMVIS_CLI_CHILD=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(prefix string) {
		t.Helper()
		select {
		case l := <-lines:
			if !strings.HasPrefix(l, prefix) {
				t.Fatalf("play: %q, want %q...\n%s", l, prefix, errOut.String())
			}
		case <-time.After(time.Minute):
			t.Fatalf("play: no line %q... in a minute\n%s", prefix, errOut.String())
		}
	}
	// The scene at each time: parts in the log, P2's x.
	showing := func(parts, x string) {
		t.Helper()
		waitFor(t, func() bool {
			code, out, _ := simvis(t, "log", "--shm", play)
			var names []string
			for _, l := range strings.Split(out, "\n") {
				if i := strings.Index(l, `<part `); i >= 0 {
					n := l[strings.Index(l, `name="`)+6:]
					names = append(names, n[:strings.Index(n, `"`)])
				}
			}
			if code != 0 || strings.Join(names, " ") != parts {
				return false
			}
			if x == "" {
				return true
			}
			code, out, _ = simvis(t, "elements", "--shm", play)
			return code == 0 && strings.Contains(out, "x="+x+" ")
		}, "the player showing "+parts+" "+x)
	}
	next("playing ")
	showing("ROOM A", "")
	fmt.Fprintln(stdin, "seek 0.25")
	next("play: paused at 0.250 s")
	showing("ROOM A EXTRA", "")
	// Steps of 0.1 s (10 Hz) cross the replacement at 0.3: the first step
	// after --paused plays the position itself, the second advances.
	fmt.Fprintln(stdin, "step 2")
	next("play: paused at 0.250 s")
	next("play: at 0.350 s the recorded scene was replaced")
	next("playing ")
	showing("ROOM A", "")
	fmt.Fprintln(stdin, "seek 0.5")
	next("play: paused, going to 0.500 s")
	next("play: at 0.500 s the recorded scene was replaced")
	next("playing ")
	showing("ROOM B", "1.5")
	fmt.Fprintln(stdin, "seek 0.2")
	next("play: paused, going to 0.200 s")
	next("play: at 0.200 s the recorded scene was replaced")
	next("playing ")
	showing("ROOM A EXTRA", "")
	// Played on from 0 (the same recorded scene: EXTRA stays, as any seek
	// back keeps commands), the host restarts at 0.3 and 0.4 and ends on
	// the last scene.
	fmt.Fprintln(stdin, "seek 0")
	next("play: paused at 0.000 s")
	fmt.Fprintln(stdin, "resume")
	var rest strings.Builder
	for l := range lines {
		rest.WriteString(l + "\n")
	}
	if err := cmd.Wait(); err != nil || strings.Count(rest.String(), "the recorded scene was replaced") != 2 || !strings.Contains(rest.String(), "played to 0.500 s") {
		t.Errorf("play: %v\n%s\n%s", err, rest.String(), errOut.String())
	}
}
