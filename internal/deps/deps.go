package deps

import (
	_ "github.com/beevik/etree"
	_ "github.com/g3n/engine/renderer"
	_ "github.com/g3n/engine/gls"
	_ "github.com/g3n/engine/graphic"
	_ "github.com/g3n/engine/geometry"
	_ "github.com/g3n/engine/material"
	_ "github.com/g3n/engine/light"
	_ "github.com/g3n/engine/texture"
	_ "github.com/go-gl/mathgl/mgl64"
	_ "github.com/go-gl/mathgl/mgl32"
	_ "github.com/qmuntal/gltf"
	_ "github.com/qmuntal/gltf/modeler"
)
