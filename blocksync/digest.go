package blocksync

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"math"
	"time"

	"golang.org/x/crypto/blake2b"

	"github.com/ringcp/ringcp/internal/zeros"
)

// Algorithm is the cryptographic hash granule digests are made with.
// Both are keyed (BLAKE2b natively, SHA-256 as HMAC), both 256 bits: a
// collision, which would leave a changed granule unwritten, is out of
// reach of anyone, a guest writing its own disk included. Which is faster
// depends on the CPU: SHA-256 with the SHA extensions (AMD Zen, Intel
// since Ice Lake, ARMv8's crypto extension) runs well ahead of BLAKE2b;
// without them BLAKE2b (AVX2) is ahead. A session picks the one that is
// fastest on the slower of its two hosts (Speeds).
type Algorithm uint8

// The algorithms; the values are on the wire.
const (
	BLAKE2b256 Algorithm = 1
	SHA256     Algorithm = 2
)

// Algorithms are every algorithm, in the order of preference when
// speeds tie.
var Algorithms = []Algorithm{BLAKE2b256, SHA256}

func (a Algorithm) String() string {
	switch a {
	case BLAKE2b256:
		return "blake2b-256"
	case SHA256:
		return "hmac-sha-256"
	}
	return fmt.Sprintf("digest %d", uint8(a))
}

// Valid says whether a is one of Algorithms.
func (a Algorithm) Valid() bool { return a == BLAKE2b256 || a == SHA256 }

// KeySize is the length of a session's key.
const KeySize = 32

// Digest is a granule's digest, or a whole end's (Whole).
type Digest [32]byte

// Digester makes the digests of granules under one key. It is for one
// goroutine; Clone gives another its own.
type Digester struct {
	alg  Algorithm
	key  []byte
	h    hash.Hash
	zero map[int]Digest // of an all-zero granule, by length
}

// NewDigester returns a Digester of alg under key (KeySize bytes).
func NewDigester(alg Algorithm, key []byte) (*Digester, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("blocksync: a digest key of %d bytes, want %d", len(key), KeySize)
	}
	h, err := newHash(alg, key)
	if err != nil {
		return nil, err
	}
	return &Digester{alg: alg, key: append([]byte(nil), key...), h: h, zero: map[int]Digest{}}, nil
}

func newHash(alg Algorithm, key []byte) (hash.Hash, error) {
	switch alg {
	case BLAKE2b256:
		return blake2b.New256(key)
	case SHA256:
		return hmac.New(sha256.New, key), nil
	}
	return nil, fmt.Errorf("blocksync: unknown digest algorithm %d", alg)
}

// Clone is a Digester of the same algorithm and key, for another
// goroutine.
func (d *Digester) Clone() *Digester {
	c, _ := NewDigester(d.alg, d.key) // d's algorithm and key were valid
	return c
}

// Algorithm is d's algorithm.
func (d *Digester) Algorithm() Algorithm { return d.alg }

// Sum is the digest of one granule. A granule of zeros is not hashed:
// its digest, the same for every zero granule of its length, is made
// once (zeros.Is reads data only up to its first non-zero byte).
func (d *Digester) Sum(b []byte) Digest {
	if zeros.Is(b) {
		return d.Zero(len(b))
	}
	return d.sum(b)
}

// Zero is the digest of n zero bytes.
func (d *Digester) Zero(n int) Digest {
	z, ok := d.zero[n]
	if !ok {
		z = d.sum(make([]byte, n))
		d.zero[n] = z
	}
	return z
}

func (d *Digester) sum(b []byte) Digest {
	var out Digest
	d.h.Reset()
	d.h.Write(b)
	d.h.Sum(out[:0])
	return out
}

// Whole is the digest of an end's whole content, made from its granule
// digests in order: the sync's end-to-end check. Both sides of a sync
// compute it, SRC's side from what it read, DST's from what DST holds
// afterwards; equal, they hold the same bytes.
type Whole struct {
	h hash.Hash
	n int64 // granules added
}

// NewWhole starts the digest of an end of size bytes in granules of g.
func NewWhole(alg Algorithm, key []byte, size int64, g int) (*Whole, error) {
	h, err := newHash(alg, key)
	if err != nil {
		return nil, err
	}
	h.Write([]byte("ringcp sync whole v1"))
	var b [16]byte
	binary.BigEndian.PutUint64(b[:], uint64(size))
	binary.BigEndian.PutUint64(b[8:], uint64(g))
	h.Write(b[:])
	return &Whole{h: h}, nil
}

// Add adds the next granule's digest.
func (w *Whole) Add(d Digest) {
	w.h.Write(d[:])
	w.n++
}

// Count is how many granule digests were added.
func (w *Whole) Count() int64 { return w.n }

// Sum is the digest of everything added.
func (w *Whole) Sum() Digest {
	var out Digest
	w.h.Sum(out[:0])
	return out
}

// Speeds measures how many bytes a second each algorithm hashes on this
// CPU, on about 4 MiB of data each (a few milliseconds): what a session
// compares to choose its algorithm. Each is its fastest of 16 short
// trials, the algorithms' trials taking turns: one timed run each was
// as often a measure of the machine's load as of the algorithms (on a
// busy 2-core VM, a run preempted or stolen by the hypervisor made
// BLAKE2b look faster than SHA-256 in a third of the sessions, which
// then hashed at half the speed on both hosts: 740 against 1380 MB/s
// at 4 KiB granules here). Taking turns, a slow spell of the machine
// slows both algorithms' trials, not one's.
func Speeds() map[Algorithm]float64 {
	buf := make([]byte, MaxGranule)
	for i := range buf {
		buf[i] = byte(i*7 + 1)
	}
	ds := make([]*Digester, len(Algorithms))
	best := make([]time.Duration, len(Algorithms))
	for i, a := range Algorithms {
		ds[i], _ = NewDigester(a, make([]byte, KeySize)) // a valid algorithm and key
		ds[i].sum(buf)                                   // warm up
		best[i] = time.Duration(math.MaxInt64)
	}
	const trials, rounds = 16, 4
	for range trials {
		for i, d := range ds {
			start := time.Now()
			for range rounds {
				d.sum(buf)
			}
			best[i] = min(best[i], time.Since(start))
		}
	}
	out := map[Algorithm]float64{}
	for i, a := range Algorithms {
		out[a] = float64(rounds*len(buf)) / max(best[i].Seconds(), 1e-9)
	}
	return out
}

// Choose picks the algorithm fastest on the slower of two hosts, given
// each host's Speed of every algorithm it has (an algorithm missing on
// either side is not a candidate). ok is false when they share none.
func Choose(local, remote map[Algorithm]float64) (alg Algorithm, ok bool) {
	best := -1.0
	for _, a := range Algorithms {
		l, lok := local[a]
		r, rok := remote[a]
		if lok && rok && min(l, r) > best {
			alg, best, ok = a, min(l, r), true
		}
	}
	return alg, ok
}
