// Package sensors renders simulated sensors from a scene on the GPU (or Mesa
// llvmpipe without one). Importing it registers its sensor types with the
// scene package's factory:
//
//	camera  RGB image; width, height, fov (horizontal, degrees), near, far.
//
// Every sensor looks along its frame's +x axis with +z up.
package sensors
