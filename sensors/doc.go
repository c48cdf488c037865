// Package sensors renders simulated sensors from a scene on the GPU (or Mesa
// llvmpipe without one). Importing it registers its sensor types with the
// scene package's factory:
//
//	camera        RGB image with its calibration; lens, exposure, shadows, motion blur and seeded pixel noise (docs/cameras.md)
//	depth         depth along the optical axis per pixel (REP-118), float32 and 16-bit mm
//	laser         planar scanner, laid out like sensor_msgs/LaserScan
//	laser3d       multi-layer scanner, an organized point cloud (PCD)
//	psd           one beam, one distance
//	segmentation  per-pixel instance and class ids, 16-bit PNGs and labels
//
// Every sensor looks along its frame's +x axis with +z up. A range has
// one definition on every backend: the distance, in float64, to the
// nearest sensed triangle that the beam meets at a texel its material does
// not cut away (models.Cutout: alpha masks, and blending below one half),
// as the exact ray caster of package raycast finds it. Backend "cpu" casts
// every beam; backend "gpu" casts every beam on the GPU with the caster's
// own hierarchy where the context runs compute shaders (package gpucast:
// the same bits, compute.go), else renders which meshes each beam may meet
// and proposes a candidate hit, which bounds the caster's search
// (surfaces.go explains how); backend "auto" (the default but for psd) times both on
// the first frames and keeps the faster. Capture writes sensor outputs,
// Bench measures rates and accuracy. RenderFrames renders a simulation
// cycle's sensors, the beams of all of them cast together on all cores.
//
// Cameras and depth cameras use the pinhole convention of OpenCV, Open3D
// and ROS sensor_msgs/CameraInfo: pixel centers at integer coordinates,
// (0, 0) the center of the top-left pixel, u right, v down; square pixels,
// fx = W / (2 tan(hfov/2)), fy = H / (2 tan(vfov/2)), the principal point
// at the image center cx = (W-1)/2, cy = (H-1)/2. The optical frame
// (REP-103) has z forward, x right, y down: pixel (u, v) with depth d is
// the point ((u-cx) d/fx, (v-cy) d/fy, d) in it. Its origin is the sensor
// frame's, its z the body's +x, its x the body's -y, its y the body's -z.
// Every camera's and depth camera's NAME.json, and the info of its frame
// message (Frame.Encode), is a FrameInfo:
//
//	sensor, stamp      name; frame number and time in a sequence
//	width, height      image size in pixels
//	distortion_model   "plumb_bob" or "equidistant" (the sensor's
//	                   distortion_model attribute; plumb_bob without one)
//	D                  OpenCV's order: [k1 k2 p1 p2 k3] for plumb_bob,
//	                   [k1 k2 k3 k4] for equidistant (OpenCV's fisheye);
//	                   zeros for an ideal pinhole, as ROS drivers publish
//	K                  [fx 0 cx; 0 fy cy; 0 0 1], 9 numbers row-major
//	R                  identity, 9 numbers (no rectification)
//	P                  [fx 0 cx 0; 0 fy cy 0; 0 0 1 0], 12 numbers row-major
//	                   (Tx = 0: each camera of a pair is its own frame)
//	intrinsics         {width, height, fx, fy, cx, cy}: the same numbers
//	pose               the body frame's world pose (x forward, z up)
//	optical_pose       the optical frame's world pose (z forward, y down)
//	near, far          range limits in meters (depth cameras)
//
// A segmentation sensor has a camera's geometry (width, height, fov or
// vfov, near, far; its NAME.json is the same FrameInfo, with near and far)
// and renders, pixel for pixel, ids instead of colors: whatever covers a
// pixel's center first, with no antialiasing or blending. NAME.instance.png
// holds instance ids (a part, or an element that adds meshes, with all its
// meshes; numbered from 1 in the order first met, parts in command order
// before elements, and kept for the sensor's life), NAME.class.png class
// ids (the 1-based position of the instance's class attribute among the
// numbered instances' classes, sorted), both 16-bit grayscale with 0 for
// the background and for unclassed instances; NAME.labels.json maps
// instance ids to {name, class, class_id, pixels} and class ids to class
// names (Labels). Like every sensor it does not see sensed="false"
// geometry; like the range sensors it sees surfaces from both sides and
// through what materials cut away (models.Cutout, sampled by its shader),
// whatever a color element's opacity. At most 65535 instances
// (MaxInstances).
//
// Poses are {x, y, z, roll, pitch, yaw}: meters and degrees, the rotation
// Rz(yaw) Ry(pitch) Rx(roll) as in pose_offset and URDF, frame -> world.
//
// Outputs never fail on a number. JSON has no NaN or Inf: a range beyond
// range_max (+Inf, "no return" in REP-117) is written as null and one
// closer than range_min (-Inf) as null with its beam index in too_close;
// any other float that is not finite (a pose that overflowed) is null as
// well. Binary payloads (.depth.f32, clouds) keep IEEE ±Inf and NaN. A
// sensor whose world pose is not finite is not rendered: RenderFrame,
// RenderFrames and CaptureSensor return an error naming it, as they do for a panic inside a
// render, so a program cycling many sensors can count the failure and go
// on.
//
// A Renderer may be shared by goroutines; a sensor keeps per-frame scratch
// space, so each sensor is read by one goroutine at a time, and the scene
// is not safe for concurrent use either (see scene.Scene).
package sensors
