package scene

import (
	"fmt"
	"sort"
	"sync"
)

// ElementFactory builds an element from its command. It may change the scene
// graph around ctx.At (the insertion point) through ctx, and returns the
// element, whose parameters the framework then owns.
type ElementFactory func(ctx *Context) (Element, error)

// SensorFactory builds a sensor mounted at ctx.Frame.
type SensorFactory func(ctx *Context) (Sensor, error)

var registry = struct {
	sync.RWMutex
	elements map[string]ElementFactory
	sensors  map[string]SensorFactory
	costs    map[string]SensorCost
}{elements: map[string]ElementFactory{}, sensors: map[string]SensorFactory{}, costs: map[string]SensorCost{}}

// SensorCost returns, from a sensor command's attributes alone, how many
// pixels and beams the sensor will render each time (a camera width x
// height, a laser its beams), and the attribute that sets most of them,
// for refusals. The scene charges it against Limits.SensorSamples before
// the sensor's factory runs, so an oversized sensor never allocates. It
// may return the errors the factory would for bad attributes.
type SensorCost func(c *Command) (samples int64, attr string, err error)

// RegisterSensorCost gives a sensor type its cost (see SensorCost). Types
// without one count no pixels or beams. A second registration panics.
func RegisterSensorCost(typ string, f SensorCost) {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.costs[typ]; dup {
		panic(fmt.Sprintf("scene: sensor cost of type %q registered twice", typ))
	}
	registry.costs[typ] = f
}

func sensorCost(typ string) (SensorCost, bool) {
	registry.RLock()
	defer registry.RUnlock()
	f, ok := registry.costs[typ]
	return f, ok
}

// RegisterElement makes an element type available to element commands with
// type=typ. Call it from an init function, like image.RegisterFormat; a
// second registration of the same type panics, as it is a programming error.
func RegisterElement(typ string, f ElementFactory) {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.elements[typ]; dup {
		panic(fmt.Sprintf("scene: element type %q registered twice", typ))
	}
	registry.elements[typ] = f
}

// RegisterSensor makes a sensor type available to sensor commands with type=typ.
func RegisterSensor(typ string, f SensorFactory) {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.sensors[typ]; dup {
		panic(fmt.Sprintf("scene: sensor type %q registered twice", typ))
	}
	registry.sensors[typ] = f
}

// ElementTypes lists the registered element types, sorted.
func ElementTypes() []string {
	registry.RLock()
	defer registry.RUnlock()
	return sortedKeys(registry.elements)
}

// SensorTypes lists the registered sensor types, sorted.
func SensorTypes() []string {
	registry.RLock()
	defer registry.RUnlock()
	return sortedKeys(registry.sensors)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func elementFactory(typ string) (ElementFactory, bool) {
	registry.RLock()
	defer registry.RUnlock()
	f, ok := registry.elements[typ]
	return f, ok
}

func sensorFactory(typ string) (SensorFactory, bool) {
	registry.RLock()
	defer registry.RUnlock()
	f, ok := registry.sensors[typ]
	return f, ok
}
