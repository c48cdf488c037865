// Package door is a worked example of a custom simvis element written outside
// the framework: importing it registers element type "door", usable from
// scene XML with no change to simvis.
//
//	<element type="door" name="LAB_DOOR" insert_at="DOOR" open="0.5"
//	         hinge="0 0" max_angle="90"/>
//
// XML attributes: hinge ("x y", meters: where the vertical hinge axis stands
// in the insertion point's frame, default "0 0"), max_angle (degrees the door
// turns about +z when fully open, default 90; negative opens the other way).
// Parameter: open, 0 (closed) to 1 (fully open). The element inserts one
// transformation before its insertion point, so the part's model and
// everything attached there afterwards swing with the door.
//
// cmd/simvis-door is the simvis command line with this element added.
package door
