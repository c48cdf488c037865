// Package gpucast casts the rays of range sensors on the GPU, exactly: a
// compute shader (OpenGL 4.3, float64) traverses the hierarchy of the
// exact CPU caster (sensors/raycast, exported by Caster.Export) with the
// very float64 operations of its Go traversal, in the same order and
// unfused, so that each ray's distance is the CPU caster's to the bit. All
// sets of rays of a cycle (all range sensors) go in one dispatch, ray by
// ray, and come back with one read.
//
// Geometries whose material cuts rays through (models.Cutout) are not
// cast here: their hits test a texel, which the shader does not sample.
// Sync reports raycast.ErrCutouts for a scene holding one, and the caller
// keeps the CPU caster for it.
//
// Exactness rests on the GPU's float64 arithmetic being IEEE 754 with
// correctly rounded +, -, * and /, as x86 and llvmpipe's are; the tests
// compare every distance with raycast's on the same rays, bit for bit.
package gpucast
