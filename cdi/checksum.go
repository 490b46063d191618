package cdi

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Checksum is IMPORTER_CHECKSUM: the digest of the bytes as the endpoint
// serves them (before any decompression), as CDI's HTTP source checks
// them.
type Checksum struct {
	Algo string // md5, sha1, sha256, sha512
	Hex  string // lower case
}

// String is "algo:hex", the form ringcp's --expect-checksum reads.
func (c Checksum) String() string { return c.Algo + ":" + c.Hex }

// checksumLengths are CDI's algorithms (pkg/util/checksum) and their
// digests' lengths in hex digits.
var checksumLengths = map[string]int{"md5": 32, "sha1": 40, "sha256": 64, "sha512": 128}

// ErrChecksumMismatch is the failure of a checksum check. The wiring wraps
// its own mismatch error in it (fmt.Errorf("%w: ...", ErrChecksumMismatch));
// its text is what CDI's controller looks for in the termination message.
var ErrChecksumMismatch = errors.New("checksum mismatch")

// ParseChecksum reads "algorithm:hex" as CDI does: either part trimmed of
// spaces and folded to lower case, the algorithm one of md5, sha1, sha256
// and sha512, the digest of its length in hex digits.
func ParseChecksum(s string) (*Checksum, error) {
	algo, digest, ok := strings.Cut(s, ":")
	if !ok {
		return nil, errors.New("is not algorithm:hash")
	}
	algo = strings.ToLower(strings.TrimSpace(algo))
	digest = strings.ToLower(strings.TrimSpace(digest))
	want, known := checksumLengths[algo]
	switch {
	case !known:
		return nil, fmt.Errorf("names the algorithm %q: md5, sha1, sha256 or sha512", algo)
	case digest == "":
		return nil, errors.New("has an empty hash")
	case len(digest) != want:
		return nil, fmt.Errorf("has a %s hash of %d hex digits, not %d", algo, len(digest), want)
	}
	if _, err := hex.DecodeString(digest); err != nil {
		return nil, errors.New("has a hash that is not hexadecimal")
	}
	return &Checksum{Algo: algo, Hex: digest}, nil
}
