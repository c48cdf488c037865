package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "github.com/simvis/simvis/elements"
	"github.com/simvis/simvis/live"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
	"github.com/simvis/simvis/sensors/ros2"
)

type command struct {
	name, args string
	short      string // one line for the command list
	summary    string // the full description for 'simvis help COMMAND'
	run        func(fs *flag.FlagSet, args []string, stdout io.Writer) error
	flags      func(fs *flag.FlagSet)
}

// commandTable makes each command, in the order help lists them. Each
// run makes its command afresh, so no flag value outlives a run.
var commandTable = []func() *command{
	inspectCommand,
	captureCommand,
	exportCommand,
	framesCommand,
	benchCommand,
	serveCommand,
	elementsCommand,
	setCommand,
	requestCommand,
	logCommand,
	mirrorCommand,
	benchIpcCommand,
	infoCommand,
	playCommand,
	versionCommand,
	viewCommand,
}

// commands returns every command, made afresh.
func commands() []*command {
	list := make([]*command, len(commandTable))
	for i, mk := range commandTable {
		list[i] = mk()
	}
	return list
}

// warnings receives what long-running commands report on the side (host
// overruns, rejected values); Main points it at its stderr.
var warnings io.Writer = os.Stderr

// usageError is an error in the command line itself: it exits with 2 and
// repeats the command's usage line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// Main runs the simvis command line with args (without the program name) and
// returns the process exit code: 0 success, 1 failure, 2 bad usage.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			if c := find(args[1]); c != nil {
				usage(c, stdout)
				return 0
			}
			fmt.Fprintf(stderr, "simvis: unknown command %q\n", args[1])
			return 2
		}
		help(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	warnings = stderr
	c := find(args[0])
	if c == nil {
		fmt.Fprintf(stderr, "simvis: unknown command %q (run 'simvis help')\n", args[0])
		return 2
	}
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if c.flags != nil {
		c.flags(fs)
	}
	pos, err := parseInterspersed(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		usage(c, stdout)
		return 0
	}
	if err == nil {
		err = c.run(fs, pos, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "simvis %s: %v\n", c.name, err)
		ue, oe := (*usageError)(nil), (*live.OptionError)(nil)
		if errors.As(err, &ue) || errors.As(err, &oe) {
			fmt.Fprintf(stderr, "usage: simvis %s %s\n", c.name, c.args)
			return 2
		}
		return 1
	}
	return 0
}

// parseInterspersed lets flags stand before or after positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usagef("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func find(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

func help(w io.Writer) {
	fmt.Fprint(w, `simvis: scene-graph visualization and sensor simulation for robots.

usage: simvis COMMAND [flags] [SCENE] [args]

commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.short)
	}
	fmt.Fprint(w, "\nRun 'simvis help COMMAND' or 'simvis COMMAND -h' for a command's flags.\n"+
		"Budget flags (--max-parts, --max-vertices, --max-triangles, --max-nodes, --max-model-mib,\n"+
		"--max-image-mpixels) bound what one scene command may load, on every command that loads scenes.\n")
}

func usage(c *command, w io.Writer) {
	fmt.Fprintf(w, "usage: simvis %s %s\n\n%s\n", c.name, c.args, c.summary)
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	if c.flags != nil {
		c.flags(fs)
	}
	fs.SetOutput(w)
	fmt.Fprintln(w, "\nflags (before or after the other arguments):")
	fs.PrintDefaults()
}

// setFlags collects repeated --set ELEMENT.PARAM=VALUE.
type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, " ") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

// sceneFlags are the flags every command that loads a scene has.
type sceneFlags struct {
	sets   setFlags
	limits limitFlags
}

func (f *sceneFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.sets, "set", "set an element parameter, ELEMENT.PARAM=VALUE (repeatable)")
	f.limits.register(fs)
}

// loadScene is scene.Load; tests see through it what a command asks for.
var loadScene = scene.Load

// load reads the scene within the budget flags and applies --set values.
func (f *sceneFlags) load(path string) (*scene.Scene, error) {
	l, err := f.limits.limits()
	if err != nil {
		return nil, err
	}
	s, err := loadScene(path, scene.Options{Limits: l, PackagePath: f.limits.packages()})
	if err != nil {
		return nil, withLimitHint(err)
	}
	return s, f.apply(s)
}

// apply applies the --set values to s.
func (f *sceneFlags) apply(s *scene.Scene) error {
	for _, a := range f.sets {
		name, param, v, err := parseSet("--set ", a)
		if err != nil {
			return err
		}
		if err := s.Set(name, param, v); err != nil {
			return fmt.Errorf("--set %s: %w", a, err)
		}
	}
	return s.Update()
}

// parseSet splits ELEMENT.PARAM=VALUE; element names hold no dots. Errors
// start with what, the flag the argument came with ("" for none).
func parseSet(what, a string) (element, param string, v float64, err error) {
	lhs, val, ok := strings.Cut(a, "=")
	dot := strings.LastIndex(lhs, ".")
	if !ok || dot <= 0 || dot == len(lhs)-1 {
		return "", "", 0, usagef("%s%q: want ELEMENT.PARAM=VALUE", what, a)
	}
	v, err = strconv.ParseFloat(strings.TrimSpace(val), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return "", "", 0, fmt.Errorf("%s%s: %q is not a finite number", what, a, val)
	}
	return lhs[:dot], lhs[dot+1:], v, nil
}

// sceneArgs splits the positional arguments into the scene file and at
// most maxRest further arguments.
func sceneArgs(args []string, maxRest int) (string, []string, error) {
	if len(args) == 0 {
		return "", nil, usagef("no scene file given")
	}
	if len(args)-1 > maxRest {
		return "", nil, usagef("unexpected argument %q", args[1+maxRest])
	}
	return args[0], args[1:], nil
}

func inspectCommand() *command {
	var sf sceneFlags
	var asJSON bool
	return &command{
		name: "inspect", args: "[--json] [--set E.P=V ...] SCENE [budget flags]",
		short:   "print the scene graph, elements, sensors and mesh sharing",
		summary: "Print the scene graph (separators, insertion points, transforms, models, sensors),\nthe elements with their parameter table indices and values, the sensors, and how\nmany GPU geometries the scene's meshes share.",
		flags: func(fs *flag.FlagSet) {
			sf.register(fs)
			fs.BoolVar(&asJSON, "json", false, "print JSON instead of text")
		},
		run: func(fs *flag.FlagSet, args []string, w io.Writer) error {
			path, _, err := sceneArgs(args, 0)
			if err != nil {
				return err
			}
			s, err := sf.load(path)
			if err != nil {
				return err
			}
			info, err := s.Inspect()
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(w, info)
			}
			info.WriteTree(w)
			info.WriteSummary(w)
			return nil
		},
	}
}

// wantExt refuses an output file whose extension is not one of exts
// (compared without case): a file named .jpg or .obj must not silently hold
// another format.
func wantExt(path, what string, exts ...string) error {
	ext := filepath.Ext(path)
	for _, e := range exts {
		if strings.EqualFold(ext, e) {
			return nil
		}
	}
	return usagef("-o %s: %s; name the file %s", path, what, strings.Join(exts, " or "))
}

// flagGiven reports whether the command line set the flag name.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// mkdirFor creates the directory an output file goes into.
func mkdirFor(path string) error {
	if dir := filepath.Dir(path); dir != "." {
		return os.MkdirAll(dir, 0o755)
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(positiveZeros(buf.Bytes()))
	return err
}

// positiveZeros rewrites the number -0 in encoded JSON as 0: a computed
// pose or matrix entry may be negative zero, which encoding/json keeps and
// which only puzzles a reader. Strings are left alone.
func positiveZeros(b []byte) []byte {
	inString, escaped := false, false
	out := b[:0:0]
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString:
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '-' && i+1 < len(b) && b[i+1] == '0' && (i+2 == len(b) || !isNumberByte(b[i+2])):
			continue // drop the sign of a bare -0
		}
		out = append(out, c)
	}
	return out
}

// isNumberByte reports whether c can continue a JSON number after "0".
func isNumberByte(c byte) bool { return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' }

// parseSweep reads one --sweep ELEMENT.PARAM=FROM:TO.
func parseSweep(a string) (live.Sweep, error) {
	lhs, rng, ok := strings.Cut(a, "=")
	dot := strings.LastIndex(lhs, ".")
	fromS, toS, ok2 := strings.Cut(rng, ":")
	if !ok || !ok2 || dot <= 0 || dot == len(lhs)-1 {
		return live.Sweep{}, usagef("--sweep %q: want ELEMENT.PARAM=FROM:TO", a)
	}
	from, err1 := strconv.ParseFloat(strings.TrimSpace(fromS), 64)
	to, err2 := strconv.ParseFloat(strings.TrimSpace(toS), 64)
	if err1 != nil || err2 != nil || math.IsNaN(from) || math.IsInf(from, 0) || math.IsNaN(to) || math.IsInf(to, 0) {
		return live.Sweep{}, usagef("--sweep %q: FROM and TO must be finite numbers", a)
	}
	return live.Sweep{Element: lhs[:dot], Param: lhs[dot+1:], From: from, To: to}, nil
}

func captureCommand() *command {
	var sf sceneFlags
	var out string
	var frames int
	var rate float64
	var sweeps setFlags
	var rf recordFlags
	return &command{
		name: "capture", args: "SCENE [-o DIR] [--mcap FILE.mcap] [--frames N [--sweep E.P=FROM:TO ...] [--rate HZ]] [--set E.P=V ...] [budget flags]",
		short: "render every sensor headless into a directory, once or as a sequence",
		summary: "Render every sensor of the scene headless and write its output into DIR:\n" +
			"  camera   NAME.png, NAME.json (intrinsics, world pose)\n" +
			"  depth    NAME.depth.png (16-bit mm), NAME.depth.f32 (float32 m), NAME.json,\n" +
			"           NAME.preview.png (colour-mapped for people: near yellow, far purple)\n" +
			"  laser    NAME.scan.json (like sensor_msgs/LaserScan, null for no return)\n" +
			"  laser3d  NAME.pcd (PCD v0.7, organized, NaN for no return)\n" +
			"  psd      NAME.psd.json\n" +
			"With --frames N it writes a sequence, NAME_0000.png ... with the frame number and time\n" +
			"(frame / rate) recorded in the JSON outputs; each --sweep moves a parameter linearly from\n" +
			"FROM at the first frame to TO at the last, checked over every frame before the first is\n" +
			"rendered. Progress goes to the output, a line a frame, numbered from 0 like the files.\n" +
			"A sensor that fails is reported and the others are still written; the exit status is 1.\n" +
			"With --mcap every frame also goes into one MCAP recording (ROS 2 messages, tf, the\n" +
			"scene's change log and model files; docs/recordings.md); -o is then optional.",
		flags: func(fs *flag.FlagSet) {
			sf.register(fs)
			fs.StringVar(&out, "o", "", "output directory (required unless --mcap records the frames)")
			fs.IntVar(&frames, "frames", 0, "write a sequence of N frames")
			fs.Float64Var(&rate, "rate", 10, "frames per second of the sequence, for its time stamps")
			fs.Var(&sweeps, "sweep", "sweep a parameter over the sequence, ELEMENT.PARAM=FROM:TO (repeatable)")
			rf.register(fs, "mcap")
		},
		run: func(fs *flag.FlagSet, args []string, w io.Writer) error {
			path, _, err := sceneArgs(args, 0)
			if err != nil {
				return err
			}
			if out == "" && rf.o.Path == "" {
				return usagef("-o DIR is required")
			}
			if flagGiven(fs, "frames") {
				// Given, --frames must ask for frames: 0 would quietly
				// capture once, without a sequence.
				if frames < 1 || frames > 1000000 {
					return usagef("--frames %d: want 1 to 1000000", frames)
				}
			}
			if len(sweeps) > 0 && frames == 0 {
				return usagef("--sweep needs --frames N")
			}
			if !(rate > 0) || math.IsInf(rate, 0) {
				return usagef("--rate %v: want frames per second > 0", rate)
			}
			o := live.CaptureOptions{SceneFile: path, Out: out, Frames: frames, Rate: rate, Record: rf.o, Warnings: warnings,
				PackagePath: sf.limits.packages()}
			for _, a := range sweeps {
				x, err := parseSweep(a)
				if err != nil {
					return err
				}
				o.Sweeps = append(o.Sweeps, x)
			}
			if o.Scene, err = sf.load(path); err != nil {
				return err
			}
			return live.Capture(o, w)
		},
	}
}

func exportCommand() *command {
	var sf sceneFlags
	var out string
	return &command{
		name: "export", args: "SCENE -o FILE.glb|FILE.gltf [--set E.P=V ...] [budget flags]",
		short:   "write the composed scene as one glTF file (y-up)",
		summary: "Write the composed scene (current parameter values applied) as one glTF file,\nconverted back to glTF's y-up, for checking in other tools.",
		flags: func(fs *flag.FlagSet) {
			sf.register(fs)
			fs.StringVar(&out, "o", "", "output .glb or .gltf file (required)")
		},
		run: func(fs *flag.FlagSet, args []string, w io.Writer) error {
			path, _, err := sceneArgs(args, 0)
			if err != nil {
				return err
			}
			if out == "" {
				return usagef("-o FILE is required")
			}
			if err := wantExt(out, "export writes glTF", ".glb", ".gltf"); err != nil {
				return err
			}
			s, err := sf.load(path)
			if err != nil {
				return err
			}
			m, err := s.Export()
			if err != nil {
				return err
			}
			if err := mkdirFor(out); err != nil {
				return err
			}
			if err := models.Write(out, m); err != nil {
				return err
			}
			fmt.Fprintf(w, "%s: %d meshes, %d triangles\n", out, len(m.Meshes), m.TriangleCount())
			return nil
		},
	}
}

// framePose is one frame's pose in the output of `simvis frames`.
type framePose struct {
	Frame    string        `json:"frame"`
	Relative string        `json:"relative_to"`
	Pose     scene.Pose    `json:"pose"`
	Matrix   [4][4]float64 `json:"matrix"` // row-major
	// With --tf: the tf edge (frame ids as recordings and Foxglove publish
	// them) and whether an element can move it (/tf) or not (/tf_static).
	TF *tfEdge `json:"tf,omitempty"`
}

type tfEdge struct {
	Parent string `json:"parent"`
	Child  string `json:"child"`
	Static bool   `json:"static"`
}

func framesCommand() *command {
	var sf sceneFlags
	var asJSON, asTF bool
	return &command{
		name: "frames", args: "SCENE [FRAME [REFERENCE]] [--json] [--tf] [--set E.P=V ...] [budget flags]",
		short:   "print the pose of a frame relative to another",
		summary: "Print the pose of FRAME relative to REFERENCE (default: world), i.e. the transform\nthat maps FRAME coordinates into REFERENCE coordinates, as x y z (m) roll pitch yaw (deg)\nand as a 4x4 matrix. Without FRAME, list the world pose of every frame. Frames are\ninsertion points and sensors; 'world' is the world frame.",
		flags: func(fs *flag.FlagSet) {
			sf.register(fs)
			fs.BoolVar(&asJSON, "json", false, "print JSON instead of text")
			fs.BoolVar(&asTF, "tf", false, "list the tf tree: each frame relative to its tf parent, static or moving")
		},
		run: func(fs *flag.FlagSet, args []string, w io.Writer) error {
			maxRest := 2
			if asTF {
				maxRest = 0
			}
			path, rest, err := sceneArgs(args, maxRest)
			if err != nil {
				return err
			}
			s, err := sf.load(path)
			if err != nil {
				return err
			}
			if asTF {
				return printTFTree(w, s, asJSON)
			}
			names := rest[:min(1, len(rest))]
			ref := scene.WorldFrame
			if len(rest) == 2 {
				ref = rest[1]
			}
			if len(rest) == 0 {
				names = s.FrameNames()
			}
			// Every world transform from one pass over the graph: a deep
			// chain of parts costs its length, not its length squared.
			ms, err := s.Transforms(names, ref)
			if err != nil {
				return err
			}
			out := make([]framePose, 0, len(names))
			for i, n := range names {
				m := ms[i]
				fp := framePose{Frame: n, Relative: ref, Pose: scene.PoseFromMatrix(m)}
				for r := 0; r < 4; r++ {
					for c := 0; c < 4; c++ {
						fp.Matrix[r][c] = m.At(r, c)
					}
				}
				out = append(out, fp)
			}
			if asJSON {
				return writeJSON(w, out)
			}
			for _, fp := range out {
				fmt.Fprintf(w, "%s in %s: xyz rpy = %s\n", fp.Frame, fp.Relative, fp.Pose)
				if len(rest) > 0 {
					for r := 0; r < 4; r++ {
						fmt.Fprintf(w, "  % .6f % .6f % .6f % .6f\n", fp.Matrix[r][0], fp.Matrix[r][1], fp.Matrix[r][2], fp.Matrix[r][3])
					}
				}
			}
			return nil
		},
	}
}

// printTFTree prints the scene's tf tree (ros2.SceneTree): one edge a line,
// parent first, or JSON.
func printTFTree(w io.Writer, s *scene.Scene, asJSON bool) error {
	edges, err := ros2.SceneTree(s)
	if err != nil {
		return err
	}
	out := make([]framePose, 0, len(edges))
	for _, e := range edges {
		fp := framePose{Frame: e.Frame, Relative: e.Parent, Pose: scene.PoseFromMatrix(e.Matrix),
			TF: &tfEdge{Parent: e.Parent, Child: e.Child, Static: !e.Moving}}
		for r := 0; r < 4; r++ {
			for c := 0; c < 4; c++ {
				fp.Matrix[r][c] = e.Matrix.At(r, c)
			}
		}
		out = append(out, fp)
	}
	if asJSON {
		return writeJSON(w, out)
	}
	for _, fp := range out {
		kind := "static"
		if !fp.TF.Static {
			kind = "moving"
		}
		fmt.Fprintf(w, "%s -> %s (%s): xyz rpy = %s\n", fp.TF.Parent, fp.TF.Child, kind, fp.Pose)
	}
	return nil
}

// maxViewSide bounds a view's width and height, as the sensors' bounds
// theirs: the largest framebuffer side GL implementations commonly allow.
const maxViewSide = 16384

func parseViewpoint(from, frame, size string, fov float64) (live.Viewpoint, error) {
	vp := live.Viewpoint{Frame: frame, FOV: fov, Auto: from == ""}
	var err error
	if vp.Auto {
		// Framed on the scene's content once the scene is there.
	} else if vp.Pose, err = scene.ParsePose(from); err != nil {
		return vp, usagef("--from: %v", err)
	}
	w, h, ok := strings.Cut(size, "x")
	var errW, errH error
	vp.Width, errW = strconv.Atoi(w)
	vp.Height, errH = strconv.Atoi(h)
	if !ok || errW != nil || errH != nil {
		return vp, usagef("--size %q: want WxH in pixels, e.g. 1280x720", size)
	}
	if vp.Width < 1 || vp.Height < 1 || vp.Width > maxViewSide || vp.Height > maxViewSide {
		return vp, usagef("--size %s: width and height must be 1 to %d pixels (the largest render target)", size, maxViewSide)
	}
	if !(fov > 0 && fov < 180) {
		return vp, usagef("--fov %v: want degrees in (0, 180)", fov)
	}
	return vp, nil
}

// viewFlags registers the viewpoint flags of view and mirror.
func viewFlags(fs *flag.FlagSet, from, frame, size *string, fov *float64, defaultFrom string) {
	fs.StringVar(from, "from", defaultFrom, "viewpoint pose x y z (m) roll pitch yaw (deg); a view or window without it frames the scene's sensors and elements, from inside whatever encloses them")
	fs.StringVar(frame, "frame", scene.WorldFrame, "frame the viewpoint pose is given in")
	fs.StringVar(size, "size", "1280x720", "image size WxH in pixels")
	fs.Float64Var(fov, "fov", 70, "horizontal field of view, degrees")
}

func benchCommand() *command {
	var sf sceneFlags
	var seconds float64
	var asJSON, cyclesOnly bool
	var generate, marvinAssets, backend string
	return &command{
		name: "bench", args: "SCENE [--seconds S] [--json] [--backend auto|gpu|cpu] [--cycles] [--set E.P=V ...] [budget flags] | --generate DIR",
		short: "measure each sensor's rate, and range sensors' speed and accuracy against the ray caster",
		summary: "Render each sensor of the scene repeatedly and print frames per second; for range\n" +
			"sensors also beams per second, the rate of the exact CPU ray caster on the same beams\n" +
			"(speed ratio = sensor rate / ray caster rate), how many beams agree with it within 1 mm\n" +
			"and 1 cm, the largest difference, the beams where one finds a surface and the other none\n" +
			"(hit/miss), the beams per frame the exact caster resolved (edges), and the triangles drawn\n" +
			"per frame after culling out of those the sensor could see. Then the rate of all scanners\n" +
			"(laser, laser3d, psd) together and of all sensors, one after the other as in one\n" +
			"simulation cycle, with the wall and CPU time per cycle.\n" +
			"--backend puts every range sensor on one backend first; --cycles measures only the\n" +
			"cycles (for scenes of many sensors). --generate DIR writes the benchmark scenes instead:\n" +
			"DIR/marvin50 (50 MARVINs, 150 scanners), DIR/mesh1m (a million triangles) and\n" +
			"DIR/marvin50/cameras.xml (MARVIN with a ring of 16 640x480 cameras), from the MARVIN\n" +
			"assets in --marvin-assets (see docs/performance.md).",
		flags: func(fs *flag.FlagSet) {
			sf.register(fs)
			fs.Float64Var(&seconds, "seconds", 2, "time to spend on each measurement")
			fs.BoolVar(&asJSON, "json", false, "print JSON instead of text")
			fs.BoolVar(&cyclesOnly, "cycles", false, "measure only the cycles of all scanners and all sensors, not each sensor")
			fs.StringVar(&backend, "backend", "", "put every range sensor on this backend (auto, gpu or cpu) first")
			fs.StringVar(&generate, "generate", "", "write the benchmark scenes into this folder and stop")
			fs.StringVar(&marvinAssets, "marvin-assets", "scenes/marvin", "the folder with lab.gltf and marvin.gltf, for --generate")
		},
		run: func(fs *flag.FlagSet, args []string, w io.Writer) error {
			if generate != "" {
				if len(args) > 0 {
					return usagef("--generate takes no scene")
				}
				files, err := sensors.WriteBenchScenes(generate, marvinAssets)
				if err != nil {
					return err
				}
				for _, f := range files {
					fmt.Fprintln(w, f)
				}
				return nil
			}
			path, _, err := sceneArgs(args, 0)
			if err != nil {
				return err
			}
			if !(seconds > 0 && seconds <= 600) {
				return usagef("--seconds %v: want (0, 600]", seconds)
			}
			s, err := sf.load(path)
			if err != nil {
				return err
			}
			if len(s.Sensors()) == 0 {
				return fmt.Errorf("%s has no sensors to benchmark", path)
			}
			r, err := sensors.NewRenderer()
			if err != nil {
				return err
			}
			defer r.Close()
			if backend != "" {
				for _, se := range s.Sensors() {
					if err := sensors.SetBackend(se.Sensor, backend); err != nil {
						return fmt.Errorf("--backend: sensor %q: %w", se.Name, err)
					}
				}
			}
			results, err := live.Bench(r, s, time.Duration(seconds*float64(time.Second)), cyclesOnly)
			if err != nil {
				return err
			}
			info := r.Info()
			if asJSON {
				return writeJSON(w, map[string]any{"renderer": info.Renderer, "gl_version": info.Version,
					"gpu_ranges": r.GPURanges(), "results": results})
			}
			return live.WriteBenchTable(w, info.Renderer, info.Version, r.GPURanges(), results)
		},
	}
}
