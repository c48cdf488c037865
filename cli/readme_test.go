package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simvis/simvis/internal/testkit"
)

// tourBlocks returns the shell blocks of a Markdown text whose fence is
// marked "sh tour" (```sh tour), in order: the README's tour. Other blocks
// (```sh for `make test`, which must not run inside the tests) are left.
func tourBlocks(markdown string) []string {
	var blocks []string
	var cur *strings.Builder
	sc := bufio.NewScanner(strings.NewReader(markdown))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```sh tour":
			cur = new(strings.Builder)
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	return blocks
}

func TestTourBlocks(t *testing.T) {
	md := "# x\n```sh\nmake test\n```\ntext\n```sh tour\nsimvis a\nsimvis b &\n```\n```go\nx\n```\n```sh tour\nsimvis c\n```\n"
	got := tourBlocks(md)
	if len(got) != 2 || got[0] != "simvis a\nsimvis b &\n" || got[1] != "simvis c\n" {
		t.Errorf("tourBlocks: %q", got)
	}
}

// The README's five-minute tour runs as written: every ```sh tour block of
// README.md, in order, by bash with -e (a failing command fails the test),
// in a fresh directory that holds the repository's directories (scenes,
// examples, ipc, ...) as links, with a simvis built from this checkout
// first on the PATH, go commands resolving the module through a go.work
// file, and SIMVIS_SHM naming a region of its own so that the tour's host
// never meets another. The files the tour's text names must be there after.
func TestReadmeTour(t *testing.T) {
	if testing.Short() {
		t.Skip("the tour renders scenes and runs a host for several seconds")
	}
	for _, tool := range []string{"bash", "go", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the tour needs %s: %v", tool, err)
		}
	}
	root := testkit.RepoRoot()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := tourBlocks(string(readme))
	if len(blocks) < 6 {
		t.Fatalf("README.md has %d tour blocks (```sh tour), want the tour's six at least", len(blocks))
	}

	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "simvis"), "./cmd/simvis")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building simvis: %v\n%s", err, out)
	}
	dir := t.TempDir()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		// No go.mod: go commands find the module through go.work, so that
		// they build from the checkout's own directories (and its cache).
		switch e.Name() {
		case "go.mod", "go.sum", "out", "bin", ".git":
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	if goVersion == nil {
		t.Fatal("go.mod has no go line")
	}
	work := filepath.Join(dir, "go.work")
	if err := os.WriteFile(work, []byte(fmt.Sprintf("go %s\n\nuse %s\n", goVersion[1], root)), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		fmt.Sprintf("SIMVIS_SHM=readme-tour-%d", os.Getpid()), "GOWORK="+work)
	if os.Getenv("DISPLAY") == "" {
		// The tour's viewer step opens a window: on a virtual display
		// where the machine has none.
		env = append(env, "DISPLAY="+testkit.Xvfb(t, 1280, 800))
	}

	for i, block := range blocks {
		cmd := exec.Command("bash", "-e", "-o", "pipefail", "-c", block)
		cmd.Dir, cmd.Env = dir, env
		// Its own process group: a host it left running is ended with it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(4 * time.Minute):
			err = fmt.Errorf("still running after 4 minutes")
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if err != nil {
			t.Fatalf("tour block %d failed (%v) after %v:\n%s\noutput:\n%s", i+1, err, time.Since(start).Round(time.Millisecond), block, out.String())
		}
		t.Logf("tour block %d: %v", i+1, time.Since(start).Round(time.Millisecond))
	}
	for _, f := range []string{
		"out/showcase/MAST_CAM.png", "out/showcase/MAST_CAM.json", "out/showcase/MAST_LIDAR.pcd", "out/showcase/FRONT_IR.psd.json",
		"out/marvin/DEPTH.preview.png", "out/pan/MAST_CAM_0000.png", "out/pan/MAST_CAM_0004.png", "out/showcase/view.png",
		"out/showcase.glb", "out/live/ROBOT_CAM.png", "out/view/view_0009.png", "out/door/DOOR_CAM.png",
		"out/marvin.mcap", "out/replay/CAMERA_0019.png",
	} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the tour's text names %s: %v", f, err)
		}
	}
}
