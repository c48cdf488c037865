// Package elements holds simvis's built-in element types. Importing it
// registers them with the scene package's element factory:
//
//	pose  x y z roll pitch yaw: a transformation inserted right before the
//	      insertion point (meters, degrees; R = Rz(yaw)·Ry(pitch)·Rx(roll)).
//
// Elements of your own are written the same way in your own package: a
// constructor that changes the graph through its scene.Context and returns a
// scene.Element, registered with scene.RegisterElement from an init function.
package elements
