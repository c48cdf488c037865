// Package sensors renders simulated sensors from a scene on the GPU (or Mesa
// llvmpipe without one). Importing it registers its sensor types with the
// scene package's factory:
//
//	camera   RGB image with intrinsics; optional seeded pixel noise
//	depth    depth along the optical axis per pixel (REP-118), float32 and 16-bit mm
//	laser    planar scanner, laid out like sensor_msgs/LaserScan
//	laser3d  multi-layer scanner, an organized point cloud (PCD)
//	psd      one beam, one distance
//
// Every sensor looks along its frame's +x axis with +z up. Range sensors
// report the range along each beam's exact direction: the GPU finds which
// meshes each beam may meet and the beam is intersected with them exactly
// (surfaces.go explains how); backend "cpu" uses the ray caster of package
// raycast for every beam. Capture writes sensor outputs, Bench measures
// rates and accuracy.
//
// Outputs never fail on a number. JSON has no NaN or Inf: a range beyond
// range_max (+Inf, "no return" in REP-117) is written as null and one
// closer than range_min (-Inf) as null with its beam index in too_close;
// any other float that is not finite (a pose that overflowed) is null as
// well. Binary payloads (.depth.f32, clouds) keep IEEE ±Inf and NaN. A
// sensor whose world pose is not finite is not rendered: RenderFrame and
// CaptureSensor return an error naming it, as they do for a panic inside a
// render, so a program cycling many sensors can count the failure and go
// on.
//
// A Renderer may be shared by goroutines; a sensor keeps per-frame scratch
// space, so each sensor is read by one goroutine at a time, and the scene
// is not safe for concurrent use either (see scene.Scene).
package sensors
