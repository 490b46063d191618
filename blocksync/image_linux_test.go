package blocksync

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/synctest"
)

// A sync moves bytes as they are: an end that is a disk image container
// or (SRC) a compressed stream is refused, naming its format, where a
// copy would read the disk inside or refuse to write over it.
func TestRefuseImage(t *testing.T) {
	blocktest.NeedTool(t, "qemu-img")
	blocktest.NeedTool(t, "xz")
	dir := t.TempDir()
	image := filepath.Join(dir, "vm.qcow2")
	blocktest.Run(t, "qemu-img", "create", "-q", "-f", "qcow2", image, "1M")
	packed := filepath.Join(dir, "disk.xz")
	if out, err := exec.Command("sh", "-c", "head -c 65536 /dev/urandom | xz -0 > "+packed).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	raw := filepath.Join(dir, "raw")
	synctest.WriteFile(t, raw, synctest.Random(81, 65536))
	empty := filepath.Join(dir, "empty")
	synctest.WriteFile(t, empty, nil)
	for _, c := range []struct {
		path, end, want string
	}{
		{image, "SRC", "SRC is a qcow2 disk image"},
		{image, "DST", "DST is a qcow2 disk image"},
		{packed, "SRC", "SRC is xz-compressed"},
		{packed, "DST", ""}, // compressed bytes in DST are bytes to overwrite
		{raw, "SRC", ""},
		{raw, "DST", ""},
		{empty, "SRC", ""},
	} {
		f, err := OpenSource(c.path)
		if err != nil {
			t.Fatal(err)
		}
		err = f.RefuseImage(c.end)
		f.Close()
		if c.want == "" {
			if err != nil {
				t.Errorf("%s as %s: %v", c.path, c.end, err)
			}
			continue
		}
		wantRefused(t, err, KindImageFormat, c.want)
	}
}
