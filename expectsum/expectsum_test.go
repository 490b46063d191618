package expectsum

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	sum := sha256.Sum256([]byte("x"))
	good := "sha256:" + hex.EncodeToString(sum[:])
	e, err := Parse(good)
	if err != nil || e.String() != good {
		t.Fatalf("Parse(%q) = %v, %v", good, e, err)
	}
	if _, err := Parse("SHA512:" + hex.EncodeToString(make([]byte, 64))); err != nil {
		t.Fatal(err)
	}
	if _, err := Parse("md5:" + hex.EncodeToString(make([]byte, 16))); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "sha256", "sha256:", "sha256:zz", "sha1:" + hex.EncodeToString(make([]byte, 20)),
		"md5:" + hex.EncodeToString(make([]byte, 32)), "sha256:" + hex.EncodeToString(sum[:31])} {
		if _, err := Parse(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q): %v, want ErrSyntax", bad, err)
		}
	}
}

func expectOf(t *testing.T, algo string, data []byte) Expect {
	var sum []byte
	switch algo {
	case "sha256":
		s := sha256.Sum256(data)
		sum = s[:]
	case "sha512":
		s := sha512.Sum512(data)
		sum = s[:]
	case "md5":
		s := md5.Sum(data)
		sum = s[:]
	}
	e, err := Parse(algo + ":" + hex.EncodeToString(sum))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestReader(t *testing.T) {
	data := make([]byte, 100_003)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for _, algo := range []string{"sha256", "sha512", "md5"} {
		r := NewReader(bytes.NewReader(data), expectOf(t, algo, data))
		if err := r.Verify(); err == nil {
			t.Fatal("Verify before the end succeeded")
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			t.Fatal(err)
		}
		if err := r.Verify(); err != nil {
			t.Fatal(err)
		}
		bad := append([]byte(nil), data...)
		bad[50_000]++
		r = NewReader(bytes.NewReader(bad), expectOf(t, algo, data))
		io.Copy(io.Discard, r)
		var m *MismatchError
		if err := r.Verify(); !errors.As(err, &m) || m.Bytes != int64(len(data)) {
			t.Fatalf("%s of a changed byte: %v, want a mismatch", algo, err)
		}
	}
}

// ranges cuts n bytes into ranges of odd lengths.
func ranges(n int) [][2]int {
	var out [][2]int
	for off := 0; off < n; {
		l := min(1+rand.N(40_000), n-off)
		out = append(out, [2]int{off, off + l})
		off += l
	}
	return out
}

// TestInOrderShuffled: ranges handed out in order to many goroutines that
// finish them in any order (a random pause each), some as zero runs,
// through a small window, digest the whole.
func TestInOrderShuffled(t *testing.T) {
	for _, n := range []int{0, 1, 511, 4097, 1<<20 + 3} {
		data := make([]byte, n)
		for i := range data {
			if i%100_000 > 30_000 {
				data[i] = byte(rand.N(256))
			}
		}
		h := NewInOrder(expectOf(t, "sha256", data), 64<<10)
		rs := ranges(n)
		var wg sync.WaitGroup
		work := make(chan [2]int)
		errs := make(chan error, len(rs))
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range work {
					time.Sleep(time.Duration(rand.N(200)) * time.Microsecond)
					if allZero(data[r[0]:r[1]]) {
						errs <- h.Zero(int64(r[0]), int64(r[1]-r[0]))
					} else {
						buf := append([]byte(nil), data[r[0]:r[1]]...)
						errs <- h.Write(int64(r[0]), buf)
						clear(buf) // the caller reuses its buffer at once
					}
				}
			}()
		}
		for _, r := range rs {
			work <- r
		}
		close(work)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := h.Verify(int64(n)); err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
	}
}

func allZero(p []byte) bool {
	for _, b := range p {
		if b != 0 {
			return false
		}
	}
	return true
}

// TestInOrderMissingAndTwice: a missing range is an IncompleteError, a
// range given twice ErrTwice, a changed byte a MismatchError.
func TestInOrderMissingAndTwice(t *testing.T) {
	data := bytes.Repeat([]byte("abc"), 1000)
	h := NewInOrder(expectOf(t, "md5", data), 1<<20)
	h.Write(0, data[:1000])
	h.Write(2000, data[2000:])
	var inc *IncompleteError
	if err := h.Verify(3000); !errors.As(err, &inc) || inc.Hashed != 1000 {
		t.Fatalf("Verify with a gap: %v", err)
	}
	if err := h.Write(500, data[500:900]); !errors.Is(err, ErrTwice) {
		t.Fatalf("a range before the frontier: %v", err)
	}
	if err := h.Write(2000, data[2000:]); !errors.Is(err, ErrTwice) {
		t.Fatalf("a parked range again: %v", err)
	}
	changed := append([]byte(nil), data[1000:2000]...)
	changed[0] ^= 1
	h.Write(1000, changed)
	var m *MismatchError
	if err := h.Verify(3000); !errors.As(err, &m) {
		t.Fatalf("Verify of a changed byte: %v", err)
	}
}

// TestInOrderAbort: a Write waiting for the window is released by Abort.
func TestInOrderAbort(t *testing.T) {
	h := NewInOrder(expectOf(t, "sha256", nil), 10)
	done := make(chan error)
	go func() { done <- h.Write(100, make([]byte, 50)) }()
	select {
	case err := <-done:
		t.Fatalf("a range past the window returned at once: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	stop := errors.New("copy failed")
	h.Abort(stop)
	if err := <-done; !errors.Is(err, stop) {
		t.Fatalf("Write after Abort: %v", err)
	}
}
