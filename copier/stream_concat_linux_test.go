package copier_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/webtest"
)

// Compressed images as people make them by hand: members, frames or
// streams concatenated (cat a.gz b.gz, pzstd, xz with stream padding),
// and with bytes after their end (trailing garbage, a truncated second
// member). Whatever the transport (a local file, nginx with and without
// ranges, stdin), the copy is either the concatenation decompressed,
// byte for byte as the format's own tool gives it, or a failure with no
// DST: never a DST that stops at the first member or takes the garbage.
// What the tool refuses, the copy refuses; what it takes with a warning
// (trailing zeros), the copy may refuse.

// concatCase is one compressed file made of parts.
type concatCase struct {
	name  string
	parts [][]byte // written one after the other
	must  bool     // valid: the copy must succeed
	tool  string   // the tool that judges it: "xz -dc" etc.
}

func packed(t *testing.T, tool string, args []string, data []byte) []byte {
	t.Helper()
	need(t, tool)
	cmd := exec.Command(tool, args...)
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return out
}

// decompressed is what tool -dc makes of b, and whether it succeeded.
func decompressed(t *testing.T, tool string, b []byte) ([]byte, bool) {
	cmd := exec.Command(tool, "-dc")
	cmd.Stdin = bytes.NewReader(b)
	out, err := cmd.Output()
	return out, err == nil
}

func TestCompressedConcatenated(t *testing.T) {
	a, b := packableImage(1<<20+333, 61), packableImage(2<<20+4097, 62)
	root := t.TempDir()
	var cases []concatCase
	for _, f := range []struct {
		tool string
		args []string
	}{{"gzip", []string{"-c"}}, {"zstd", []string{"-q", "-c"}}, {"xz", []string{"-c"}}, {"xz", []string{"-T0", "-c"}}, {"bzip2", []string{"-c"}}} {
		pa, pb := packed(t, f.tool, f.args, a), packed(t, f.tool, f.args, b)
		name := f.tool + fmt.Sprint(len(f.args))
		cases = append(cases,
			concatCase{name: name + "-two", parts: [][]byte{pa, pb}, tool: f.tool, must: true},
			concatCase{name: name + "-garbage", parts: [][]byte{pa, []byte("garbage!")}, tool: f.tool},
			concatCase{name: name + "-cut-second", parts: [][]byte{pa, pb[:len(pb)/2]}, tool: f.tool},
			concatCase{name: name + "-zeros4", parts: [][]byte{pa, make([]byte, 4)}, tool: f.tool},
			concatCase{name: name + "-zeros3", parts: [][]byte{pa, make([]byte, 3)}, tool: f.tool},
		)
		if f.tool == "xz" {
			cases = append(cases, concatCase{name: name + "-padded-two", parts: [][]byte{pa, make([]byte, 8), pb, make([]byte, 4)}, tool: f.tool, must: true})
		}
	}
	s := webtest.Nginx(t, root, webtest.Config{})
	plain := webtest.Nginx(t, root, webtest.Config{NoRanges: true})
	for _, c := range cases {
		file := bytes.Join(c.parts, nil)
		want, ok := decompressed(t, c.tool, file)
		path := filepath.Join(root, c.name)
		writeFile(t, path, file)
		srcs := map[string]string{"file": path, "ranges": s.URL + "/" + c.name, "noranges": plain.URL + "/" + c.name, "stdin": "-"}
		for how, src := range srcs {
			t.Run(c.name+"/"+how, func(t *testing.T) {
				dst := filepath.Join(t.TempDir(), "dst")
				o := copier.Options{Src: src, Dst: dst, BlockSize: 256 << 10}
				if src == "-" {
					o.Stream.Stdin = bytes.NewReader(file)
				}
				_, err := copier.Copy(context.Background(), o)
				switch {
				case c.must && !ok:
					t.Fatalf("%s -dc fails on a valid file", c.tool)
				case c.must && err != nil:
					t.Fatalf("%s -dc decompresses it (%d bytes), ringcp: %v", c.tool, len(want), err)
				case ok && err != nil:
					// Stricter than the tool (which warns): safe.
					t.Logf("%s -dc takes it (%d bytes), ringcp refuses: %v", c.tool, len(want), err)
				case ok:
					compareFile(t, dst, want)
				case err == nil:
					got, _ := os.ReadFile(dst)
					t.Fatalf("%s -dc fails on it, ringcp copied %d bytes with no error", c.tool, len(got))
				default:
					var refused *copier.RefusedError
					if _, serr := os.Lstat(dst); serr == nil {
						t.Fatalf("failed (%v) and left DST", err)
					}
					t.Logf("refused %v: %v", errors.As(err, &refused), err)
				}
			})
		}
	}
}
