package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/live"
)

// A host serves the quickstart scene; a client moves the robot; the
// program's own loop sees the robot where the host put it.
func TestMirrorIntoOwnLoop(t *testing.T) {
	region := filepath.Join(t.TempDir(), "region")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- live.Serve(ctx, live.ServeOptions{Scene: "../../scenes/quickstart/scene.xml", Shm: region,
			NATS: live.NATSOptions{Off: true}}, io.Discard)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	var c *ipc.Client
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err = ipc.Open(region); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for param, v := range map[string]float64{"x": 1.25, "y": -0.5, "yaw": 33} {
		i, err := c.Param("R_POSE", param)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.SetConfirmed([]ipc.ValueWrite{{Index: i, Value: v}}, 5*time.Second, nil); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	if err := follow(region, "ROBOT", 2, time.Millisecond, &out); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("change %d: ROBOT at x 1.250 y -0.500 yaw 33.00\n", 4)
	if lines := strings.SplitAfter(out.String(), "\n"); len(lines) != 3 || lines[1] != want {
		t.Errorf("the loop printed %q, want its second line %q", out.String(), want)
	}
}
