package nbd

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/nbdtest"
)

// TestURIAsLibnbdReadsIt holds our reading of NBD URIs against libnbd's
// own (nbdinfo --json, the reader of nbdcopy, nbdfuse and virt-v2v): one
// nbdkit per socket whose names differ by exactly what a careless reader
// confuses ("+", a space, a literal "%2B", ";", "&"), each serving an
// export of its own size, so the size says which socket a URI reached.
// Where we accept a URI, libnbd must reach the same socket; where libnbd
// guesses (a parameter twice, ";" splitting a name, a fragment) we refuse,
// and the log says what libnbd did.
func TestURIAsLibnbdReadsIt(t *testing.T) {
	needBin(t, "nbdkit")
	needBin(t, "nbdinfo")
	dir := t.TempDir()
	socks := []string{"a+b.sock", "a b.sock", "a%2Bb.sock", "a", "a;b.sock", "a&b.sock", "a=b?c.sock"}
	for i, name := range socks {
		nbdtest.StartAt(t, filepath.Join(dir, name), "", "nbdkit", "-f", "null", fmt.Sprintf("size=%d", sockSize(i)))
	}
	at := "nbd+unix:///?socket=" + dir + "/"
	for _, tc := range []struct {
		uri  string
		want int // the socket reached; -1: refused by ParseURI
	}{
		{at + "a+b.sock", 0},
		{at + "a%2Bb.sock", 0},
		{at + "a%2bb.sock", 0},
		{at + "a%20b.sock", 1},
		{at + "a%252Bb.sock", 2},
		{at + "a;b.sock&x-a=1", 4},
		{at + "a%3Bb.sock", 4},
		{at + "a%26b.sock", 5},
		{at + "a=b?c.sock", 6},
		{"nbd+unix:///?x-a=1;socket=" + dir + "/a", 3},
		{"nbd+unix:///?%73ocket=" + dir + "/a+b.sock", 0},
		{"nbd+unix:///?=x&socket=" + dir + "/a+b.sock&&", 0},
		{UnixURI("", filepath.Join(dir, "a b.sock")), 1},
		{UnixURI("", filepath.Join(dir, "a=b?c.sock")), 6},
		{at + "a;b.sock", -1},                               // libnbd: socket "a", and ignores "b.sock"
		{at + "a b.sock", -1},                               // libnbd: cannot parse
		{at + "a+b.sock#frag", -1},                          // libnbd: drops the fragment
		{at + "a+b.sock&socket=" + dir + "/a%20b.sock", -1}, // libnbd: the last one
		{at + "a%00b.sock", -1},                             // libnbd: cut at the NUL, socket "a"
		{at + "a+b.sock&unknown=1", -1},                     // libnbd: ignored
	} {
		theirs, theirErr := libnbdSize(tc.uri)
		a, err := ParseURI(tc.uri)
		if tc.want < 0 {
			if err == nil {
				t.Errorf("%s: accepted as socket %q; want it refused", tc.uri, a.Addr)
			}
			t.Logf("%s: refused (%v); libnbd: size %d, %v", tc.uri, err, theirs, theirErr)
			continue
		}
		if theirErr != nil || theirs != sockSize(tc.want) {
			t.Errorf("%s: libnbd reached size %d (%v); want socket %q", tc.uri, theirs, theirErr, socks[tc.want])
		}
		ours, err := dialSize(tc.uri)
		if err != nil || ours != sockSize(tc.want) {
			t.Errorf("%s: we reached size %d (%v, socket %q); want socket %q, as libnbd", tc.uri, ours, err, a.Addr, socks[tc.want])
		}
	}
}

// TestExportNameAsLibnbdReadsIt: the export name, written every way,
// reaches the server as libnbd sends it (nbdkit's info plugin serves the
// name it was asked for, as the export's bytes).
func TestExportNameAsLibnbdReadsIt(t *testing.T) {
	needBin(t, "nbdkit")
	needBin(t, "nbdinfo")
	sock := filepath.Join(t.TempDir(), "e.sock")
	nbdtest.StartAt(t, sock, "", "nbdkit", "-f", "info", "mode=exportname")
	for _, tc := range []struct{ path, want string }{
		{"/a+b", "a+b"},
		{"/a%2Bb", "a+b"},
		{"/a%20b", "a b"},
		{"/%C3%A9t%C3%A9", "\u00e9t\u00e9"},
		{"//disk", "/disk"},
		{"/a%2Fb;c=d", "a/b;c=d"},
		{"/a:b@c!$'()*,~", "a:b@c!$'()*,~"},
	} {
		uri := "nbd+unix://" + tc.path + "?socket=" + sock
		name, theirErr := libnbdName(uri)
		if theirErr != nil || name != tc.want {
			t.Errorf("%s: libnbd sent %q (%v); want %q", uri, name, theirErr, tc.want)
		}
		cl, err := Dial(context.Background(), uri, Options{Timeout: 10 * time.Second})
		if err != nil {
			t.Errorf("%s: %v", uri, err)
			continue
		}
		buf := make([]byte, cl.Info().Size)
		if _, err := cl.ReadAt(buf, 0); err != nil || string(buf) != tc.want {
			t.Errorf("%s: the server got the name %q (%v); want %q, as libnbd sends it", uri, buf, err, tc.want)
		}
		cl.Close()
	}
}

// sockSize is the export size of the i-th socket's server.
func sockSize(i int) int64 { return int64(i+1) * 512 }

// nbdinfoJSON is the part of nbdinfo --json we read.
type nbdinfoJSON struct {
	Exports []struct {
		Name string `json:"export-name"`
		Size int64  `json:"export-size"`
	} `json:"exports"`
}

// libnbd asks nbdinfo about uri.
func libnbd(uri string) (nbdinfoJSON, error) {
	var out nbdinfoJSON
	b, err := exec.Command("nbdinfo", "--json", uri).CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%v: %s", err, strings.TrimSpace(string(b)))
	}
	if err := json.Unmarshal(b, &out); err != nil || len(out.Exports) != 1 {
		return out, fmt.Errorf("nbdinfo --json: %v: %s", err, b)
	}
	return out, nil
}

func libnbdSize(uri string) (int64, error) {
	out, err := libnbd(uri)
	if err != nil {
		return -1, err
	}
	return out.Exports[0].Size, nil
}

func libnbdName(uri string) (string, error) {
	out, err := libnbd(uri)
	if err != nil {
		return "", err
	}
	return out.Exports[0].Name, nil
}

// dialSize connects as ringcp does and says the export's size.
func dialSize(uri string) (int64, error) {
	cl, err := Dial(context.Background(), uri, Options{Timeout: 10 * time.Second})
	if err != nil {
		return -1, err
	}
	defer cl.Close()
	return cl.Info().Size, nil
}
