// Package layering decides how simvis's viewers (the desktop window and the
// page in a browser) draw a scene's meshes, without touching GL: which
// meshes stand still and may be drawn once into a cached picture that later
// frames copy and draw the rest over (Cache), and the order in which opaque
// meshes are drawn (Orderer). The viewers own the framebuffers; this
// package owns the decisions, so both draw the same pictures.
package layering
