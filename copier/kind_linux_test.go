package copier_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/blocktest"
	"golang.org/x/sys/unix"
)

// kindCase is one refusal Prepare must make: its Kind, the Options field
// at fault, and the errno it wraps (0 for none).
type kindCase struct {
	name  string
	opts  func(t *testing.T, dir string) copier.Options
	kind  copier.Kind
	field string
	errno syscall.Errno
}

// withFiles is a SRC of 64 KiB and an existing DST in dir.
func withFiles(t *testing.T, dir string, o copier.Options) copier.Options {
	writeFile(t, filepath.Join(dir, "src"), randomBytes(64<<10, 3))
	writeFile(t, filepath.Join(dir, "dst"), randomBytes(8<<10, 4))
	if o.Src == "" {
		o.Src = filepath.Join(dir, "src")
	}
	if o.Dst == "" {
		o.Dst = filepath.Join(dir, "dst")
	}
	return o
}

func plain(o copier.Options) func(*testing.T, string) copier.Options {
	return func(t *testing.T, dir string) copier.Options { return withFiles(t, dir, o) }
}

var kindCases = []kindCase{
	{"negative offset", plain(copier.Options{SrcOffset: -1}), copier.KindBadInput, "SrcOffset", 0},
	{"unknown engine", plain(copier.Options{Engine: "spdk"}), copier.KindBadInput, "Engine", 0},
	{"queue depth", plain(copier.Options{QueueDepth: 1 << 20}), copier.KindBadInput, "QueueDepth", 0},
	{"stdout as DST at an offset", plain(copier.Options{Dst: "-", DstOffset: 4096}), copier.KindNotSupported, "DstOffset", 0},
	{"stream of unknown size into a kept DST", plain(copier.Options{Src: "-", DstSize: copier.SizeKeep,
		Stream: copier.StreamOptions{Stdin: strings.NewReader("data")}}), copier.KindBadInput, "SrcSize", 0},
	{"offset past end", plain(copier.Options{SrcOffset: 1 << 20}), copier.KindBadInput, "SrcOffset", 0},
	{"range past end", plain(copier.Options{Length: 1 << 20, LengthSet: true}), copier.KindBadInput, "Length", 0},
	{"missing SRC", plain(copier.Options{Src: "/nonexistent/ringcp-src"}), copier.KindNotFound, "Src", syscall.ENOENT},
	{"missing DST folder", plain(copier.Options{Dst: "/nonexistent/ringcp-dst"}), copier.KindNotFound, "Dst", syscall.ENOENT},
	{"dangling DST", func(t *testing.T, dir string) copier.Options {
		o := withFiles(t, dir, copier.Options{Dst: filepath.Join(dir, "link")})
		if err := os.Symlink("nothing", o.Dst); err != nil {
			t.Fatal(err)
		}
		return o
	}, copier.KindNotFound, "Dst", syscall.ENOENT},
	{"directory", func(t *testing.T, dir string) copier.Options {
		return withFiles(t, dir, copier.Options{Dst: dir})
	}, copier.KindNotSupported, "Dst", syscall.EISDIR},
	{"character device", plain(copier.Options{Src: "/dev/tty"}), copier.KindNotSupported, "Src", 0},
	{"pseudo filesystem", plain(copier.Options{Src: "/proc/cpuinfo"}), copier.KindNotSupported, "Src", 0},
	{"same file", func(t *testing.T, dir string) copier.Options {
		o := withFiles(t, dir, copier.Options{})
		o.Dst = o.Src
		return o
	}, copier.KindOverlap, "Dst", 0},
	{"offload on a device", func(t *testing.T, dir string) copier.Options {
		blocktest.NeedRoot(t)
		dev, _ := blocktest.Device(t, 1<<20)
		return withFiles(t, dir, copier.Options{Dst: dev, Offload: copier.OffloadReflink})
	}, copier.KindNotSupported, "Offload", 0},
	{"device too small", func(t *testing.T, dir string) copier.Options {
		blocktest.NeedRoot(t)
		dev, _ := blocktest.Device(t, 1<<20)
		return withFiles(t, dir, copier.Options{Dst: dev, DstOffset: 1 << 20})
	}, copier.KindTooSmall, "Dst", 0},
	{"mounted", func(t *testing.T, dir string) copier.Options {
		blocktest.NeedRoot(t)
		blocktest.NeedTool(t, "mkfs.ext4")
		dev, _ := blocktest.Device(t, 32<<20)
		blocktest.Mkfs(t, dev, "ext4")
		blocktest.Mount(t, dev, "ext4", 0)
		return withFiles(t, dir, copier.Options{Dst: dev})
	}, copier.KindMounted, "Dst", 0},
	{"loop backing file in use", func(t *testing.T, dir string) copier.Options {
		blocktest.NeedRoot(t)
		o := withFiles(t, dir, copier.Options{})
		if err := os.Truncate(o.Dst, 1<<20); err != nil {
			t.Fatal(err)
		}
		blocktest.Loop(t, o.Dst)
		return o
	}, copier.KindInUse, "Dst", 0},
	{"locked", func(t *testing.T, dir string) copier.Options {
		o := withFiles(t, dir, copier.Options{})
		f, err := os.Open(o.Dst)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		return o
	}, copier.KindLocked, "Dst", 0},
	{"append-only", func(t *testing.T, dir string) copier.Options {
		o := withFiles(t, dir, copier.Options{})
		if out, err := runTool("chattr", "+a", o.Dst); err != nil {
			t.Skipf("chattr +a: %v %s", err, out)
		}
		t.Cleanup(func() { runTool("chattr", "-a", o.Dst) })
		return o
	}, copier.KindPermission, "Dst", 0},
	{"image format", func(t *testing.T, dir string) copier.Options {
		o := withFiles(t, dir, copier.Options{})
		qcow := append([]byte("QFI\xfb\x00\x00\x00\x03"), make([]byte, 4088)...)
		writeFile(t, o.Src, qcow)
		return o
	}, copier.KindImageFormat, "Src", 0},
}

// TestRefusalKinds: every kind of refusal a program may switch on, from
// real ends: the Kind, the Field, the errno errors.Is finds, and a
// message that speaks of fields, never of the command's flags.
func TestRefusalKinds(t *testing.T) {
	for _, c := range kindCases {
		t.Run(c.name, func(t *testing.T) {
			o := c.opts(t, t.TempDir())
			_, err := copier.Prepare(o)
			var r *copier.RefusedError
			if !errors.As(err, &r) {
				t.Fatalf("err = %v (%T), want a *copier.RefusedError", err, err)
			}
			if r.Kind != c.kind || r.Field != c.field {
				t.Errorf("%v: kind %q field %q, want %q %q", err, r.Kind, r.Field, c.kind, c.field)
			}
			if c.errno != 0 && !errors.Is(err, c.errno) {
				t.Errorf("%v: errors.Is(err, %v) is false", err, c.errno)
			}
			if msg := err.Error(); containsFlag(msg) {
				t.Errorf("%q names a command-line flag; the library speaks of Options fields", msg)
			}
		})
	}
}

// containsFlag finds " --x" or a leading "--x" in a message.
func containsFlag(msg string) bool {
	for i := 0; i+2 < len(msg); i++ {
		if msg[i] == '-' && msg[i+1] == '-' && msg[i+2] >= 'a' && msg[i+2] <= 'z' && (i == 0 || msg[i-1] == ' ' || msg[i-1] == '(') {
			return true
		}
	}
	return false
}

// runTool runs a command and returns its combined output.
func runTool(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}
