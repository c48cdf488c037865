package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/simvis/simvis/live"
	"github.com/simvis/simvis/sensors"
)

// windowFlags are the flags of a live window (view without -o, serve and
// mirror with --window).
type windowFlags struct {
	o     live.WindowOptions
	cache bool
}

func (f *windowFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.o.Grid, "grid", true, "window: draw the ground grid and frame axes (key g)")
	fs.BoolVar(&f.o.Panel, "panel", true, "window: show the panel of elements and sensors (key Tab)")
	fs.StringVar(&f.o.Follow, "follow", "", "window: frame the f key follows (default: the first pose element's insertion point)")
	fs.StringVar(&f.o.Shots, "shots", ".", "window: directory for screenshots (key p)")
	fs.IntVar(&f.o.BenchFrames, "bench-frames", 0, "window: draw N frames as fast as possible (every one, unless --redraw-all=false), print frames per second and exit")
	fs.Float64Var(&f.o.MaxFPS, "max-fps", 60, "window: frames per second at most (0: no limit)")
	fs.BoolVar(&f.o.EveryFrame, "redraw-all", false, "window: draw every frame, even when nothing changed (the still meshes from the cache unless --cache=false)")
	fs.BoolVar(&f.cache, "cache", true, "window: draw the meshes that stand still once and only what moves over them each frame")
	fs.BoolVar(&f.o.Controls, "list-controls", false, "window: print each panel control's name, kind and place when the panel opens (for scripts driving it, e.g. with xdotool)")
	fs.StringVar(&f.o.Present, "present", "auto", "window: how frames reach the window: gl (GL swap), x11 (the viewer puts them, XShmPutImage), auto (x11 with a software GL such as llvmpipe)")
}

// options are the flags as live takes them. --bench-frames draws every
// frame it counts unless --redraw-all=false says otherwise: a picture that
// did not change is otherwise shown again without drawing, and the rate
// would not be a drawing rate.
func (f *windowFlags) options(fs *flag.FlagSet) *live.WindowOptions {
	o := f.o
	o.NoCache = !f.cache
	if o.BenchFrames > 0 && !flagGiven(fs, "redraw-all") {
		o.EveryFrame = true
	}
	return &o
}

func viewCommand() *command {
	var sf sceneFlags
	var wf windowFlags
	var wb webFlags
	var out, from, frame, size string
	var fov float64
	return &command{
		name: "view", args: "SCENE [-o FILE.png] [--from \"x y z roll pitch yaw\"] [--frame FRAME] [--size WxH] [--fov DEG] [--set E.P=V ...] [window flags] [budget flags]",
		short: "show the scene in a window, or render it for people into a PNG (-o)",
		summary: "Without -o, open a window on the X display (DISPLAY) showing the scene: drag with\n" +
			"the left button to orbit, with the right or middle one (or shift) to pan, scroll to\n" +
			"zoom; keys 1-9 look through a sensor, f follows a frame, r resets, o toggles\n" +
			"overlays, g the grid and axes, p writes a screenshot, Tab the panel, q closes\n" +
			"(docs/viewer.md). The panel sets element parameters on the local scene.\n" +
			"With -o, render the scene from the viewpoint into a PNG, as a viewer sees it: unlike\n" +
			"sensor captures it also draws geometry marked sensed=\"false\" (beams, scan points,\n" +
			"labels); sensors whose returns a scan element draws render first.\n" +
			"The viewpoint is a pose in FRAME (default world) that looks along its +x with +z up.",
		flags: func(fs *flag.FlagSet) {
			sf.register(fs)
			wf.register(fs)
			wb.register(fs)
			fs.StringVar(&out, "o", "", "output PNG file (without it: a window, or the page of --web)")
			viewFlags(fs, &from, &frame, &size, &fov, "")
		},
		run: func(fs *flag.FlagSet, args []string, w io.Writer) error {
			path, _, err := sceneArgs(args, 0)
			if err != nil {
				return err
			}
			if out != "" {
				if err := wantExt(out, "view writes PNG", ".png"); err != nil {
					return err
				}
			}
			vp, err := parseViewpoint(from, frame, size, fov)
			if err != nil {
				return err
			}
			wo := wf.options(fs)
			if err := wo.Check(); err != nil {
				return err
			}
			s, err := sf.load(path)
			if err != nil {
				return err
			}
			if wb.o.Addr != "" && out == "" {
				return viewWeb(path, sf, vp, wb, w)
			}
			if out == "" {
				return live.ViewWindow(s, "simvis view "+path, vp, wo, w)
			}
			r, err := sensors.NewRenderer()
			if err != nil {
				return err
			}
			defer r.Close()
			if err := sensors.RenderReturns(r, s); err != nil {
				return err
			}
			if err := mkdirFor(out); err != nil {
				return err
			}
			if err := vp.WritePNG(r, s, out); err != nil {
				return err
			}
			fmt.Fprintln(w, out)
			return nil
		},
	}
}

// viewWeb serves the scene to browsers until interrupted (view --web).
func viewWeb(path string, sf sceneFlags, vp live.Viewpoint, wb webFlags, w io.Writer) error {
	o, err := wb.options()
	if err != nil {
		return err
	}
	l, err := sf.limits.limits()
	if err != nil {
		return err
	}
	o.View = &vp
	ctx, stop := interrupted()
	defer stop()
	return live.ViewWeb(ctx, live.WebViewOptions{Scene: path, Limits: l, PackagePath: sf.limits.packages(), Values: sf.apply, Web: o}, w)
}
