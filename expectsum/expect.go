package expectsum

import (
	"crypto/md5"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strings"
)

// algorithms are the digests accepted, by name, and their lengths.
var algorithms = map[string]struct {
	newHash func() hash.Hash
	size    int
}{
	"sha256": {sha256.New, sha256.Size},
	"sha512": {sha512.New, sha512.Size},
	"md5":    {md5.New, md5.Size},
}

// Expect is a digest the bytes must have.
type Expect struct {
	Algo string // sha256, sha512, md5
	Sum  []byte
}

// ErrSyntax is Parse's refusal.
var ErrSyntax = errors.New("want ALGO:HEX with ALGO sha256, sha512 or md5")

// Parse reads "ALGO:HEX" (either case).
func Parse(s string) (Expect, error) {
	algo, digest, ok := strings.Cut(s, ":")
	algo = strings.ToLower(strings.TrimSpace(algo))
	a, known := algorithms[algo]
	if !ok || !known {
		return Expect{}, fmt.Errorf("%q: %w", s, ErrSyntax)
	}
	sum, err := hex.DecodeString(strings.TrimSpace(digest))
	if err != nil || len(sum) != a.size {
		return Expect{}, fmt.Errorf("%q: %s digest must be %d hex digits: %w", s, algo, 2*a.size, ErrSyntax)
	}
	return Expect{Algo: algo, Sum: sum}, nil
}

// String is the digest as Parse reads it.
func (e Expect) String() string { return e.Algo + ":" + hex.EncodeToString(e.Sum) }

// New is a fresh hash of e's algorithm.
func (e Expect) New() hash.Hash { return algorithms[e.Algo].newHash() }

// MismatchError says the bytes read were not the ones published.
type MismatchError struct {
	Algo      string
	Want, Got string // hex
	Bytes     int64  // how many were hashed
}

func (m *MismatchError) Error() string {
	return fmt.Sprintf("%s of the %d bytes read is %s, not the expected %s", m.Algo, m.Bytes, m.Got, m.Want)
}

// check compares what h summed over n bytes with e.
func (e Expect) check(h hash.Hash, n int64) error {
	got := h.Sum(nil)
	if string(got) == string(e.Sum) {
		return nil
	}
	return &MismatchError{Algo: e.Algo, Want: hex.EncodeToString(e.Sum), Got: hex.EncodeToString(got), Bytes: n}
}
