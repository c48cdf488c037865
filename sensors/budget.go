package sensors

import (
	"math"

	"github.com/simvis/simvis/scene"
)

// The pixels and beams each sensor type renders, read from its command's
// attributes with the defaults and helpers its constructor uses: the scene
// charges them against scene.Limits.SensorSamples (--max-sensor-mpixels)
// before the constructor runs, so that three 16384x16384 cameras are
// refused instead of holding gigabytes at render time.
func init() {
	for _, typ := range []string{"camera", "depth", "segmentation"} {
		scene.RegisterSensorCost(typ, pinholeCost)
	}
	scene.RegisterSensorCost("laser", laserCost)
	scene.RegisterSensorCost("laser3d", laser3DCost)
	scene.RegisterSensorCost("psd", func(*scene.Command) (int64, string, error) { return 1, "", nil })
}

// pinholeCost is a camera-like sensor's width x height.
func pinholeCost(c *scene.Command) (int64, string, error) {
	var v View
	if err := readPinhole(c, &v); err != nil {
		return 0, "", err
	}
	attr := "width"
	if v.Height > v.Width {
		attr = "height"
	}
	return int64(v.Width) * int64(v.Height), attr, nil
}

// laserCost is a planar laser's beams.
func laserCost(c *scene.Command) (int64, string, error) {
	_, _, n, err := readAzimuths(c, -90, 90, 0.5)
	if err != nil {
		return 0, "", err
	}
	return int64(n), "resolution", nil
}

// laser3DCost is a 3D laser's layers x columns, counted without building
// either list (the constructor bounds them and says what is wrong).
func laser3DCost(c *scene.Command) (int64, string, error) {
	layers := int64(0)
	if c.Has("layers") {
		deg, _, err := c.FloatList("layers")
		if err != nil {
			return 0, "", err
		}
		layers = int64(len(deg))
	} else {
		lo, err := c.FloatIn("vertical_min", -15, -80, 80)
		if err != nil {
			return 0, "", err
		}
		hi, err := c.FloatIn("vertical_max", 15, -80, 80)
		if err != nil {
			return 0, "", err
		}
		res, err := c.FloatIn("vertical_resolution", 2, 1e-3, 160)
		if err != nil {
			return 0, "", err
		}
		if hi >= lo {
			layers = int64(math.Floor((hi-lo)/res+1e-9)) + 1
		}
	}
	_, _, columns, err := readAzimuths(c, -180, 180, 0.4)
	if err != nil {
		return 0, "", err
	}
	return layers * int64(columns), "resolution", nil
}
