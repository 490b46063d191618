package unpack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/expectsum"
	"github.com/ringcp/ringcp/httpobj"
	"github.com/ringcp/ringcp/internal/webtest"
	"github.com/ringcp/ringcp/stream"
)

// TestOverHTTP: images on nginx, read in parallel ranges ahead of the
// decoder (ReadAhead), and as one stream from a server without ranges,
// decode to the original; the compressed bytes counted are the file's,
// and their digest is the file's.
func TestOverHTTP(t *testing.T) {
	need(t, "xz", "zstd", "gzip")
	raw := image(2<<20+511, 12)
	root := t.TempDir()
	files := map[string]string{
		"img.xz":  `xz -T2 -0 --block-size=200000 -c "$IN" > "$OUT"`,
		"img.zst": `zstd -q -c "$IN" > "$OUT"`,
		"img.gz":  `gzip -c "$IN" > "$OUT"`,
	}
	packed := map[string][]byte{}
	for name, cmd := range files {
		packed[name] = compress(t, raw, cmd)
		if err := os.WriteFile(filepath.Join(root, name), packed[name], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, cfg := range []webtest.Config{{}, {NoRanges: true}} {
		s := webtest.Nginx(t, root, cfg)
		for name := range files {
			o, err := httpobj.Open(context.Background(), s.URL+"/"+name, httpobj.Options{Connections: 4})
			if err != nil {
				t.Fatal(err)
			}
			var src io.Reader
			if o.Ranges() {
				ra := stream.NewReadAhead(o, o.Size(), 100_000, o.Connections())
				defer ra.Close()
				src = ra
			} else {
				st := o.Stream()
				defer st.Close()
				src = st
			}
			sum := sha256.Sum256(packed[name])
			want, _ := expectsum.Parse("sha256:" + hex.EncodeToString(sum[:]))
			hashed := expectsum.NewReader(src, want)
			r, err := NewReader(hashed, Options{Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			r.Close()
			o.Close()
			if err != nil {
				t.Fatalf("%s (ranges %v): %v", name, o.Ranges(), err)
			}
			sameBytes(t, name, got, raw)
			if r.In() != int64(len(packed[name])) {
				t.Fatalf("%s: %d compressed bytes counted, the file has %d", name, r.In(), len(packed[name]))
			}
			// The decoder stops at the format's end; the hash needs the
			// transport's end too.
			io.Copy(io.Discard, hashed)
			if err := hashed.Verify(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
}
