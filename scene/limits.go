package scene

import (
	"github.com/simvis/simvis/models"
)

// Limits bound the cost of one command and of the whole scene (see
// Options.Limits). Zero fields take DefaultLimits' values; negative fields
// mean no limit.
//
// Model limits are checked by the loader (models.LoadWith) for each model
// file; the bytes and image pixels of the files one command loads are
// also summed against Model.FileBytes and Model.ImagePixels (models found
// in the scene's cache cost nothing new). The other budgets are counted over one command and every command
// embedded in the models it loads, recursively: a part is counted, with
// its model's vertices, triangles and nodes, before it is built, so a
// model that embeds parts of itself stops at the budget instead of
// growing exponentially; nodes and meshes an element or sensor adds are
// counted when its constructor returns. A command over a budget is
// refused with an error that names it (file, line, attribute "file" for
// parts) and the limit; nothing it added stays. The simvis command sets
// them with --max-parts, --max-vertices, --max-triangles, --max-nodes,
// --max-model-mib and --max-image-mpixels, the whole-scene budgets with
// --max-scene-parts, --max-scene-nodes, --max-scene-vertices,
// --max-scene-triangles, --max-scene-model-mib, --max-scene-image-mpixels,
// --max-scene-sensors, --max-sensor-mpixels and --max-elements.
type Limits struct {
	// Model bounds each model file (default models.DefaultLimits), and
	// its FileBytes and ImagePixels also what all the model files one
	// command loads (not found in the scene's cache) come to.
	Model models.Limits
	// Per command, embedded commands included:
	Parts     int   // parts added (default 1000)
	Vertices  int64 // vertices instantiated: a model used by 8 parts counts 8 times (default 32 Mi)
	Triangles int64 // triangles instantiated (default 32 Mi)
	// Nodes counts scene graph nodes added: 3 per part (separator,
	// insertion point, model) plus the model's nodes and insertion points,
	// 2 per sensor, and what elements add; and one per mesh primitive
	// instantiated, each a g3n mesh of its own (default 200,000).
	Nodes int

	// The whole scene: what every command executed so far holds, plus
	// what the running command adds, counted like the per-command
	// budgets above and checked before anything is built (see
	// DefaultLimits for the defaults and docs/trust.md). Requests add up
	// one at a time; these bound where they stop.
	SceneParts     int   // parts (default 10,000)
	SceneNodes     int   // scene graph nodes, counted as Nodes (default 1,000,000)
	SceneVertices  int64 // vertices instantiated (default 64 Mi)
	SceneTriangles int64 // triangles instantiated (default 64 Mi)
	// SceneModelBytes and SceneImagePixels bound what the distinct model
	// files the scene loaded read and decode (each counted once, however
	// many parts use it): default 1 GiB and 256 Mi pixels.
	SceneModelBytes  int64
	SceneImagePixels int64
	SceneSensors     int // sensors (default 1024)
	// SensorSamples bounds the pixels and beams of all sensors together
	// (a camera counts width x height, a laser its beams), what each
	// render cycle holds and draws (default 64 Mi). It is checked from
	// the command's attributes before the sensor is built.
	SensorSamples int64
	// Elements bounds the scene's elements (default 4096): a host's
	// shared descriptor table is sized from it.
	Elements int
}

// DefaultLimits are the limits of a scene whose Options leave them zero.
// Instances of one model share its memory (bounded per file by Model), so
// the vertex and triangle budgets bound what one command adds to every
// render, and the parts and nodes budgets the graph it builds. The
// whole-scene defaults hold every bundled scene and the generated benchmark
// scenes (marvin50, mesh1m) with room to spare; a scene graph node costs
// about 1.5-3 KB, so SceneNodes keeps the graph within a few GB however
// many requests arrive, and SensorSamples keeps a cycle's render targets
// near 64 Mi x (4 color + 4 depth) bytes.
var DefaultLimits = Limits{
	Model:     models.DefaultLimits,
	Parts:     1000,
	Vertices:  32 << 20,
	Triangles: 32 << 20,
	Nodes:     200000,

	SceneParts:       10000,
	SceneNodes:       1000000,
	SceneVertices:    64 << 20,
	SceneTriangles:   64 << 20,
	SceneModelBytes:  1 << 30,
	SceneImagePixels: 256 << 20,
	SceneSensors:     1024,
	SensorSamples:    64 << 20,
	Elements:         4096,
}
