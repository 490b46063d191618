package httpobj

import (
	"fmt"
	"io"
	"testing"

	"github.com/ringcp/ringcp/internal/webtest"
)

// TestNginxSizes reads files of every awkward size from nginx, in
// parallel ranges of an odd length, and as a stream.
func TestNginxSizes(t *testing.T) {
	root := t.TempDir()
	for _, n := range sizes {
		writeFile(t, root, fmt.Sprint(n), pattern(n, 1))
	}
	for _, cfg := range []webtest.Config{{}, {TLS: true}, {TLS: true, HTTP2: true}} {
		s := webtest.Nginx(t, root, cfg)
		for _, n := range sizes {
			t.Run(fmt.Sprintf("%s/%d", s.URL[:5], n), func(t *testing.T) {
				want := pattern(n, 1)
				o := mustOpen(t, s.URL+"/"+fmt.Sprint(n), tlsOpts(s, Options{Connections: 4}))
				if !o.Ranges() || o.Size() != int64(n) || o.ETag() == "" {
					t.Fatalf("ranges %v size %d etag %q, want ranges, %d, an ETag", o.Ranges(), o.Size(), o.ETag(), n)
				}
				if cfg.HTTP2 && o.Proto() != "HTTP/2.0" {
					t.Fatalf("proto %s, want HTTP/2.0", o.Proto())
				}
				got, err := readParallel(o, 65536+3, 4)
				if err != nil {
					t.Fatal(err)
				}
				sameBytes(t, got, want)
				st := o.Stream()
				defer st.Close()
				got, err = io.ReadAll(st)
				if err != nil {
					t.Fatal(err)
				}
				sameBytes(t, got, want)
			})
		}
	}
}

// tlsOpts is opts trusting s's CA when s serves HTTPS.
func tlsOpts(s *webtest.Server, opts Options) Options {
	if s.TLSDir != "" {
		opts.CAFile = s.CAFile()
	}
	return opts
}
