package ros2

import (
	"fmt"
	"sort"
	"strings"
)

// The MCAP ROS 2 profile's names for the encodings of schemas and messages.
const (
	Profile         = "ros2"
	SchemaEncoding  = "ros2msg"
	MessageEncoding = "cdr"
)

// Message type names, as MCAP schema names and ROS 2 type strings.
const (
	TypeTime             = "builtin_interfaces/msg/Time"
	TypeHeader           = "std_msgs/msg/Header"
	TypeLaserScan        = "sensor_msgs/msg/LaserScan"
	TypePointCloud2      = "sensor_msgs/msg/PointCloud2"
	TypePointField       = "sensor_msgs/msg/PointField"
	TypeImage            = "sensor_msgs/msg/Image"
	TypeCameraInfo       = "sensor_msgs/msg/CameraInfo"
	TypeRegionOfInterest = "sensor_msgs/msg/RegionOfInterest"
	TypeRange            = "sensor_msgs/msg/Range"
	TypeTFMessage        = "tf2_msgs/msg/TFMessage"
	TypeTransformStamped = "geometry_msgs/msg/TransformStamped"
	TypeTransform        = "geometry_msgs/msg/Transform"
	TypeVector3          = "geometry_msgs/msg/Vector3"
	TypeQuaternion       = "geometry_msgs/msg/Quaternion"
)

// msgDef is one .msg text and the types its fields name.
type msgDef struct {
	text string
	deps []string
}

// The field lists of the ROS 2 Humble+ definitions, comments left out.
// Field types name their package without "msg/", as .msg files do.
var defs = map[string]msgDef{
	TypeTime:   {"int32 sec\nuint32 nanosec\n", nil},
	TypeHeader: {"builtin_interfaces/Time stamp\nstring frame_id\n", []string{TypeTime}},
	TypeLaserScan: {"std_msgs/Header header\nfloat32 angle_min\nfloat32 angle_max\nfloat32 angle_increment\n" +
		"float32 time_increment\nfloat32 scan_time\nfloat32 range_min\nfloat32 range_max\nfloat32[] ranges\nfloat32[] intensities\n",
		[]string{TypeHeader}},
	TypePointField: {"uint8 INT8=1\nuint8 UINT8=2\nuint8 INT16=3\nuint8 UINT16=4\nuint8 INT32=5\nuint8 UINT32=6\n" +
		"uint8 FLOAT32=7\nuint8 FLOAT64=8\nstring name\nuint32 offset\nuint8 datatype\nuint32 count\n", nil},
	TypePointCloud2: {"std_msgs/Header header\nuint32 height\nuint32 width\nsensor_msgs/PointField[] fields\n" +
		"bool is_bigendian\nuint32 point_step\nuint32 row_step\nuint8[] data\nbool is_dense\n",
		[]string{TypeHeader, TypePointField}},
	TypeImage: {"std_msgs/Header header\nuint32 height\nuint32 width\nstring encoding\nuint8 is_bigendian\nuint32 step\nuint8[] data\n",
		[]string{TypeHeader}},
	TypeRegionOfInterest: {"uint32 x_offset\nuint32 y_offset\nuint32 height\nuint32 width\nbool do_rectify\n", nil},
	TypeCameraInfo: {"std_msgs/Header header\nuint32 height\nuint32 width\nstring distortion_model\nfloat64[] d\n" +
		"float64[9] k\nfloat64[9] r\nfloat64[12] p\nuint32 binning_x\nuint32 binning_y\nsensor_msgs/RegionOfInterest roi\n",
		[]string{TypeHeader, TypeRegionOfInterest}},
	TypeRange: {"std_msgs/Header header\nuint8 ULTRASOUND=0\nuint8 INFRARED=1\nuint8 radiation_type\nfloat32 field_of_view\n" +
		"float32 min_range\nfloat32 max_range\nfloat32 range\n", []string{TypeHeader}},
	TypeVector3:    {"float64 x\nfloat64 y\nfloat64 z\n", nil},
	TypeQuaternion: {"float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n", nil},
	TypeTransform:  {"geometry_msgs/Vector3 translation\ngeometry_msgs/Quaternion rotation\n", []string{TypeVector3, TypeQuaternion}},
	TypeTransformStamped: {"std_msgs/Header header\nstring child_frame_id\ngeometry_msgs/Transform transform\n",
		[]string{TypeHeader, TypeTransform}},
	TypeTFMessage: {"geometry_msgs/TransformStamped[] transforms\n", []string{TypeTransformStamped}},
}

// separator precedes each dependency's definition in a ros2msg schema.
var separator = strings.Repeat("=", 80)

// Schema returns the ros2msg schema of a message type (e.g.
// "sensor_msgs/msg/LaserScan"): its .msg text followed, for every type it
// depends on (transitively, each once), by a line of 80 '=', a line
// "MSG: pkg/Type" and that type's .msg text, the form MCAP's format
// registry gives for ros2msg and rosbag2 writes.
func Schema(typ string) ([]byte, error) {
	d, ok := defs[typ]
	if !ok {
		return nil, fmt.Errorf("ros2: no schema for message type %q (types: %s)", typ, strings.Join(Types(), ", "))
	}
	var b strings.Builder
	b.WriteString(d.text)
	seen := map[string]bool{typ: true}
	var add func(deps []string)
	add = func(deps []string) {
		for _, dep := range deps {
			if seen[dep] {
				continue
			}
			seen[dep] = true
			fmt.Fprintf(&b, "%s\nMSG: %s\n%s", separator, strings.Replace(dep, "/msg/", "/", 1), defs[dep].text)
			add(defs[dep].deps)
		}
	}
	add(d.deps)
	return []byte(b.String()), nil
}

// Types lists the message types this package has schemas for, sorted.
func Types() []string {
	var names []string
	for n := range defs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
