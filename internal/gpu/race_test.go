//go:build race

package gpu

// raceBuild reports a -race build, which also turns on checkptr.
const raceBuild = true
