package secretcmp

import (
	"crypto/sha256"
	"crypto/subtle"
)

// Equal reports whether a client's secret a equals the configured secret
// b, in time that depends on neither: subtle.ConstantTimeCompare alone
// returns at once on another length, which would tell a client the
// secret's length, so Equal compares SHA-256 digests.
func Equal(a, b string) bool {
	da, db := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(da[:], db[:]) == 1
}
