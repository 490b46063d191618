package blocksync

import (
	"crypto/hmac"
	"crypto/sha256"
	"testing"

	"golang.org/x/crypto/blake2b"
)

func TestDigester(t *testing.T) {
	key := make([]byte, KeySize)
	key[0] = 1
	data := []byte("a granule of data")
	b2, _ := blake2b.New256(key)
	b2.Write(data)
	mac := hmac.New(sha256.New, key)
	mac.Write(data)
	for _, c := range []struct {
		alg  Algorithm
		want []byte
	}{{BLAKE2b256, b2.Sum(nil)}, {SHA256, mac.Sum(nil)}} {
		d, err := NewDigester(c.alg, key)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Sum(data); string(got[:]) != string(c.want) {
			t.Errorf("%v: %x, want %x", c.alg, got, c.want)
		}
		// The zero shortcut gives what hashing the zeros gives, per length.
		for _, n := range []int{1, 511, 4096, MaxGranule} {
			if z, h := d.Sum(make([]byte, n)), d.sum(make([]byte, n)); z != h || z != d.Zero(n) {
				t.Errorf("%v: zero digest of %d bytes", c.alg, n)
			}
		}
		if d.Zero(512) == d.Zero(1024) {
			t.Errorf("%v: zero granules of two lengths share a digest", c.alg)
		}
		other, _ := NewDigester(c.alg, make([]byte, KeySize))
		if other.Sum(data) == d.Sum(data) {
			t.Errorf("%v: the key changes nothing", c.alg)
		}
		if d.Clone().Sum(data) != d.Sum(data) {
			t.Errorf("%v: a clone digests differently", c.alg)
		}
	}
	if _, err := NewDigester(SHA256, key[:16]); err == nil {
		t.Error("a short key accepted")
	}
	if _, err := NewDigester(9, key); err == nil {
		t.Error("an unknown algorithm accepted")
	}
}

func TestWhole(t *testing.T) {
	key := make([]byte, KeySize)
	d, _ := NewDigester(BLAKE2b256, key)
	a, b := d.Sum([]byte("a")), d.Sum([]byte("b"))
	sum := func(size int64, g int, ds ...Digest) Digest {
		w, err := NewWhole(BLAKE2b256, key, size, g)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range ds {
			w.Add(x)
		}
		return w.Sum()
	}
	if sum(2, 1, a, b) == sum(2, 1, b, a) {
		t.Error("order does not matter")
	}
	if sum(2, 1, a, b) == sum(3, 1, a, b) || sum(2, 1, a, b) == sum(2, 2, a, b) {
		t.Error("size or granule does not matter")
	}
	if first, again := sum(2, 1, a, b), sum(2, 1, a, b); first != again {
		t.Error("not deterministic")
	}
}

func TestChoose(t *testing.T) {
	fastSHA := map[Algorithm]float64{BLAKE2b256: 900e6, SHA256: 2000e6}
	slowSHA := map[Algorithm]float64{BLAKE2b256: 800e6, SHA256: 400e6}
	for _, c := range []struct {
		a, b map[Algorithm]float64
		want Algorithm
		ok   bool
	}{
		{fastSHA, fastSHA, SHA256, true},
		{fastSHA, slowSHA, BLAKE2b256, true}, // the slower host decides
		{slowSHA, fastSHA, BLAKE2b256, true},
		{fastSHA, map[Algorithm]float64{SHA256: 1}, SHA256, true},
		{map[Algorithm]float64{BLAKE2b256: 1}, map[Algorithm]float64{SHA256: 1}, 0, false},
	} {
		if got, ok := Choose(c.a, c.b); got != c.want || ok != c.ok {
			t.Errorf("Choose(%v, %v) = %v, %v; want %v, %v", c.a, c.b, got, ok, c.want, c.ok)
		}
	}
	speeds := Speeds()
	for _, a := range Algorithms {
		if speeds[a] <= 0 {
			t.Errorf("Speeds()[%v] is %v, not positive", a, speeds[a])
		}
	}
}
