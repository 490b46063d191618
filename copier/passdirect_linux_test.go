package copier_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/faultfs"
)

// TestExistingDstOnPassDirectFUSE: DST on a FUSE mount whose server opens
// its backing file with the client's O_DIRECT (faultfs PassDirect, as
// go-fuse's loopback and virtiofsd with direct I/O allowed). An existing
// DST is opened with O_DIRECT, so the server's backing file is too, and
// the unaligned last block must reach the server through a fresh open
// without O_DIRECT: clearing O_DIRECT with fcntl never reaches it (issue
// 20: EINVAL at the tail, exit 1, DST cut). Odd sizes, both engines, new
// and existing DSTs, with and without --verify.
func TestExistingDstOnPassDirectFUSE(t *testing.T) {
	needRootFUSE(t)
	back, local := t.TempDir(), t.TempDir()
	fs := faultfs.MountWith(t, back, faultfs.Options{PassDirect: true})
	for _, size := range []int{1, 511, 4097, 1<<20 + 3} {
		data := noise(size, uint64(size)+40)
		src := filepath.Join(local, fmt.Sprint("src", size))
		writeFile(t, src, data)
		for _, e := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool} {
			for _, old := range []bool{true, false} {
				for _, verify := range []bool{false, true} {
					t.Run(fmt.Sprintf("%d/%s/existing=%v/verify=%v", size, e, old, verify), func(t *testing.T) {
						dst := fs.Path(fmt.Sprintf("dst-%d-%s-%v-%v", size, e, old, verify))
						if old {
							writeFile(t, dst, noise(64<<10+1, 41))
						} else {
							os.Remove(dst)
						}
						p, err := copier.Prepare(copier.Options{Src: src, Dst: dst, Engine: e, Verify: verify})
						if err != nil {
							t.Fatal(err)
						}
						rep, err := p.Run(context.Background())
						if err != nil || rep.DstState != copier.DstComplete {
							t.Fatalf("DST %v: %v", rep.DstState, err)
						}
						if !rep.DirectDst {
							t.Fatalf("DST was not written with O_DIRECT: the test tests nothing")
						}
						compareFile(t, dst, data)
					})
				}
			}
		}
	}
}
