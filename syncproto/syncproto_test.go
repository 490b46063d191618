package syncproto

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/blocksync"
	"github.com/ringcp/ringcp/internal/synctest"
)

// Every synctest pair, pushed and pulled over an in-process connection:
// DST ends byte for byte equal to SRC, both sides report the same
// counts, which are the model's (only the differing granules moved),
// and the whole digests agree.
func TestPushPull(t *testing.T) {
	for _, g := range []int{64 << 10, 4096} {
		for i, c := range synctest.Cases(g) {
			alg := blocksync.Algorithms[i%2]
			for _, dir := range []string{"push", "pull"} {
				t.Run(fmt.Sprintf("%dK/%s/%s/%v", g>>10, c.Name, dir, alg), func(t *testing.T) {
					d := t.TempDir()
					srcPath, dstPath := filepath.Join(d, "src"), filepath.Join(d, "dst")
					synctest.WriteFile(t, srcPath, c.Src)
					synctest.WriteDst(t, dstPath, c)
					opt := Options{Granule: g, Window: 2 * g, Workers: 3, Digest: alg}
					var cl, sv Result
					var cerr, serr error
					if dir == "push" {
						cl, sv, cerr, serr = push(t, context.Background(), srcPath, dstPath, opt)
					} else {
						cl, sv, cerr, serr = pull(t, context.Background(), srcPath, dstPath, blocksync.TargetOptions{}, opt)
					}
					if cerr != nil || serr != nil {
						t.Fatalf("client: %v; server: %v", cerr, serr)
					}
					synctest.Same(t, dstPath, c.Src)
					checkResult(t, cl, c, g)
					checkResult(t, sv, c, g)
					if cl.Whole != sv.Whole || cl.Digest != alg || sv.Digest != alg || cl.Peer != "testhost" {
						t.Errorf("client %+v\nserver %+v", cl, sv)
					}
				})
			}
		}
	}
}

// checkResult compares a side's counts with the model's.
func checkResult(t *testing.T, r Result, c synctest.Case, g int) {
	t.Helper()
	written, zeroed, granules := synctest.Expect(c, g)
	size, old := int64(len(c.Src)), int64(len(c.Dst))
	want := blocksync.Stats{Size: size, OldSize: old, SrcRead: size, DstRead: min(size, old),
		Written: written, Zeroed: zeroed, Granules: blocksync.Granules(size, g), Changed: granules}
	if r.Stats != want {
		t.Errorf("stats\n got %+v\nwant %+v", r.Stats, want)
	}
	if r.Sent <= 0 || r.Received <= 0 {
		t.Errorf("sent %d, received %d", r.Sent, r.Received)
	}
}
