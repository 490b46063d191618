package copier

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/blkhash"
	"github.com/ringcp/ringcp/engine/enginetest"
)

// TestChecksumImageioByDefault: Checksum with no ReadOptions.Sum gives the
// oVirt imageio checksum, the same as blkhash's block digests assembled
// one by one, at sizes that end inside a block and with a zero block; a
// caller wraps nothing.
func TestChecksumImageioByDefault(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int64{0, 1, 4097, 9<<20 + 511} {
		data := enginetest.RandomBytes(size, uint64(size)+3)
		if size > 5<<20 {
			clear(data[4<<20 : 8<<20])
		}
		path := filepath.Join(dir, "src")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := Checksum(context.Background(), ReadOptions{Src: path})
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		want := blkhash.New(size)
		for i := int64(0); i < blkhash.Blocks(size); i++ {
			want.Block(i, blkhash.BlockDigest(data[i*blkhash.BlockSize:min(size, (i+1)*blkhash.BlockSize)]))
		}
		w, err := want.Result()
		if err != nil {
			t.Fatal(err)
		}
		if rep.Checksum == nil || *rep.Checksum != ChecksumResult(w) {
			t.Errorf("%d bytes: %+v, want %+v", size, rep.Checksum, w)
		}
	}
}
