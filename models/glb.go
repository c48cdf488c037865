package models

import (
	"bytes"
	"fmt"

	"github.com/qmuntal/gltf"
)

// GLB returns m as binary glTF bytes, as Write stores a .glb file (y-up,
// self-contained): for transports that embed models in messages.
func GLB(m *Model) ([]byte, error) {
	w := &writer{
		doc:    gltf.NewDocument(),
		meshes: map[*Mesh]int{},
		mats:   map[*Material]int{},
		geom:   map[[32]byte]geomAccessors{},
		nodes:  map[*Node]bool{},
	}
	if err := w.model(m); err != nil {
		return nil, fmt.Errorf("models: %s: %w", m.Name, err)
	}
	var buf bytes.Buffer
	enc := gltf.NewEncoder(&buf)
	enc.AsBinary = true
	if err := enc.Encode(w.doc); err != nil {
		return nil, fmt.Errorf("models: %s: encoding glTF: %w", m.Name, err)
	}
	return buf.Bytes(), nil
}
