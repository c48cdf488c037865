// Package elements holds simvis's built-in element types. Importing it
// registers them with the scene package's element factory:
//
//	pose         x y z roll pitch yaw: a transformation before the insertion point
//	rotation     angle (deg) about a fixed axis through a fixed center (revolute joint)
//	translation  offset (m) along a fixed axis (prismatic joint)
//	scale        sx sy sz
//	color        r g b a: the base color and opacity of every model mesh that follows
//	switch       on: 1 shows, 0 hides what follows
//	foliage      opacity: leaves as modeled (1), blended, or gone for every sensor (0)
//	light        directional, sun, point, spot or ambient light: r g b intensity, pose, cutoff; sun: azimuth elevation
//	pointcloud   count, x0 y0 z0 ...: up to max_points cubes, optional seeded noise
//	lines        count, x0 y0 z0 x1 y1 z1 ...: up to max_lines segments
//	graph        N_x N_y N_z per named node: a navigation graph overlay
//	label        x y z size: a text billboard
//
// "What follows" is Open Inventor's scope: the part's model and everything
// attached at the insertion point after the element, up to the end of the
// part's separator. docs/elements.md has each type's XML attributes.
//
// Elements of your own are written the same way in your own package: a
// constructor that changes the graph through its scene.Context and returns a
// scene.Element, registered with scene.RegisterElement from an init function.
package elements
