package raycast

import "testing"

// TestTakeShares checks how a job's pieces are shared out: each taken
// once, in order, in runs that never grow, the last ones single pieces
// (at least four per participant), so that the cores end within a piece
// of each other.
func TestTakeShares(t *testing.T) {
	for _, n := range []int{1, 9, 46, 1000, 38400} {
		for _, parts := range []int{1, 2, 16} {
			j := &castJob{pieces: n, parts: parts}
			next, prev := 0, n
			var runs []int
			for {
				g, end := j.take()
				if g >= n {
					break
				}
				if g != next || end <= g || end > n {
					t.Fatalf("%d pieces, %d parts: took %d-%d after %d", n, parts, g, end, next)
				}
				if end-g > prev {
					t.Fatalf("%d pieces, %d parts: a run of %d after one of %d", n, parts, end-g, prev)
				}
				prev, next = end-g, end
				runs = append(runs, end-g)
			}
			if next != n {
				t.Fatalf("%d pieces, %d parts: %d taken", n, parts, next)
			}
			for _, r := range runs[len(runs)-min(n, 4*parts):] {
				if r != 1 {
					t.Fatalf("%d pieces, %d parts: runs %v do not end in single pieces", n, parts, runs)
				}
			}
			if n == 46 && parts == 2 && runs[0] != 5 {
				t.Errorf("a scan's first run: %d pieces, want 46/8 = 5", runs[0])
			}
		}
	}
}
