package sensors

import "testing"

// TestTileOrderIsAPermutationOfTiles checks that tileOrder lists every
// pixel once, also for odd sizes, and that each four of a full tile are
// the 2x2 block at its corner.
func TestTileOrderIsAPermutationOfTiles(t *testing.T) {
	for _, size := range [][2]int{{640, 480}, {5, 3}, {1, 1}, {3, 4}, {2, 7}} {
		w, h := size[0], size[1]
		order := tileOrder(w, h)
		seen := make([]bool, w*h)
		for _, k := range order {
			if seen[k] {
				t.Fatalf("%dx%d: pixel %d listed twice", w, h, k)
			}
			seen[k] = true
		}
		if len(order) != w*h {
			t.Fatalf("%dx%d: %d pixels listed, want %d", w, h, len(order), w*h)
		}
		if w%2 == 0 && h%2 == 0 {
			for i := 0; i < len(order); i += 4 {
				k := int(order[i])
				want := [4]int{k, k + 1, k + w, k + w + 1}
				for j, p := range want {
					if int(order[i+j]) != p {
						t.Fatalf("%dx%d: tile at %d lists %v, want %v", w, h, i, order[i:i+4], want)
					}
				}
			}
		}
	}
}
