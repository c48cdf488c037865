package models

import "fmt"

// GLB returns m as binary glTF bytes, as Write stores a .glb file (y-up,
// self-contained): for transports that embed models in messages.
func GLB(m *Model) ([]byte, error) {
	data, err := encodeGLTF(m, true)
	if err != nil {
		return nil, fmt.Errorf("models: %s: %w", m.Name, err)
	}
	return data, nil
}
