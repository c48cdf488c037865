//go:build !race

package gpu

const raceBuild = false
