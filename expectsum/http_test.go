package expectsum

import (
	"context"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ringcp/ringcp/httpobj"
	"github.com/ringcp/ringcp/internal/webtest"
)

// TestInOrderOverHTTP: ranges read from nginx by several goroutines, in
// the order they were handed out and completing in any order, hash to
// the file's digest; the wrong digest is a mismatch.
func TestInOrderOverHTTP(t *testing.T) {
	data := make([]byte, 3<<20+511)
	for i := range data {
		data[i] = byte(rand.N(256))
	}
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "img"), data, 0o644)
	s := webtest.Nginx(t, root, webtest.Config{})
	o, err := httpobj.Open(context.Background(), s.URL+"/img", httpobj.Options{Connections: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	sum := sha512.Sum512(data)
	good, _ := Parse("sha512:" + hex.EncodeToString(sum[:]))
	sum[0] ^= 1
	bad, _ := Parse("sha512:" + hex.EncodeToString(sum[:]))
	for _, e := range []Expect{good, bad} {
		h := NewInOrder(e, 1<<20)
		const chunk = 200_003
		var next int64
		var mu sync.Mutex
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := make([]byte, chunk)
				for {
					mu.Lock()
					off := next
					next += chunk
					mu.Unlock()
					if off >= o.Size() {
						return
					}
					n, err := o.ReadAt(buf, off)
					if err != nil && off+int64(n) != o.Size() {
						h.Abort(err)
						return
					}
					if err := h.Write(off, buf[:n]); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		err := h.Verify(o.Size())
		var m *MismatchError
		if e.String() == good.String() && err != nil || e.String() == bad.String() && !errors.As(err, &m) {
			t.Fatalf("%s: %v", e.Algo, err)
		}
	}
}
