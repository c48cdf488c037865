// Package gpu provides headless OpenGL for simvis: an EGL context without
// any window system, and offscreen framebuffers that g3n's renderer can draw
// into and that can be read back into Go memory.
//
// A Context owns one OpenGL 3.3 core context. Because a GL context is
// current on one OS thread only, the Context runs a goroutine locked to its
// own thread, and all GL work is submitted to it with Do:
//
//	ctx, err := gpu.New()
//	...
//	defer ctx.Close()
//	err = ctx.Do(func(gs *gls.GLS) error {
//		fb, err := gpu.NewFramebuffer(gs, 640, 480, gpu.ColorRGBA8)
//		if err != nil {
//			return err
//		}
//		fb.Clear(gs, 0, 0, 0, 1)
//		if err := rend.Render(scene, cam); err != nil { // draws into fb
//			return err
//		}
//		return fb.ReadRGBA(gs, img)
//	})
//
// What GL work lives here, written once for sensors and viewers:
// contexts (New, NewExternal); offscreen targets (Framebuffer: a color
// texture and a depth buffer; DepthTarget: a depth texture for shadow
// maps), made by one builder; readback into the caller's buffers
// (Framebuffer.Read*, ReadBackBuffer), or started behind a fence and
// finished later (Framebuffer.StartRead, PendingRead), so that many
// pictures are drawn before the first is waited for; meshes (Mesh: positions, texture
// coordinates, triangle and edge indices, drawn as triangles, lines or
// points); textures uploaded from memory (Texture); and pass state
// (SetSolidState, SetZeroToOneDepth). Programs, shaders and uniforms stay
// with their users: callers say what they draw, this package how GL does it.
// Compute shaders (OpenGL 4.3) run through ComputeProgram over
// StorageBuffers (Upload, Read); their GLSL too stays with its user.
//
// Platform: New loads libEGL.so.1 at run time (the binary does not link
// EGL, so it starts anywhere and New returns an error where EGL is
// missing). It prefers a hardware device through EGL_EXT_platform_device
// (NVIDIA headless), skipping software devices, and falls back to Mesa's
// EGL_MESA_platform_surfaceless (llvmpipe in CI). The environment variable
// SIMVIS_EGL_PLATFORM=device|surfaceless forces one of them.
//
// g3n interplay: New calls gls.New on the render thread and turns off g3n's
// GL error checking, which would otherwise exit the process on the first
// GL error; use CheckGLError where errors matter. g3n's gls caches some GL
// state (viewport, depth mask, enables, program), so this package changes
// that state only through gs; it uses raw GL, loaded through
// eglGetProcAddress, only for what gls does not wrap (framebuffer objects,
// renderbuffers, glReadPixels, pixel-store state). Meshes and uploaded
// textures are made through gs, so that gls.Stats counts them.
//
// Image orientation: GL's window origin is bottom-left; every Read method
// returns rows top-down, so row 0 is the top of the image.
package gpu
