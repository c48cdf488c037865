package sensors_test

import (
	"encoding/json"
	"errors"
	"math"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// A depth camera with a lens sees a tilted plane filling its image; OpenCV
// (cv2.undistortPointsIter, cv2.fisheye.undistortPoints) inverts the
// published lens for every pixel, and the rays scaled by the published
// depth, moved to the world with the published optical pose, lie on the
// plane: within 0.1 mm on the cpu backend (exact rays), 1 mm on the gpu
// one (the depth target; the resampling interpolates 1/depth, exact on a
// plane). Dropping D puts them centimeters off.
func TestDepthLensBackProjectsOntoPlane(t *testing.T) {
	py := testkit.DebianPython(t, "cv2", "python3-opencv")
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "plane.glb", func(m *models.Model) {
		m.AddNode(nil, "plane", mgl64.Ident4(), models.Box("plane", 0.2, 300, 300, [4]float32{1, 1, 1, 1}))
	})
	platePose := scene.Pose{X: 3.2, Y: 0.4, Z: 1.6, Pitch: -25, Yaw: 46}
	camPose := scene.Pose{X: 0.3, Y: -0.2, Z: 1.2, Roll: 4, Pitch: -6, Yaw: 12}
	plate := platePose.Matrix()
	n := plate.Col(0).Vec3()
	c := plate.Col(3).Vec3().Dot(n) - 0.1
	for _, lens := range []string{
		`distortion_model="plumb_bob" k1="-0.28" k2="0.09" p1="0.0012" p2="-0.0008" k3="-0.01"`,
		`distortion_model="equidistant" k1="-0.05" k2="0.01" k3="-0.004" k4="0.001"`,
	} {
		for _, backend := range []string{"cpu", "gpu"} {
			s := testkit.LoadXML(t, dir, `<scene>
  <part file="plane.glb" name="PLATE" pose_offset="`+platePose.String()+`"/>
  <sensor type="depth" name="D" pose_offset="`+camPose.String()+`" width="160" height="120" fov="64" range_max="300" backend="`+backend+`" `+lens+`/>
</scene>`)
			out := t.TempDir()
			if _, err := sensors.CaptureAll(testkit.Renderer(t), s, out); err != nil {
				t.Fatal(err)
			}
			args := []string{"testdata/backproject_lens.py", filepath.Join(out, "D")}
			for _, f := range []float64{n[0], n[1], n[2], c} {
				args = append(args, fmtFloat(f))
			}
			raw, err := exec.Command(py, args...).Output()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("backproject_lens.py: %v\n%s", err, ee.Stderr)
			} else if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Valid         int
				Lens, Pinhole float64
			}
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("%v in %s", err, raw)
			}
			tol := 1e-4
			if backend == "gpu" {
				tol = 1e-3
			}
			t.Logf("%s %s: through the lens %.4f mm off the plane, ignoring it %.1f mm", backend, lens[:30], 1e3*got.Lens, 1e3*got.Pinhole)
			if got.Valid != 160*120 {
				t.Errorf("%s %s: %d valid pixels, want all %d", backend, lens, got.Valid, 160*120)
			}
			if got.Lens > tol {
				t.Errorf("%s %s: back-projected through the lens, points lie %.3g m off the plane, want <= %g", backend, lens, got.Lens, tol)
			}
			if got.Pinhole < 0.01 {
				t.Errorf("%s %s: ignoring the lens puts points only %.3g m off: the lens is too weak to test", backend, lens, got.Pinhole)
			}
		}
	}
}

// A segmentation sensor and a depth camera with the same lens and pose
// agree on which pixels see the box: ids are resampled nearest-neighbour
// from the same undistorted view the depth comes from, so at most the
// pixels on the box's outline differ; the box shows only its own id.
func TestSegmentationLensMatchesDepth(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "box.glb", 1, 1, 1, [4]float32{1, 0, 0, 1})
	lens := `distortion_model="plumb_bob" k1="-0.3" k2="0.1" p1="0.001"`
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="box.glb" name="BOX" class="crate" pose_offset="3 0.8 0.2 10 20 30"/>
  <sensor type="depth" name="D" width="160" height="120" fov="80" range_max="20" `+lens+`/>
  <sensor type="segmentation" name="S" width="160" height="120" fov="80" `+lens+`/>
</scene>`)
	r := testkit.Renderer(t)
	var dc *sensors.DepthCamera
	var sg *sensors.Segmentation
	for _, se := range s.Sensors() {
		switch x := se.Sensor.(type) {
		case *sensors.DepthCamera:
			dc = x
		case *sensors.Segmentation:
			sg = x
		}
	}
	depth, err := dc.Depth(r, s)
	if err != nil {
		t.Fatal(err)
	}
	seg, err := sg.Segment(r, s)
	if err != nil {
		t.Fatal(err)
	}
	if seg.Info.Intrinsics.Distortion.ModelName() != "plumb_bob" || seg.Info.Intrinsics.Distortion.D()[0] != -0.3 {
		t.Errorf("segmentation publishes lens %v %v", seg.Info.Intrinsics.Distortion.ModelName(), seg.Info.Intrinsics.Distortion.D())
	}
	box, differ := 0, 0
	for k, id := range seg.Instance {
		seen := !math.IsInf(float64(depth.Depth[k]), 0)
		if id != 0 && id != 1 {
			t.Fatalf("pixel %d has instance %d: only the box (1) exists", k, id)
		}
		if (id == 1) != seen {
			differ++
		}
		if id == 1 {
			box++
		}
	}
	if box < 500 {
		t.Fatalf("the box covers %d pixels, want a good part of the image", box)
	}
	// The outline: about the box's perimeter in pixels; allow 2 % of the box.
	if differ > box/50 {
		t.Errorf("%d of %d box pixels disagree between segmentation and depth", differ, box)
	}
}

// Through a lens, a depth camera's pixels on the outline of a box standing
// before a wall take the box's depth or the wall's, never one between
// (no flying pixels): every pixel, back-projected through the published K
// and D, lies on the box's surface or on the wall, within 1 mm where its
// four neighbours in the render lie on one plane (interpolated), within 2
// cm elsewhere (the nearest render pixel's depth, up to about half a pixel
// along a slope: 1.7 cm is a pixel's width on the box); a depth between
// the box (2.4 m) and the wall (6 m) would be meters off both. At least
// 97 % of the pixels are within 1 mm.
func TestDepthLensNoMixedDepths(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "box.glb", 1, 1, 1, [4]float32{1, 1, 1, 1})
	testkit.WriteBox(t, dir, "wall.glb", 0.2, 40, 40, [4]float32{1, 1, 1, 1})
	boxPose := scene.Pose{X: 3, Y: 0.3, Z: 0.1, Roll: 10, Pitch: -15, Yaw: 30}
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="box.glb" name="BOX" pose_offset="`+boxPose.String()+`"/>
  <part file="wall.glb" name="WALL" pose_offset="6.1 0 0 0 0 0"/>
  <sensor type="depth" name="D" width="200" height="150" fov="70" range_max="20" distortion_model="plumb_bob" k1="-0.25" k2="0.07" p2="0.002"/>
</scene>`)
	var dc *sensors.DepthCamera
	for _, se := range s.Sensors() {
		dc = se.Sensor.(*sensors.DepthCamera)
	}
	im, err := dc.Depth(testkit.Renderer(t), s)
	if err != nil {
		t.Fatal(err)
	}
	in := im.Info.Intrinsics
	opt := im.Info.OpticalPose().Matrix()
	boxFromWorld := boxPose.Matrix().Inv()
	onBox, onWall, near := 0, 0, 0
	for v := 0; v < in.Height; v++ {
		for u := 0; u < in.Width; u++ {
			z := float64(im.Depth[v*in.Width+u])
			if math.IsInf(z, 0) {
				t.Fatalf("pixel (%d, %d) has no depth: the wall fills the view", u, v)
			}
			x, y, ok := in.Distortion.Undistort((float64(u)-in.Cx)/in.Fx, (float64(v)-in.Cy)/in.Fy)
			if !ok {
				t.Fatalf("pixel (%d, %d): no ray", u, v)
			}
			p := opt.Mul4x1(mgl64.Vec4{x * z, y * z, z, 1}).Vec3()
			// Distance to the box's surface (in its frame) and to the wall's face.
			q := boxFromWorld.Mul4x1(p.Vec4(1)).Vec3()
			out := mgl64.Vec3{math.Abs(q[0]) - 0.5, math.Abs(q[1]) - 0.5, math.Abs(q[2]) - 0.5}
			box := math.Max(out[0], math.Max(out[1], out[2]))
			if box > 0 {
				box = mgl64.Vec3{math.Max(out[0], 0), math.Max(out[1], 0), math.Max(out[2], 0)}.Len()
			}
			wall := math.Abs(p[0] - 6)
			if math.Min(math.Abs(box), wall) <= 1e-3 {
				near++
			}
			switch {
			case math.Abs(box) <= 0.02:
				onBox++
			case wall <= 0.02:
				onWall++
			default:
				t.Errorf("pixel (%d, %d) at depth %.4f m lies %.4f m off the box and %.4f m off the wall", u, v, z, math.Abs(box), wall)
			}
		}
	}
	if onBox < 1000 || onWall < 1000 {
		t.Errorf("%d pixels on the box, %d on the wall: want both in view", onBox, onWall)
	}
	if n := in.Width * in.Height; near < n*97/100 {
		t.Errorf("%d of %d pixels within 1 mm of a surface, want 97 %%", near, n)
	}
	t.Logf("%d of %d pixels within 1 mm of a surface", near, in.Width*in.Height)
}

// BenchmarkDepthLens measures MARVIN's 640x480 depth camera (gpu backend)
// as a pinhole and with a plumb_bob lens (a wide render resampled).
//
//	go test -run '^$' -bench DepthLens ./sensors/
func BenchmarkDepthLens(b *testing.B) {
	for _, lens := range []struct{ name, attrs string }{
		{"pinhole", ""},
		{"plumb_bob", `distortion_model="plumb_bob" k1="-0.2" k2="0.05"`},
	} {
		b.Run(lens.name, func(b *testing.B) {
			s, err := scene.Load("../scenes/marvin/scene.xml", scene.Options{})
			if err != nil {
				b.Fatal(err)
			}
			c, err := scene.ParseCommand(`<sensor type="depth" name="BENCH_DEPTH" insert_at="MARVIN/CAMERA_MOUNT" width="640" height="480" fov="70" range_max="20" `+lens.attrs+`/>`, "bench", "")
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Exec(c); err != nil {
				b.Fatal(err)
			}
			r, err := sensors.NewRenderer()
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			var dc *sensors.DepthCamera
			for _, se := range s.Sensors() {
				if se.Name == "BENCH_DEPTH" {
					dc = se.Sensor.(*sensors.DepthCamera)
				}
			}
			yaw := 20.0
			for b.Loop() {
				yaw++
				if err := s.Set("M_POSE", "yaw", yaw); err != nil {
					b.Fatal(err)
				}
				if _, err := dc.Depth(r, s); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}
