package ros2_test

import (
	"testing"

	"github.com/simvis/simvis/sensors"
	"github.com/simvis/simvis/sensors/ros2"
)

// ping is a frame payload of the test's own: its frame encodes, writes
// and becomes ROS 2 messages through its own methods.
type ping struct{ r float32 }

func (ping) FrameKind() string                        { return "ping" }
func (ping) Encode() (info, data []byte, err error)   { return []byte(`{"ping":1}`), nil, nil }
func (ping) WriteFiles(base string) ([]string, error) { return nil, nil }
func (p ping) ROS2Messages(ns string, body, optical ros2.Header) ([]ros2.Message, error) {
	m := ros2.Range{Header: body, MaxRange: 9, Range: p.r}
	return []ros2.Message{{Topic: ns + "/ping", Type: ros2.TypeRange, Data: m.Marshal()}}, nil
}

func TestFrameOfAPayloadOfOnesOwn(t *testing.T) {
	f := sensors.NewFrame("P", ping{r: 2}, nil)
	if f.Kind != "ping" {
		t.Errorf("kind %q", f.Kind)
	}
	if info, _, err := f.Encode(); err != nil || string(info) != `{"ping":1}` {
		t.Errorf("encode %s, %v", info, err)
	}
	msgs, err := ros2.FrameMessages(f, "/P", ros2.Time{Sec: 1})
	if err != nil || len(msgs) != 1 || msgs[0].Topic != "/P/ping" {
		t.Fatalf("messages %v, %v", msgs, err)
	}
	m, err := ros2.DecodeRange(msgs[0].Data)
	if err != nil || m.Range != 2 || m.Header.FrameID != "P" || m.Header.Stamp.Sec != 1 {
		t.Errorf("range %+v, %v", m, err)
	}
}
