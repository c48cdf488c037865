package web

import (
	"bytes"
	"image"
	"image/jpeg"
	"time"

	"github.com/simvis/simvis/web/client"
)

// Insets: the cameras' pictures pages asked for (client.OpInset), JPEG at
// most insetRate times a second each, encoded off the host's goroutine.

const (
	insetRate    = 5  // pictures a second per camera at most
	insetQuality = 80 // JPEG quality
)

// sensorImage is a camera's newest picture as pages get it.
type sensorImage struct {
	gen  uint64
	msg  []byte // the whole 'I' message
	size int
}

// WantsImage reports whether a page asked for the camera's pictures now
// (and the last was published long enough ago): a frame sink asks before
// handing one to PublishImage.
func (s *Server) WantsImage(sensor string) bool {
	s.imgMu.Lock()
	defer s.imgMu.Unlock()
	return s.insetWant[sensor] > 0 && !s.encoding[sensor] && time.Since(s.imgAt[sensor]) >= time.Second/insetRate
}

// PublishImage hands a camera's picture to the pages that asked for it. It
// copies the pixels and returns at once; the picture is encoded on a
// goroutine of its own, one at a time per camera.
func (s *Server) PublishImage(sensor string, img *image.RGBA) {
	if img == nil || !s.WantsImage(sensor) {
		return
	}
	cp := &image.RGBA{Pix: append([]byte(nil), img.Pix...), Stride: img.Stride, Rect: img.Rect}
	s.imgMu.Lock()
	s.encoding[sensor] = true
	s.imgAt[sensor] = time.Now()
	s.imgMu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		var buf bytes.Buffer
		err := jpeg.Encode(&buf, cp, &jpeg.Options{Quality: insetQuality})
		var msg []byte
		if err == nil {
			msg, err = client.EncodeBinary(client.KindImage, client.Image{Sensor: sensor, Width: cp.Rect.Dx(), Height: cp.Rect.Dy()}, buf.Bytes())
		}
		s.imgMu.Lock()
		defer s.imgMu.Unlock()
		s.encoding[sensor] = false
		if err != nil || len(msg) > client.MaxServerMessage {
			return
		}
		s.imgGen++
		next := make(map[string]*sensorImage, len(s.images)+1)
		for k, v := range s.images {
			next[k] = v
		}
		next[sensor] = &sensorImage{gen: s.imgGen, msg: msg, size: len(msg)}
		s.images = next
	}()
}

// wantInset counts a page's wish for a camera's pictures (delta +1 or -1).
func (s *Server) wantInset(sensor string, delta int) {
	s.imgMu.Lock()
	defer s.imgMu.Unlock()
	s.insetWant[sensor] += delta
	if s.insetWant[sensor] <= 0 {
		delete(s.insetWant, sensor)
	}
}

// currentImages is the pictures map now (replaced, never changed).
func (s *Server) currentImages() map[string]*sensorImage {
	s.imgMu.Lock()
	defer s.imgMu.Unlock()
	return s.images
}
