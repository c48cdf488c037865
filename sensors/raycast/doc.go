// Package raycast is simvis's exact CPU ray caster: it intersects rays with
// the triangles that simulated range sensors see (scene.SensedMeshes) in
// float64, through a bounding volume hierarchy per distinct geometry and one
// over the mesh instances of the scene.
//
// It is the reference that the GPU range sensors are tested against, and
// the backend that backend="auto" picks for most range sensors on a CPU
// machine. Triangles are hit from both sides, as a laser hits a surface
// whatever the winding of its triangles; triangles of no area are never
// hit; a hit where the primitive's material cuts the surface away
// (models.Cutout: an alpha mask, or blending below one half) is no hit,
// and the ray passes on. Rays may carry a bound each (Rays.Bounds): a hit
// known already, which prunes the search, as the GPU backend of the range
// sensors proposes one.
//
// Speed without giving up exactness (docs/performance.md): the instance
// hierarchy is rebuilt only when something moved, so the sensors of a
// cycle share it, and the scene is not even read while its version
// (scene.Scene.Version) stays the same; each instance's inverse transform
// is computed once per rebuild; rays traverse 4-wide nodes (a binned SAH
// build collapsed, four float64 child boxes side by side, entered children
// visited nearest first) down to leaves of four triangles side by side;
// box tests are widened against rounding, and every hit is computed in
// float64 on the real triangle. On amd64 with AVX2 the tests run four
// lanes at a time in assembly (traverse_amd64.s), operation for operation
// the scalar Go tests (no fused multiply-adds; geometries with cut-outs
// take the Go traversal, which tests each hit's texel), and the beams of a sensor
// (one origin) go down the hierarchies in packets of four, through an
// 8-wide hierarchy with float32 boxes in geometries of 4,096 triangles or
// more (a conservative test, so the same hits to the bit); elsewhere the
// same traversal runs in Go. CastAll spreads chunks of neighbouring beams
// over persistent helpers, CastBatch does so for many sensors' rays in one
// job (a simulation cycle's), helpers polling briefly for the next job
// before they block; CastSerial casts on the calling goroutine; none
// allocates.
package raycast
