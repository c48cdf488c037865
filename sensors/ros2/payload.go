package ros2

import "fmt"

// SuffixDescription is the topic of a frame's FrameDescription under its
// sensor's namespace (/NAME/simvis_frame).
const SuffixDescription = "/simvis_frame"

// FrameSuffixes returns the topic suffixes of the messages FrameMessages
// writes for a frame of kind, in the order it writes them (nil for a kind
// it does not know).
func FrameSuffixes(kind string) []string {
	switch kind {
	case "scan":
		return []string{SuffixScan}
	case "psd":
		return []string{SuffixRange}
	case "cloud":
		return []string{SuffixPoints}
	case "image":
		return []string{SuffixImage, SuffixCameraInfo}
	case "depth":
		return []string{SuffixDepthImage, SuffixDepthInfo}
	case "segmentation":
		return []string{SuffixInstanceImage, SuffixClassImage, SuffixCameraInfo}
	}
	return nil
}

// FramePayload is the inverse of FrameMessages for a frame's binary data:
// from the frame's messages (by topic suffix, FrameSuffixes) it returns
// the payload sensors.Frame.Encode gives the frame: nil for scans and PSD
// readings, RGB 8-bit rows for images, float32 meters for depth, float32
// x y z per point for clouds, instance then class ids (uint16) for
// segmentation, all little-endian. It refuses messages FrameMessages does
// not write (another encoding, step, field layout, or an image whose
// camera info is of another size), whatever their source.
func FramePayload(kind string, msgs map[string][]byte) ([]byte, error) {
	get := func(suffix string) ([]byte, error) {
		b, ok := msgs[suffix]
		if !ok {
			return nil, fmt.Errorf("ros2: a %s frame without its %s message", kind, suffix)
		}
		return b, nil
	}
	image := func(suffix, info, enc string, size uint32) (*Image, error) {
		b, err := get(suffix)
		if err != nil {
			return nil, err
		}
		m, err := DecodeImage(b)
		if err != nil {
			return nil, err
		}
		if m.Encoding != enc || m.IsBigendian != 0 || uint64(m.Step) != uint64(size)*uint64(m.Width) {
			return nil, fmt.Errorf("ros2: %s: encoding %q, step %d, big-endian %d: want %s, step %d x %d, little-endian",
				suffix, m.Encoding, m.Step, m.IsBigendian, enc, size, m.Width)
		}
		if b, err = get(info); err != nil {
			return nil, err
		}
		ci, err := DecodeCameraInfo(b)
		if err != nil {
			return nil, err
		}
		if ci.Width != m.Width || ci.Height != m.Height {
			return nil, fmt.Errorf("ros2: %s is %dx%d, its camera info %dx%d", suffix, m.Width, m.Height, ci.Width, ci.Height)
		}
		return m, nil
	}
	switch kind {
	case "scan", "psd":
		decode := map[string]func([]byte) error{
			"scan": func(b []byte) error { _, err := DecodeLaserScan(b); return err },
			"psd":  func(b []byte) error { _, err := DecodeRange(b); return err },
		}[kind]
		b, err := get(FrameSuffixes(kind)[0])
		if err != nil {
			return nil, err
		}
		return nil, decode(b)
	case "image":
		m, err := image(SuffixImage, SuffixCameraInfo, "rgb8", 3)
		if err != nil {
			return nil, err
		}
		return m.Data, nil
	case "depth":
		m, err := image(SuffixDepthImage, SuffixDepthInfo, "32FC1", 4)
		if err != nil {
			return nil, err
		}
		return m.Data, nil
	case "segmentation":
		in, err := image(SuffixInstanceImage, SuffixCameraInfo, "mono16", 2)
		if err != nil {
			return nil, err
		}
		cl, err := image(SuffixClassImage, SuffixCameraInfo, "mono16", 2)
		if err != nil {
			return nil, err
		}
		if cl.Width != in.Width || cl.Height != in.Height {
			return nil, fmt.Errorf("ros2: instance image %dx%d, class image %dx%d", in.Width, in.Height, cl.Width, cl.Height)
		}
		return append(in.Data, cl.Data...), nil
	case "cloud":
		b, err := get(SuffixPoints)
		if err != nil {
			return nil, err
		}
		m, err := DecodePointCloud2(b)
		if err != nil {
			return nil, err
		}
		return CloudPoints(m)
	}
	return nil, fmt.Errorf("ros2: frame kind %q has no ROS 2 messages", kind)
}

// CloudPoints returns a PointCloud2 that FrameMessages wrote (the fields
// CloudFields, little-endian, packed rows) as float32 x y z per point, the
// layout of a cloud frame's payload.
func CloudPoints(m *PointCloud2) ([]byte, error) {
	same := len(m.Fields) == len(CloudFields) && !m.IsBigendian && m.PointStep == cloudPointStep &&
		uint64(m.RowStep) == uint64(cloudPointStep)*uint64(m.Width)
	for i := 0; same && i < len(CloudFields); i++ {
		same = m.Fields[i] == CloudFields[i]
	}
	if !same {
		return nil, fmt.Errorf("ros2: PointCloud2 fields %v, point step %d, row step %d, big-endian %v: want %v, %d, %d x width, little-endian",
			m.Fields, m.PointStep, m.RowStep, m.IsBigendian, CloudFields, cloudPointStep, cloudPointStep)
	}
	n := len(m.Data) / cloudPointStep
	out := make([]byte, 0, 12*n)
	for i := 0; i < n; i++ {
		out = append(out, m.Data[cloudPointStep*i:cloudPointStep*i+12]...)
	}
	return out, nil
}
