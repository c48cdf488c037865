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
// Part and element commands may carry a class attribute: the semantic
// class of the meshes the command makes ("robot", "tree"), which
// segmentation sensors report (Scene.Class). Commands embedded in a part's
// model without one take the part's class. A class is 1 to 128 bytes of
// printable UTF-8 without leading or trailing spaces; sensors take none.
//
// Conventions: right-handed, z up, x forward, meters; pose_offset is
// "x y z roll pitch yaw" with angles in degrees and R = Rz(yaw)·Ry(pitch)·Rx(roll).
//
// Hostile input. Every command is checked before it changes anything a
// reader could see, and a command that fails leaves the scene as it was:
//   - Commands take attributes only; child elements or text inside one are
//     an error naming the file, line and child.
//   - Every local and composed world transform must be finite and within
//     ±3.4e38 (float32, which renderers use): a command whose changes
//     break that is refused, naming the attribute (pose_offset, the
//     model file, an element's parameter), and values set at run time
//     that would break it are rejected by Update. Only the subtrees below
//     what changed are recomputed, from kept world transforms.
//   - Confined commands (requests of a running host) name files inside
//     their root only, and so do the commands embedded in the models they
//     load, and the models' own buffers and images (models.LoadWith).
//   - Options.Limits bound what one command may add (see Limits).
package scene
