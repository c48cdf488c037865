// Command mirrorloop mirrors a running host's scene into a Go program's
// own loop: each tick it brings the replica up to date with the host (its
// change log and values) and reads a frame's world pose from it. The
// target is a host's region name or a nats:// URL (docs/go.md).
//
//	mirrorloop default ROBOT
package main

import (
	"fmt"
	"io"
	"os"
	"time"

	_ "github.com/simvis/simvis/elements"
	"github.com/simvis/simvis/ipc"
	_ "github.com/simvis/simvis/ipc/natsipc" // nats:// targets
	"github.com/simvis/simvis/scene"
)

// follow prints frame's world pose each tick, ticks times.
func follow(target, frame string, ticks int, tick time.Duration, w io.Writer) error {
	c, err := ipc.Connect(target)
	if err != nil {
		return err
	}
	defer c.Close()
	m, err := ipc.NewMirrorWith(c, ipc.MirrorOptions{})
	if err != nil {
		return err
	}
	defer m.Close()
	for i := 0; i < ticks; i++ {
		if err := m.Sync(); err != nil {
			return err // the host went away (a restart is followed by a rebuild)
		}
		world, err := m.Scene().Transform(frame, scene.WorldFrame)
		if err != nil {
			return err
		}
		p := scene.PoseFromMatrix(world)
		fmt.Fprintf(w, "change %d: %s at x %.3f y %.3f yaw %.2f\n", m.Applied(), frame, p.X, p.Y, p.Yaw)
		time.Sleep(tick)
	}
	return nil
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: mirrorloop HOST FRAME")
		os.Exit(2)
	}
	if err := follow(os.Args[1], os.Args[2], 1<<30, 100*time.Millisecond, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
