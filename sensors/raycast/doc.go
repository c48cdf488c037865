// Package raycast is simvis's exact CPU ray caster: it intersects rays with
// the triangles that simulated range sensors see (scene.SensedMeshes) in
// float64, through a bounding volume hierarchy per distinct geometry and one
// over the mesh instances of the scene.
//
// It is the reference that the GPU range sensors are tested against, and a
// backend of its own where rendering is not worth it (a single PSD beam).
// Triangles are hit from both sides, as a laser hits a surface whatever the
// winding of its triangles.
//
// Speed without giving up exactness (docs/performance.md): the instance
// hierarchy is rebuilt only when something moved, so the sensors of a
// cycle share it, and the scene is not even read while its version
// (scene.Scene.Version) stays the same; each instance's inverse transform is computed once per
// rebuild; rays traverse 4-wide nodes (a binned SAH build collapsed, four
// float64 child boxes side by side, entered children visited nearest
// first); box tests are widened against rounding, and every hit is
// computed in float64 on the real triangle; CastAll spreads chunks of
// neighbouring beams over persistent helpers and allocates nothing, and
// CastBatch does so for many sensors' rays in one job (a simulation
// cycle's), helpers polling briefly for the next job before they block.
package raycast
