// Package scene builds a simvis scene graph from part, element and sensor
// commands (the SimVis3D design, paper sections III-A to III-F).
//
// A scene starts with one insertion point, ROOT. A part command inserts,
// right before the insertion point named by insert_at, a separator holding
// the static pose_offset, a new insertion point named after the part, and the
// loaded model. An element or sensor command creates a registered type by
// its type attribute; its constructor receives the insertion point and the
// whole command. Transformations follow Open Inventor traversal semantics: a
// transformation inserted before an insertion point affects everything after
// it up to the end of its separator, so command order matters.
//
// The graph keeps float64 transforms for frame queries and mirrors itself as
// a g3n node tree that renderers draw; nothing here touches a GL context.
//
// Conventions: right-handed, z up, x forward, meters; pose_offset is
// "x y z roll pitch yaw" with angles in degrees and R = Rz(yaw)·Ry(pitch)·Rx(roll).
package scene
