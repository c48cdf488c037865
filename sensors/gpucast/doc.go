// Package gpucast casts the rays of range sensors on the GPU, exactly: a
// compute shader (OpenGL 4.3, float64) traverses the hierarchy of the
// exact CPU caster (sensors/raycast, exported by Caster.Export) with the
// very float64 operations of its Go traversal, in the same order and
// unfused, so that each ray's distance is the CPU caster's to the bit. All
// sets of rays of a cycle (all range sensors) go in one dispatch, ray by
// ray, and come back with one read.
//
// Geometries whose material cuts rays through (models.Cutout: alpha
// masks, blending) are cast here too, as the CPU caster casts them: a
// candidate hit on one interpolates its texture coordinates and samples
// the alpha plane (nearest or bilinear, each wrap mode) with the float64
// operations of Geometry.keeps and Cutout.Alpha in their order, math.Mod
// done exactly (GLSL's mod rounds), and compares factor*alpha with the
// float64 threshold from which it rounds to a float32 at least the cut
// (raycast.KeptFrom; no double-to-float rounding of the GPU's enters it).
// A hit cut away is no hit, and the traversal goes on.
//
// Exactness rests on the GPU's float64 +, - and * being IEEE 754's,
// correctly rounded, and unfused where the shader says precise. Division
// need not be: GLSL asks only single precision of it, and NVIDIA's was
// seen 1-2 ulps off. New divides samples on the device first and keeps the
// device's division only where every quotient is Go's; elsewhere the
// shader corrects each quotient to Go's with an exact remainder, from the
// device's fma where the probe finds it exact, else from the other three
// operations (div.glsl), and where even that fails the probe, New fails. The tests
// compare every distance with raycast's on the same rays, bit for bit.
package gpucast
