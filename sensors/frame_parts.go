package sensors

import "image"

// The accessors below let encoders of other formats (ROS 2 messages) read
// a frame without re-rendering it; each returns nil where the frame is of
// another kind. The values are the frame's own: do not modify them.

// Stamp returns the frame's stamp (nil outside sequences and hosts).
func (f *Frame) Stamp() *Stamp { return f.stamp }

// ScanData returns a "scan" frame's scan.
func (f *Frame) ScanData() *Scan { p, _ := f.payload.(*Scan); return p }

// ReadingData returns a "psd" frame's reading.
func (f *Frame) ReadingData() *Reading { p, _ := f.payload.(*Reading); return p }

// ImageData returns an "image" frame's pixels and its FrameInfo.
func (f *Frame) ImageData() (*image.RGBA, FrameInfo) {
	if c, ok := f.payload.(*CameraImage); ok {
		return c.Image, c.Info
	}
	return nil, FrameInfo{}
}

// DepthData returns a "depth" frame's image.
func (f *Frame) DepthData() *DepthImage { p, _ := f.payload.(*DepthImage); return p }

// CloudData returns a "cloud" frame's cloud.
func (f *Frame) CloudData() *Cloud { p, _ := f.payload.(*Cloud); return p }

// SegmentationData returns a "segmentation" frame's image.
func (f *Frame) SegmentationData() *SegmentationImage {
	p, _ := f.payload.(*SegmentationImage)
	return p
}
