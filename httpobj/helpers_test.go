package httpobj

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// sizes are the awkward lengths every read is tried at.
var zeroTime time.Time

var sizes = []int{0, 1, 511, 4096, 4097, 1<<20 + 3, 3<<20 + 511}

// pattern is n bytes no two ranges of which are alike.
func pattern(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < n; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// writeFile puts data at root/name.
func writeFile(t testing.TB, root, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// readParallel reads the whole object with workers ReadAt calls at once,
// chunk bytes each, in the order a copy would hand them out.
func readParallel(o *Object, chunk, workers int) ([]byte, error) {
	size := o.Size()
	out := make([]byte, size)
	var next int64
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				off := next
				next += int64(chunk)
				mu.Unlock()
				if off >= size {
					return
				}
				end := min(off+int64(chunk), size)
				n, err := o.ReadAt(out[off:end], off)
				if err == io.EOF && off+int64(n) == size {
					err = nil
				}
				if err == nil && n != int(end-off) {
					err = fmt.Errorf("ReadAt at %d: %d bytes, want %d", off, n, end-off)
				}
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					next = size
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return out, first
}

// mustOpen opens url or fails the test.
func mustOpen(t testing.TB, url string, opts Options) *Object {
	t.Helper()
	o, err := Open(context.Background(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

// sameBytes fails the test unless got is want, naming the first
// difference.
func sameBytes(t testing.TB, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	t.Fatalf("bytes differ at offset %d (got %d bytes, want %d)", i, len(got), len(want))
}

// wantKind fails the test unless err is an *Error of kind.
func wantKind(t testing.TB, err, kind error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, kind) {
		t.Fatalf("got %v, want an *Error of kind %q", err, kind)
	}
	return e
}

// noSecret fails the test if s holds any of secrets.
func noSecret(t testing.TB, s string, secrets ...string) {
	t.Helper()
	for _, secret := range secrets {
		if strings.Contains(s, secret) {
			t.Fatalf("%q shows the secret %q", s, secret)
		}
	}
}

// logTo is an Options.Logf that keeps the lines for the test.
func logTo(t testing.TB, lines *[]string, mu *sync.Mutex) func(string, ...any) {
	return func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		line := fmt.Sprintf(format, args...)
		*lines = append(*lines, line)
		t.Log(line)
	}
}
