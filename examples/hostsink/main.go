// Command hostsink runs a scene as a host from Go (simvis serve's
// live.Serve) with its own element type, "spin" (turns what follows its
// insertion point about z), and its own sink (each camera frame's mean).
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/go-gl/mathgl/mgl64"
	_ "github.com/simvis/simvis/elements"
	"github.com/simvis/simvis/live"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

func init() { scene.RegisterElement("spin", newSpin) }

type spin struct{ turn *scene.Node } // the transformation it inserted

func newSpin(ctx *scene.Context) (scene.Element, error) {
	return &spin{turn: ctx.InsertTransform(mgl64.Ident4())}, nil
}

func (s *spin) Params() []scene.Param { return []scene.Param{{Name: "angle"}} } // degrees

func (s *spin) Apply(v []float64) error {
	s.turn.SetLocal(mgl64.HomogRotate3DZ(mgl64.DegToRad(v[0])))
	return nil
}

type brightness struct{ w io.Writer } // a live.Sink: each camera image's mean

func (b brightness) Frame(se *scene.SensorEntry, f *sensors.Frame, st *sensors.Stamp) error {
	img, _ := f.ImageData()
	if img == nil {
		return nil // not a camera
	}
	sum := 0
	for i := 0; i < len(img.Pix); i += 4 { // red, green, blue; not alpha
		sum += int(img.Pix[i]) + int(img.Pix[i+1]) + int(img.Pix[i+2])
	}
	_, err := fmt.Fprintf(b.w, "%s frame %d at %.3f s: mean %.1f\n", se.Name, st.Frame, st.Time, float64(sum)/float64(3*len(img.Pix)/4))
	return err
}

func run(sceneFile, shm string, w io.Writer) error {
	o := live.ServeOptions{Scene: sceneFile, Shm: shm, Cycles: 30, NATS: live.NATSOptions{Off: true}, Sinks: []live.Sink{brightness{w}}}
	return live.Serve(context.Background(), o, w)
}

func main() {
	if err := run(os.Args[1], "hostsink", os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1) // usage: hostsink SCENE.xml
	}
}
