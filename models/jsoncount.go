package models

import (
	"encoding/binary"
)

// jsonObjectsPerNode bounds the JSON objects of a document by its node
// limit: decoding turns each object, a few bytes in the file, into a
// struct of up to a few hundred bytes, and the node count can only be
// checked once the document is decoded.
const jsonObjectsPerNode = 16

// jsonValuesPerNode bounds the JSON values (objects, arrays and their
// members) likewise: "[]," in extras, or "0," in an accessor's min, decodes
// to tens of bytes each, so a 99 MB array of empty arrays took 2.8 GB and
// 14 s. The bundled models have at most 52 per node; a document may have
// 1 Mi whatever its nodes.
const jsonValuesPerNode = 64

// jsonChunk returns the JSON of a .gltf document, or the JSON chunk of a
// .glb one (as much of it as data holds).
func jsonChunk(data []byte) []byte {
	if len(data) >= 20 && string(data[:4]) == "glTF" {
		n := int64(binary.LittleEndian.Uint32(data[12:16]))
		data = data[20:]
		if n < int64(len(data)) {
			data = data[:n]
		}
	}
	return data
}

// jsonCounts counts the objects ('{' outside strings) and, roughly, the
// values (objects, arrays and the members after the first: '{', '[' and ','
// outside strings) in the JSON of a .gltf document, or in the JSON chunk of
// a .glb one.
func jsonCounts(data []byte) (objects, values int64) {
	data = jsonChunk(data)
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case escaped:
			escaped = false
		case inString:
			escaped = c == '\\'
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '{':
			objects++
			values++
		case c == '[' || c == ',':
			values++
		}
	}
	return objects, values
}
