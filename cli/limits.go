package cli

import (
	"flag"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// limitFlags are the budgets of every command that loads a scene or runs
// a host (scene.Limits): what one command, embedded commands included, may
// add, and what one model file may cost. Zero keeps the default, a
// negative value lifts the limit.
type limitFlags struct {
	parts, nodes        int
	vertices, triangles int64
	modelMiB, imageMpx  float64
	// The whole scene's budgets (scene.Limits' Scene* fields,
	// SensorSamples and Elements).
	sceneParts, sceneNodes, sceneSensors, elements int
	sceneVertices, sceneTriangles                  int64
	sceneModelMiB, sceneImageMpx, sensorMpx        float64
	// packagePath: --package-path DIR, repeatable: where URDF parts find
	// package://PKG/... meshes, before $ROS_PACKAGE_PATH.
	packagePath setFlags
}

// The flags' names, for messages that point at them.
const (
	flagMaxParts     = "--max-parts"
	flagMaxVertices  = "--max-vertices"
	flagMaxTriangles = "--max-triangles"
	flagMaxNodes     = "--max-nodes"
	flagMaxModelMiB  = "--max-model-mib"
	flagMaxImageMpx  = "--max-image-mpixels"

	flagMaxSceneModelMiB = "--max-scene-model-mib"
	flagMaxSceneImageMpx = "--max-scene-image-mpixels"
	flagMaxSensorMpx     = "--max-sensor-mpixels"
)

func (f *limitFlags) register(fs *flag.FlagSet) {
	d := scene.DefaultLimits
	// Zero defaults keep "(default 0)" out of the help; the real defaults
	// are in the text, read from scene.DefaultLimits.
	fs.IntVar(&f.parts, "max-parts", 0, fmt.Sprintf("most parts one command may add, embedded commands included (default %d; <0: no limit)", d.Parts))
	fs.Int64Var(&f.vertices, "max-vertices", 0, fmt.Sprintf("most vertices one command may instantiate (default %d) and one model file hold (default %d); <0: no limit", d.Vertices, d.Model.Vertices))
	fs.Int64Var(&f.triangles, "max-triangles", 0, fmt.Sprintf("most triangles one command may instantiate (default %d) and one model file hold (default %d); <0: no limit", d.Triangles, d.Model.Triangles))
	fs.IntVar(&f.nodes, "max-nodes", 0, fmt.Sprintf("most scene nodes one command may add, a mesh primitive counting as one (default %d), and one model file hold (default %d); <0: no limit", d.Nodes, d.Model.Nodes))
	fs.Float64Var(&f.modelMiB, "max-model-mib", 0, fmt.Sprintf("most MiB one model file, and all the model files one command loads, may read, buffers and images included (default %g; <0: no limit)", float64(d.Model.FileBytes)/(1<<20)))
	fs.Float64Var(&f.imageMpx, "max-image-mpixels", 0, fmt.Sprintf("most image pixels one model file, and all the model files one command loads, may decode, in units of 2^20 (default %g, one 8192x8192; <0: no limit)", float64(d.Model.ImagePixels)/(1<<20)))
	// The whole scene, however many commands and requests built it.
	fs.IntVar(&f.sceneParts, "max-scene-parts", 0, fmt.Sprintf("most parts the whole scene may hold, requests included (default %d; <0: no limit)", d.SceneParts))
	fs.IntVar(&f.sceneNodes, "max-scene-nodes", 0, fmt.Sprintf("most scene nodes the whole scene may hold, counted as for --max-nodes (default %d; <0: no limit)", d.SceneNodes))
	fs.Int64Var(&f.sceneVertices, "max-scene-vertices", 0, fmt.Sprintf("most vertices the whole scene may instantiate (default %d; <0: no limit)", d.SceneVertices))
	fs.Int64Var(&f.sceneTriangles, "max-scene-triangles", 0, fmt.Sprintf("most triangles the whole scene may instantiate (default %d; <0: no limit)", d.SceneTriangles))
	fs.Float64Var(&f.sceneModelMiB, "max-scene-model-mib", 0, fmt.Sprintf("most MiB the distinct model files of the whole scene may read together (default %g; <0: no limit)", float64(d.SceneModelBytes)/(1<<20)))
	fs.Float64Var(&f.sceneImageMpx, "max-scene-image-mpixels", 0, fmt.Sprintf("most image pixels the distinct model files of the whole scene may decode together, in units of 2^20 (default %g; <0: no limit)", float64(d.SceneImagePixels)/(1<<20)))
	fs.IntVar(&f.sceneSensors, "max-scene-sensors", 0, fmt.Sprintf("most sensors the whole scene may hold (default %d; <0: no limit)", d.SceneSensors))
	fs.Float64Var(&f.sensorMpx, "max-sensor-mpixels", 0, fmt.Sprintf("most pixels and beams all sensors of the scene may have together (a camera width x height, a laser its beams), in units of 2^20 (default %g; <0: no limit)", float64(d.SensorSamples)/(1<<20)))
	fs.Var(&f.packagePath, "package-path", "a directory holding ROS packages (folders named after them) for URDF parts' package:// meshes; repeatable, searched in order before $ROS_PACKAGE_PATH")
	fs.IntVar(&f.elements, "max-elements", 0, fmt.Sprintf("most elements the whole scene may hold; a host's shared descriptor table holds as many (default %d; <0: no limit)", d.Elements))
}

// packages is the package search path of URDF parts: the --package-path
// flags, then $ROS_PACKAGE_PATH. The commands pass it in their options
// (scene.Options, live's); nothing process-wide is set.
func (f *limitFlags) packages() []string {
	return append(slices.Clone([]string(f.packagePath)), models.EnvPackagePath()...)
}

// limits returns the budgets the flags give. A per-command count given on
// the command line bounds each model file too: a model larger than what a
// command may instantiate is refused before it is decoded, and raising
// the count lets larger models in.
func (f *limitFlags) limits() (scene.Limits, error) {
	var l scene.Limits
	l.Parts, l.Vertices, l.Triangles, l.Nodes = f.parts, f.vertices, f.triangles, f.nodes
	l.Model.Vertices, l.Model.Triangles, l.Model.Nodes = f.vertices, f.triangles, f.nodes
	l.SceneParts, l.SceneNodes, l.SceneSensors, l.Elements = f.sceneParts, f.sceneNodes, f.sceneSensors, f.elements
	l.SceneVertices, l.SceneTriangles = f.sceneVertices, f.sceneTriangles
	var err error
	if l.SceneModelBytes, err = scaled(flagMaxSceneModelMiB, f.sceneModelMiB); err != nil {
		return l, err
	}
	if l.SceneImagePixels, err = scaled(flagMaxSceneImageMpx, f.sceneImageMpx); err != nil {
		return l, err
	}
	if l.SensorSamples, err = scaled(flagMaxSensorMpx, f.sensorMpx); err != nil {
		return l, err
	}
	if l.Model.FileBytes, err = scaled(flagMaxModelMiB, f.modelMiB); err != nil {
		return l, err
	}
	if l.Model.ImagePixels, err = scaled(flagMaxImageMpx, f.imageMpx); err != nil {
		return l, err
	}
	return l, nil
}

// scaled converts a flag in units of 2^20 to a count: 0 stays 0 (the
// default), a negative value is -1 (no limit), a positive one at least 1.
func scaled(name string, v float64) (int64, error) {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0) || v > 1<<40:
		return 0, usagef("%s %v: want a number up to 2^40 (negative: no limit)", name, v)
	case v < 0:
		return -1, nil
	case v == 0:
		return 0, nil
	}
	return max(1, int64(math.Round(v*(1<<20)))), nil
}

// limitWords map words of a budget error to the flag that sets that
// budget. "parts" is plural: every part command's error names its part.
var limitWords = []struct{ word, flag string }{
	{"pixel", flagMaxImageMpx},
	{"triangle", flagMaxTriangles},
	{"vert", flagMaxVertices},
	{"node", flagMaxNodes},
	{"parts", flagMaxParts},
	{"byte", flagMaxModelMiB},
	{"size", flagMaxModelMiB},
}

// withLimitHint adds to an error that reports a budget exceeded the flag
// that raises it, so that a refused scene says how to accept it.
func withLimitHint(err error) error {
	if err == nil {
		return nil
	}
	msg := strings.ToLower(err.Error())
	if !strings.Contains(msg, "limit") && !strings.Contains(msg, "budget") || strings.Contains(msg, "--max-") {
		return err // not a budget, or it names its flag already
	}
	for _, w := range limitWords {
		if strings.Contains(msg, w.word) {
			return fmt.Errorf("%w (%s raises the limit)", err, w.flag)
		}
	}
	return fmt.Errorf("%w (the budgets are set with %s)", err, strings.Join([]string{flagMaxParts, flagMaxVertices,
		flagMaxTriangles, flagMaxNodes, flagMaxModelMiB, flagMaxImageMpx}, ", "))
}
