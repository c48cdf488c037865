// Package models reads glTF 2.0 files (.gltf with external or embedded
// buffers, and .glb) into a GL-free, z-up data model and writes that model
// back out as glTF.
//
// Other formats are readers registered by extension (RegisterFormat, like
// image.RegisterFormat) that produce the same Model: built in are STL
// (binary and ASCII) and Wavefront OBJ with MTL colours, read as written
// (meters, z up, as ROS reads URDF meshes; no axis conversion); package
// models/urdf adds URDF robots. A file with any other extension is read as
// glTF. All the files one load reads (a URDF and its meshes) share one set
// of Limits, counted before allocating, and the confinement of Root;
// Model.Files lists them.
//
// It is the bottom of simvis' dependency chain (cmd -> sensors/elements ->
// scene -> models) and must not import any OpenGL or g3n package: a Model is
// plain Go data that the scene package turns into GPU resources.
//
// # Frames
//
// simvis' world frame is right-handed, z up, x forward, in meters, while glTF
// is y up. Load converts like Blender's glTF importer: a glTF point (x, y, z)
// becomes (x, -z, y). The rotation C doing this is applied by conjugation, so
// every node's local matrix M becomes C·M·C⁻¹ and every vertex position or
// normal p becomes C·p. An identity node stays identity, and a node translated
// by glTF (0, 1, 0) is translated by (0, 0, 1). Write applies the inverse, so
// a Write/Load round trip is exact.
//
// # simvis extras
//
// Following the SimVis3D paper, model files may declare insertion points and
// carry simvis commands:
//
//   - a node whose extras hold {"simvis": {"insertion_point": "NAME"}} is an
//     insertion point (Node.InsertionPoint);
//   - the default scene's extras (or, failing that, the asset's) may hold
//     {"simvis": {"commands": ...}} with either one XML text of command
//     elements or a list of strings, one command element each
//     (Model.Commands).
//
// Write stores both back: insertion points in node extras and commands as a
// list of strings in the scene extras.
//
// # Materials
//
// A material keeps what simvis renders and what decides cut-outs: the base
// color factor and texture, the texture's glTF sampler (Sampler: filters
// and wrap modes), alphaMode and alphaCutoff. KHR_texture_transform on the
// base color texture is applied to the primitives' texture coordinates at
// load (and the TEXCOORD set it names read), so every renderer and the
// range sensors see transformed coordinates. Material.Cutout is the one
// rule of where a material lets a beam through (MASK below alphaCutoff,
// BLEND below one half, the texel chosen as a GPU sampler at level 0
// chooses it), which every sensor that measures or labels geometry
// applies.
//
// # Hostile files
//
// Model files may come from clients (scene change requests), so loading is
// bounded and confined:
//
//   - only regular files are read (the model, its buffers and images):
//     files are opened non-blocking and checked with fstat on the open
//     descriptor, so a FIFO, a device or a directory is refused at once
//     (OpenRegular and ReadRegular offer the same to other packages);
//   - LoadWith's Root confines every file to a directory: no absolute URIs,
//     no "../" or symbolic links leading out;
//   - Limits bound the bytes read, image pixels (from image headers),
//     vertices and triangles (from accessor counts), and nodes, all checked
//     before the data is decoded (the JSON itself is bounded by the node
//     limit: objects and values per node); Load and Decode apply
//     DefaultLimits. A model over a limit gets an error wrapping a
//     *LimitError that names the limit and how to raise it;
//   - primitives that read the same accessors share one decoded geometry;
//   - Walk and Counts keep their own stacks: a deep hierarchy cannot
//     exhaust the goroutine's; Counts adds each mesh up once however many
//     nodes share it;
//   - a panic of qmuntal/gltf (it trusts some inputs) is a "malformed
//     glTF" error; one of this package's own code an internal error, which
//     the fuzz targets report.
package models
