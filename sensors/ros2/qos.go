package ros2

import "fmt"

// TopicStatic is the latched transforms' topic.
const TopicStatic = "/tf_static"

// Latched reports whether a topic of type typ is offered transient local
// with depth 1, as its ROS publishers offer it, so that a late subscriber
// (RViz started after play) gets its last message: /tf_static, whose each
// message holds every static transform (tf2's static broadcaster), and a
// robot's description (robot_state_publisher).
func Latched(topic, typ string) bool {
	return topic == TopicStatic || IsRobotDescription(topic, typ)
}

// OfferedQoS returns a channel's "offered_qos_profiles" metadata in the YAML
// form rosbag2 writes into MCAP channels and metadata.yaml: a list of one
// profile with rmw's policy numbers (history 1 keep last, reliability 1
// reliable, durability 1 transient local or 2 volatile, liveliness 1
// automatic; durations {sec: 0, nsec: 0}, rmw's "default", which is no
// deadline, lifespan or lease). This numeric form is the one every
// rosbag2 since Foxy parses (newer ones also write policy names and detect
// either). A Latched topic is transient local with depth 1; every other
// topic is volatile with depth 10.
func OfferedQoS(topic, typ string) string {
	durability, depth := 2, 10
	if Latched(topic, typ) {
		durability, depth = 1, 1
	}
	const zero = "\n    sec: 0\n    nsec: 0"
	return fmt.Sprintf("- history: 1\n  depth: %d\n  reliability: 1\n  durability: %d\n  deadline:%s\n  lifespan:%s\n"+
		"  liveliness: 1\n  liveliness_lease_duration:%s\n  avoid_ros_namespace_conventions: false\n", depth, durability, zero, zero, zero)
}
