package secretcmp

import "testing"

func TestEqual(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{{"s3cret", "s3cret", true}, {"", "", true}, {"s3cre", "s3cret", false}, {"s3cret!", "s3cret", false}, {"S3CRET", "s3cret", false}, {"", "s3cret", false}} {
		if got := Equal(c.a, c.b); got != c.want {
			t.Errorf("Equal(%q, %q) = %v", c.a, c.b, got)
		}
	}
}
