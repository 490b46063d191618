package syncproto

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/internal/synctest"
)

// ServeMain's exit codes: 0 synced, 2 refused or bad arguments, 1
// failed; its messages go to stderr, never to stdout (the protocol's).
func TestServeMain(t *testing.T) {
	var stderr bytes.Buffer
	if code := ServeMain([]string{"--serve", "/x"}, strings.NewReader(""), &bytes.Buffer{}, &stderr); code != 2 || !strings.Contains(stderr.String(), "takes no other arguments") {
		t.Fatalf("bad arguments: exit %d, %q", code, stderr.String())
	}
	d := t.TempDir()
	srcPath := filepath.Join(d, "src")
	want := synctest.Random(1, 1<<20+1)
	synctest.WriteFile(t, srcPath, want)
	for _, c := range []struct {
		dst  string
		code int
		say  string
	}{
		{filepath.Join(d, "dst"), 0, ""},
		{filepath.Join(d, "missing", "dst"), 2, "DST's folder does not exist"},
	} {
		client, server := pipes()
		stderr.Reset()
		code := make(chan int, 1)
		go func() { code <- ServeMain([]string{"--serve"}, server, server, &stderr) }()
		src, err := blocksync.OpenSource(srcPath)
		if err != nil {
			t.Fatal(err)
		}
		_, perr := Push(context.Background(), client, src, c.dst, Options{Create: true})
		src.Close()
		if got := <-code; got != c.code || !strings.Contains(stderr.String(), c.say) || (c.code == 0) != (perr == nil) {
			t.Fatalf("%s: exit %d, stderr %q, client %v", c.dst, got, stderr.String(), perr)
		}
		if c.code == 0 {
			synctest.Same(t, c.dst, want)
		}
	}
}
