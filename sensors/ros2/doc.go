// Package ros2 turns simvis sensor frames and frames of reference into ROS 2
// messages: sensor_msgs LaserScan, PointCloud2, Image, CameraInfo and Range,
// tf2_msgs/TFMessage and a robot's sensor_msgs/JointState, serialized as CDR (XCDR1, little-endian, with the
// 4-byte encapsulation header ROS 2 middlewares and MCAP's ROS 2 profile
// use), and holds their schema texts in MCAP's ros2msg form.
//
// It knows sensors' frame types and the scene graph, not files or sockets:
// MCAP recordings and the Foxglove server both encode through it.
//
// Conventions (see docs/recordings.md):
//   - topics: SensorTopic(name) + a suffix per message: /NAME/scan
//     (LaserScan), /NAME/range (Range), /NAME/points (PointCloud2),
//     /NAME/image_raw + /NAME/camera_info (camera, rgb8),
//     /NAME/depth/image_raw + /NAME/depth/camera_info (depth, 32FC1 meters),
//     /NAME/instance/image_raw, /NAME/class/image_raw (mono16 ids) +
//     /NAME/camera_info (segmentation);
//   - frame ids are simvis frame names (insertion points and sensors, as
//     `simvis frames` lists them; "world" the world frame); each camera,
//     depth camera and segmentation sensor also has NAME_optical (REP-103:
//     z forward, x right, y down), which its Image and CameraInfo headers
//     name; a URDF robot's links are named by their link names where those
//     are free, else R/LINK (robots.go);
//   - joint states: JointStates gives /joint_states (or /R/joint_states)
//     from the elements that are scene.JointStater;
//   - time is the caller's: a Time in every header.
//
// A publisher's cycle, in short:
//
//	stamp := ros2.TimeFromNanos(ns)
//	msgs, err := ros2.FrameMessages(frame, ros2.SensorTopic(frame.Sensor), stamp)
//	static, moving, err := ros2.SceneTransforms(s) // /tf_static once, /tf each cycle
//	tf := ros2.TF(moving, stamp)
//	data := tf.Marshal()
//	schema, err := ros2.Schema(ros2.TypeTFMessage) // for a channel's ros2msg schema
//
// Decode* read back every message type encoded here, each the exact
// inverse of its Marshal (what it accepts marshals back to the same
// bytes), refusing any message cut short, followed by extra bytes or
// holding what Marshal never writes; FramePayload rebuilds a frame's
// binary payload (sensors.Frame.Encode's data) from its messages.
package ros2
