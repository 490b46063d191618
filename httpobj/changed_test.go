package httpobj

import (
	"bytes"
	"net/http"
	"testing"
	"time"
)

// TestChangedBetweenRanges: the object changes after the first range;
// whichever way the server answers the pinned request (412 to If-Match or
// If-Unmodified-Since, the whole object to If-Range, or the range of the
// new object as if no condition was sent), the read fails with
// ErrChanged and no byte of the new object is returned.
func TestChangedBetweenRanges(t *testing.T) {
	old, fresh := pattern(100_000, 12), pattern(100_000, 13)
	modTime := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name          string
		etag, newEtag string
		mod, newMod   time.Time
		newData       []byte
		drop          []string // request headers the server ignores
	}{
		{"if-match", `"v1"`, `"v2"`, time.Time{}, time.Time{}, fresh, nil},
		{"if-range", `"v1"`, `"v2"`, time.Time{}, time.Time{}, fresh, []string{"If-Match"}},
		{"ignores-conditions", `"v1"`, `"v2"`, time.Time{}, time.Time{}, fresh, []string{"If-Match", "If-Range"}},
		{"last-modified", "", "", modTime, modTime.Add(time.Second), fresh, nil},
		{"last-modified-if-range", "", "", modTime, modTime.Add(time.Second), fresh, []string{"If-Unmodified-Since"}},
		{"weak-etag", `W/"v1"`, `W/"v2"`, time.Time{}, time.Time{}, fresh, []string{"If-Match"}},
		{"size-only", "", "", time.Time{}, time.Time{}, fresh[:99_999], nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFaultServer(t, old)
			f.change(old, tc.etag, tc.mod)
			f.setFault(func(n int, w http.ResponseWriter, r *http.Request) bool {
				for _, h := range tc.drop {
					r.Header.Del(h)
				}
				return false
			})
			o := mustOpen(t, f.url(), quick(t))
			p := make([]byte, 50_000)
			if _, err := o.ReadAt(p, 0); err != nil {
				t.Fatal(err)
			}
			sameBytes(t, p, old[:50_000])
			f.change(tc.newData, tc.newEtag, tc.newMod)
			clear(p)
			n, err := o.ReadAt(p, 50_000)
			wantKind(t, err, ErrChanged)
			if n != 0 || !bytes.Equal(p, make([]byte, len(p))) {
				t.Fatalf("%d bytes of the new object returned with the error", n)
			}
		})
	}
}
