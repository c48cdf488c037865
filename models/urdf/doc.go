// Package urdf reads URDF robot descriptions (.urdf) into models.Model, so
// that a part can load a robot like any model file: it registers the .urdf
// extension with models.RegisterFormat.
//
// Every link becomes a node declared as insertion point LINK (a part named
// R gives R/LINK), the root link at the model's origin; every joint's child
// link hangs below its parent link at the joint's origin (xyz, and rpy in
// URDF's fixed-axis convention: R = Rz(yaw)·Ry(pitch)·Rx(roll)). Revolute,
// continuous and prismatic joints become embedded commands: elements of
// type "joint" (package elements) named JOINT, inserted at the child
// link's insertion point, with one parameter, position, in radians or
// meters, and the URDF limits as its range; mimic joints follow their
// leader. Fixed joints are static. Floating and planar joints are refused:
// the part's pose and pose elements place a robot in the world.
//
// Links show their visual geometry (or, with models.LoadOptions.Collision,
// their collision geometry): box, cylinder (along z), sphere, and meshes in
// any format registered with models (STL, OBJ, Collada, glTF) with their
// scale. Material colours (inline rgba or named at the robot's top level)
// colour primitives and meshes whose file gives no colour (STL, OBJ faces
// without a material); texture images are ignored.
//
// Mesh URIs are relative to the URDF's directory, file:// URIs or absolute
// paths, or package://PKG/PATH, PKG found as the URDF's own enclosing
// package (the nearest directory above the URDF holding a package.xml,
// named PKG or whose package.xml names PKG) or as a directory PKG
// directly under an entry of models.LoadOptions.PackagePath (or the entry
// itself when it is named PKG).
//
// Errors name the URDF file and the line of what they refuse.
package urdf
