package copier

import "github.com/ringcp/ringcp/blkhash"

// ImageioChecksum makes the oVirt imageio checksum of a range of length
// bytes (blake2b over 4 MiB blocks, as imageio's checksum API returns
// it), hashing on every CPU: give it as Options.Checksum or
// ReadOptions.Sum. Checksum uses it when ReadOptions.Sum is nil, so a
// caller need not wrap package blkhash itself.
func ImageioChecksum(length int64) BlockSum {
	return imageioSum{blkhash.NewHasher(length, 0)}
}

// imageioSum is blkhash's Hasher as a BlockSum.
type imageioSum struct{ *blkhash.Hasher }

func (s imageioSum) Sum() (ChecksumResult, error) {
	r, err := s.Result()
	return ChecksumResult(r), err
}
