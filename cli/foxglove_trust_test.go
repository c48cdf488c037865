package cli

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/foxglove"
)

// foxTry connects to url (a token in it or not) and tries to drive: it
// sets R_POSE.yaw and calls /simvis/request to add an element. It returns
// the role the server gave, the setParameters reply's value and the first
// status, and the call's outcome.
type foxTried struct {
	Role, SetStatus, Call string
	SetValue              float64
}

func foxTry(url string, yaw float64, element string) (foxTried, error) {
	var out foxTried
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{foxglove.Subprotocol}})
	if err != nil {
		return out, err
	}
	defer conn.CloseNow()
	conn.SetReadLimit(64 << 20)
	write := func(typ websocket.MessageType, data []byte) error { return conn.Write(ctx, typ, data) }
	sent := false
	var svc uint32
	gotSet, gotCall := false, false
	for !(gotSet && gotCall) {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			return out, err
		}
		if typ == websocket.MessageBinary {
			if len(data) > 0 && data[0] == 3 {
				out.Call, gotCall = "ok: "+string(data[17:]), true
			}
			continue
		}
		var m map[string]any
		json.Unmarshal(data, &m)
		switch m["op"] {
		case "serverInfo":
			out.Role = fmt.Sprint(m["metadata"].(map[string]any)["role"])
		case "advertiseServices":
			for _, sv := range m["services"].([]any) {
				if s := sv.(map[string]any); s["name"] == "/simvis/request" {
					svc = uint32(s["id"].(float64))
				}
			}
		case "status":
			if out.SetStatus == "" {
				out.SetStatus = fmt.Sprint(m["message"])
			}
		case "parameterValues":
			if m["id"] == "try" {
				if ps := m["parameters"].([]any); len(ps) == 1 {
					out.SetValue = ps[0].(map[string]any)["value"].(float64)
				}
				gotSet = true
			}
		case "serviceCallFailure":
			out.Call, gotCall = "failed: "+fmt.Sprint(m["message"]), true
		}
		if !sent && out.Role != "" && svc != 0 {
			sent = true
			set, _ := json.Marshal(map[string]any{"op": "setParameters", "id": "try", "parameters": []any{map[string]any{"name": "R_POSE.yaw", "value": yaw}}})
			if err := write(websocket.MessageText, set); err != nil {
				return out, err
			}
			body, _ := json.Marshal(map[string]string{"xml": element})
			msg := make([]byte, 13, 13+4+len(body))
			msg[0] = 2
			binary.LittleEndian.PutUint32(msg[1:], svc)
			binary.LittleEndian.PutUint32(msg[5:], 1)
			binary.LittleEndian.PutUint32(msg[9:], 4)
			if err := write(websocket.MessageBinary, append(append(msg, "json"...), body...)); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// TestFoxgloveOtherUserHelper is the second user's side of
// TestFoxgloveOtherUserOnlyWatches, run as nobody in a copy of this test
// binary; it does nothing in a normal run.
func TestFoxgloveOtherUserHelper(t *testing.T) {
	url := os.Getenv("SIMVIS_FOX_OTHER_USER")
	if url == "" {
		t.Skip("the helper of TestFoxgloveOtherUserOnlyWatches")
	}
	res := map[string]any{"uid": os.Getuid()}
	// The owner's token file is not this user's to read.
	if du, err := foxglove.DriverURL(url); err == nil {
		res["driverURL"] = du
	}
	if _, err := os.ReadFile(os.Getenv("SIMVIS_FOX_TOKEN_FILE")); err == nil {
		res["readTokenFile"] = true
	}
	tried, err := foxTry(url, 77, `<element type="switch" name="INTRUDER" insert_at="ROOT"/>`)
	res["tried"], res["err"] = tried, fmt.Sprint(err)
	b, _ := json.Marshal(res)
	fmt.Println("FOXHELPER " + string(b))
}

// Finding 5 of issue 29: another local user connecting to a tokenless
// loopback `serve --foxglove` only watches: its setParameters and its
// request are refused, and it cannot read the driver token, which the
// host made up, wrote 0600 beside its region and which the owner's tools
// find (foxglove.DriverURL) and drive with.
func TestFoxgloveOtherUserOnlyWatches(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a client as another user")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv")
	}
	shm := fmt.Sprintf("foxu-%d", os.Getpid())
	stop := startServe(t, foxgloveScene(t), "--shm", shm, "--no-nats", "--foxglove", "127.0.0.1:0")
	defer stop()
	url := wsURL.FindString(firstLine)
	tokenFile := ipc.Path(shm) + ".foxglove"
	st, err := os.Stat(tokenFile)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %v %v, want mode 0600", tokenFile, st, err)
	}
	// The helper runs from a copy of this binary that nobody may execute.
	dir, err := os.MkdirTemp("", "simvis-foxu-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "cli.test")
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(dst, src)
	src.Close()
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups", bin, "-test.run=^TestFoxgloveOtherUserHelper$", "-test.v")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "TMPDIR=" + dir, "SIMVIS_FOX_OTHER_USER=" + url, "SIMVIS_FOX_TOKEN_FILE=" + tokenFile}
	out, err := cmd.CombinedOutput()
	var line string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "FOXHELPER ") {
			line = strings.TrimPrefix(l, "FOXHELPER ")
		}
	}
	if line == "" {
		t.Fatalf("helper as nobody: %v\n%s", err, out)
	}
	var res struct {
		UID           int
		DriverURL     string
		ReadTokenFile bool
		Tried         foxTried
		Err           string
	}
	if err := json.Unmarshal([]byte(line), &res); err != nil {
		t.Fatal(err)
	}
	t.Logf("as nobody: %s", line)
	if res.UID == 0 {
		t.Fatalf("the helper ran as root")
	}
	if res.DriverURL != "" || res.ReadTokenFile {
		t.Errorf("another user found the driver token: %+v", res)
	}
	if tr := res.Tried; res.Err != "<nil>" || tr.Role != "viewer" || !strings.Contains(tr.SetStatus, "viewer token may only subscribe") ||
		tr.SetValue != 20 || !strings.Contains(tr.Call, "failed: /simvis/request: refused: a viewer") {
		t.Errorf("another user without a token: %+v %s, want a viewer refused both", tr, res.Err)
	}
	// The owner's tools find the token and drive.
	du, err := foxglove.DriverURL(url)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := foxTry(du, 55, `<element type="switch" name="OWNERS" insert_at="ROOT"/>`)
	if err != nil || tr.Role != "driver" || tr.SetValue != 55 || !strings.HasPrefix(tr.Call, "ok: ") {
		t.Errorf("the owner with the token: %+v %v, want a driver whose write and call are taken", tr, err)
	}
	c, err := ipc.Open(shm)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Param("INTRUDER", "on"); err == nil {
		t.Error("the other user's element was added")
	}
	if _, err := c.Param("OWNERS", "on"); err != nil {
		t.Errorf("the owner's element: %v", err)
	}
	summary := stop()
	if _, err := os.Stat(tokenFile); err == nil {
		t.Errorf("%s left behind after the host stopped\n%s", tokenFile, summary)
	}
}
