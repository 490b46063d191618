package fallback_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/align"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/fallback"
	"golang.org/x/sys/unix"
)

// TestPoolWritesDirectExt4ThroughRings: the pool writes a new sparse file
// opened O_DIRECT on ext4 through io_uring (ringwrite_linux.go), every
// worker at once into the file's holes, and the file holds what was
// written, with the holes between left as holes; a write that O_DIRECT
// refuses fails with the errno pwrite gives (EINVAL); the same file
// without O_DIRECT is written with pwrite, as before, and so is one a
// pool of descriptors alone writes (the fallback where io_uring is not
// there or not trusted, and --engine pool): rings only where the pool
// serves an end that moves its own bytes.
func TestPoolWritesDirectExt4ThroughRings(t *testing.T) {
	dir := t.TempDir()
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil || fs.Type != unix.EXT4_SUPER_MAGIC {
		t.Skipf("%s is not on ext4: the rings are for ext4's allocating O_DIRECT writes", dir)
	}
	const depth, piece, gap = 8, 48 << 10, 16 << 10
	bufs, err := align.AllocBuffers(depth, piece)
	if err != nil {
		t.Fatal(err)
	}
	defer bufs.Free()
	cases := []struct {
		name              string
		direct, servesEnd bool
	}{
		{"direct", true, true},
		{"buffered", false, true},
		{"direct-descriptors-only", true, false}, // the fallback proper, and --engine pool
	}
	for _, tc := range cases {
		direct, rings := tc.direct, tc.direct && tc.servesEnd
		path := filepath.Join(dir, tc.name)
		flags := os.O_RDWR | os.O_CREATE
		if direct {
			flags |= unix.O_DIRECT
		}
		dst, err := os.OpenFile(path, flags, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		const rounds = 16
		size := int64(rounds * depth * (piece + gap))
		if err := dst.Truncate(size); err != nil {
			t.Fatal(err)
		}
		setup := engine.Setup{Files: engine.Files{engine.FileDst: dst}, Buffers: bufs.Slots, Depth: depth}
		if tc.servesEnd {
			setup.Ends[engine.FileSrc] = &stream{t: t, name: "src", rng: rand.New(rand.NewPCG(1, 3))}
		}
		p, err := fallback.New(setup)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]byte, size)
		for r := range rounds {
			var reqs []engine.Request
			for i, b := range bufs.Slots {
				off := int64((r*depth + i) * (piece + gap))
				for j := range b {
					b[j] = byte(r*31 + i*7 + j%251 + 1)
				}
				copy(want[off:], b)
				reqs = append(reqs, engine.Request{Op: engine.OpWrite, File: engine.FileDst, Slot: i, Buf: b, Off: off})
			}
			if _, err := p.Submit(reqs); err != nil {
				t.Fatal(err)
			}
			for _, c := range reap(t, p, depth) {
				if c.Errno != 0 || c.N != piece {
					t.Fatalf("direct %v: write of slot %d: %d bytes, %v", direct, c.Slot, c.N, c.Errno)
				}
			}
		}
		if direct {
			// 4097 bytes: not a multiple of the logical block size.
			p.Submit([]engine.Request{{Op: engine.OpWrite, File: engine.FileDst, Buf: bufs.Slots[0][:4097], Off: 0}})
			if c := reap(t, p, 1)[0]; c.Errno != syscall.EINVAL {
				t.Errorf("unaligned O_DIRECT write: %d bytes, errno %v: want EINVAL", c.N, c.Errno)
			}
		}
		detail := p.Caps().Detail
		if got := strings.Contains(detail, "io_uring"); got != rings {
			t.Errorf("%s: Caps %q: want io_uring named %v", tc.name, detail, rings)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		dst.Close()
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("direct %v: the file differs from what was written", direct)
		}
		var st unix.Stat_t
		if err := unix.Stat(path, &st); err != nil {
			t.Fatal(err)
		}
		if alloc, data := st.Blocks*512, int64(rounds*depth*piece); alloc > data+data/8 {
			t.Errorf("direct %v: %d bytes allocated for %d of data: the holes were filled", direct, alloc, data)
		}
	}
}

// reap takes n completions from p.
func reap(t *testing.T, p engine.Backend, n int) []engine.Completion {
	t.Helper()
	out := make([]engine.Completion, n)
	for got := 0; got < n; {
		k, err := p.Reap(out[got:], n-got, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			t.Fatalf("%d of %d completions in 10 s", got, n)
		}
		got += k
	}
	return out
}
