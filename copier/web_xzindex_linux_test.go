package copier_test

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
)

// claimedObject is an object of size bytes that stores only its first
// and last bytes (zeros between), served with ranges: what a hostile
// server may claim.
type claimedObject struct {
	size       int64
	head, tail []byte
	off        int64
}

func (c *claimedObject) Read(p []byte) (int, error) {
	if c.off >= c.size {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), c.size-c.off)]
	clear(p)
	tailStart := c.size - int64(len(c.tail))
	for i := range p {
		switch at := c.off + int64(i); {
		case at < int64(len(c.head)):
			p[i] = c.head[at]
		case at >= tailStart:
			p[i] = c.tail[at-tailStart]
		}
	}
	c.off += int64(len(p))
	return len(p), nil
}

func (c *claimedObject) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
		c.off = off
	case io.SeekCurrent:
		c.off += off
	case io.SeekEnd:
		c.off = c.size + off
	}
	return c.off, nil
}

// xzEnds are an xz stream's header and a footer that claims an index of
// (words+1)*4 bytes (CRC32 check).
func xzEnds(words uint32) (head, foot []byte) {
	head = []byte{0xFD, '7', 'z', 'X', 'Z', 0, 0, 1}
	head = binary.LittleEndian.AppendUint32(head, crc32.ChecksumIEEE(head[6:8]))
	foot = make([]byte, 12)
	binary.LittleEndian.PutUint32(foot[4:8], words)
	foot[8], foot[9], foot[10], foot[11] = 0, 1, 'Y', 'Z'
	binary.LittleEndian.PutUint32(foot[:4], crc32.ChecksumIEEE(foot[4:10]))
	return head, foot
}

// TestWebXzHostileIndex: an xz object claimed to be 20 GiB whose footer
// says its index is 16 GiB is refused before DST is touched, with a line
// that says so; before, the sizing allocated the 16 GiB.
func TestWebXzHostileIndex(t *testing.T) {
	head, foot := xzEnds(0xFFFFFFFF)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		http.ServeContent(w, r, "obj.xz", time.Time{}, &claimedObject{size: 20 << 30, head: head, tail: foot})
	}))
	defer ts.Close()
	dst := filepath.Join(t.TempDir(), "dst")
	_, err := copier.Copy(context.Background(), copier.Options{Src: ts.URL + "/obj.xz", Dst: dst})
	var refused *copier.RefusedError
	if !errors.As(err, &refused) || refused.Kind != copier.KindImageFormat {
		t.Fatalf("%v; want a refusal of kind %s", err, copier.KindImageFormat)
	}
	if !strings.Contains(err.Error(), "xz index of 17179869184 bytes") {
		t.Errorf("the refusal does not say the index's size: %v", err)
	}
	if _, serr := os.Lstat(dst); serr == nil {
		t.Error("the refusal left DST")
	}
}
