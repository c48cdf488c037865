package live

import (
	"testing"

	"github.com/simvis/simvis/scene"
)

// A sensor renders at its rate attribute in scene time, whatever the host's
// cycle rate: at 30 Hz cycles, a 10 Hz sensor is due every third cycle (at
// 0, 0.1, 0.2 ... s), a 0 (every cycle) one each time, and one faster than
// the host every cycle.
func TestClockFollowsSensorRates(t *testing.T) {
	c := NewClock()
	sensors := []*scene.SensorEntry{{Name: "TEN", Rate: 10}, {Name: "EVERY"}, {Name: "FAST", Rate: 100}}
	due := map[string][]int{}
	for cycle := 0; cycle < 12; cycle++ {
		for _, se := range sensors {
			if c.due(se, float64(cycle)/30) {
				due[se.Name] = append(due[se.Name], cycle)
			}
		}
	}
	want := map[string][]int{"TEN": {0, 3, 6, 9}, "EVERY": {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, "FAST": {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}
	for name, w := range want {
		got := due[name]
		if len(got) != len(w) {
			t.Errorf("%s due at cycles %v, want %v", name, got, w)
			continue
		}
		for i := range w {
			if got[i] != w[i] {
				t.Errorf("%s due at cycles %v, want %v", name, got, w)
				break
			}
		}
	}
}

// Options out of range are *OptionError, which the commands report with
// their usage line; a nil recorder records nothing.
func TestOptionErrors(t *testing.T) {
	for _, err := range []error{
		(&WindowOptions{BenchFrames: -1}).Check(),
		(&WindowOptions{Present: "vga"}).Check(),
		func() error { _, err := OpenRecorder(RecordOptions{Realtime: true}, "", 30); return err }(),
		func() error {
			_, err := OpenRecorder(RecordOptions{Path: "x.mcap", Compression: "gzip"}, "", 30)
			return err
		}(),
	} {
		if _, ok := err.(*OptionError); !ok {
			t.Errorf("%v (%T), want an *OptionError", err, err)
		}
	}
	var r *Recorder
	if err := r.Cycle(nil, 0); err != nil || r.Close(nil) != nil {
		t.Error("a nil recorder failed")
	}
}
