package cli

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/cdi"
	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/guard"
	"github.com/ringcp/ringcp/unpack"
)

// TestSniffedDecisions: what the importer asks of copier, and what it
// refuses, for each kind of image, onto each kind of volume.
func TestSniffedDecisions(t *testing.T) {
	file, block := &cdi.Transfer{}, &cdi.Transfer{Block: true}
	for _, c := range []struct {
		name      string
		s         sniffed
		format    string
		resumable bool
		refuseOn  []*cdi.Transfer
		says      string
	}{
		{"raw", sniffed{compression: unpack.Raw, objectSize: 10, sized: true, pinned: true}, copier.SrcFormatRaw, true, nil, ""},
		{"raw of an unpinned object", sniffed{compression: unpack.Raw, objectSize: 10, sized: true}, copier.SrcFormatRaw, false, nil, ""},
		{"raw of no size", sniffed{compression: unpack.Raw, objectSize: -1}, copier.SrcFormatRaw, false, []*cdi.Transfer{block}, "size"},
		{"luks", sniffed{compression: unpack.Raw, container: "luks", sized: true, pinned: true}, copier.SrcFormatRaw, true, nil, ""},
		{"qcow2", sniffed{compression: unpack.Raw, container: "qcow2", sized: true, pinned: true}, copier.FormatQcow2, true, nil, ""},
		{"xz", sniffed{compression: unpack.Xz, sized: true}, "xz", false, nil, ""},
		{"gzip", sniffed{compression: unpack.Gzip}, "gzip", false, []*cdi.Transfer{block}, "size"},
		{"xz qcow2", sniffed{compression: unpack.Xz, container: "qcow2", sized: true}, copier.FormatQcow2, false, []*cdi.Transfer{file, block}, "only uncompressed"},
		{"sparse vmdk", sniffed{compression: unpack.Raw, container: "vmdk", where: sparseVmdk, sized: true, pinned: true}, copier.FormatVmdk, true, nil, ""},
		{"vmdk descriptor", sniffed{compression: unpack.Raw, container: "vmdk", where: "descriptor file", sized: true}, copier.FormatVmdk, true, []*cdi.Transfer{file, block}, "not a vmdk descriptor file"},
		{"gzip vmdk", sniffed{compression: unpack.Gzip, container: "vmdk", where: sparseVmdk}, "gzip", false, []*cdi.Transfer{file, block}, "only uncompressed"},
		{"vhdx", sniffed{compression: unpack.Raw, container: "vhdx", where: "vhdx", sized: true}, copier.SrcFormatRaw, true, []*cdi.Transfer{file, block}, "not vhdx"},
		{"qcow2 over a backing file", sniffed{compression: unpack.Raw, container: "qcow2", sized: true, backing: "base.qcow2"}, copier.FormatQcow2, true, []*cdi.Transfer{file, block}, "is invalid because it has backing file base.qcow2"},
		{"gzip vhdx", sniffed{compression: unpack.Gzip, container: "vhdx"}, "gzip", false, []*cdi.Transfer{file, block}, "vhdx"},
	} {
		if got := c.s.srcFormat(); got != c.format && c.refuseOn == nil {
			t.Errorf("%s: SrcFormat %q, want %q", c.name, got, c.format)
		}
		if got := c.s.resumable(); got != c.resumable && c.refuseOn == nil {
			t.Errorf("%s: resumable %v", c.name, got)
		}
		for _, tr := range []*cdi.Transfer{file, block} {
			refused := false
			for _, r := range c.refuseOn {
				refused = refused || r == tr
			}
			err := c.s.refusal(tr)
			switch {
			case refused && c.s.backing != "" && (err == nil || cdi.IsUnserved(err) || !strings.Contains(err.Error(), c.says)):
				t.Errorf("%s onto block %v: %v, want CDI's refusal saying %q", c.name, tr.Block, err, c.says)
			case refused && c.s.backing == "" && (err == nil || !cdi.IsUnserved(err) || !strings.Contains(err.Error(), c.says)):
				t.Errorf("%s onto block %v: %v, want an unserved refusal saying %q", c.name, tr.Block, err, c.says)
			case !refused && err != nil:
				t.Errorf("%s onto block %v: refused: %v", c.name, tr.Block, err)
			}
		}
	}
}

// TestChecksumOfContainers: a checksum of a qcow2 or vmdk image is
// refused (its file is never read whole), of raw bytes (luks included)
// it is not.
func TestChecksumOfContainers(t *testing.T) {
	sum := &cdi.Transfer{Checksum: "sha256:" + strings.Repeat("a", 64)}
	for _, c := range []struct {
		container string
		refused   bool
	}{{"", false}, {"luks", false}, {"qcow2", true}, {"vmdk", true}} {
		s := sniffed{compression: unpack.Raw, container: c.container, where: sparseVmdk, sized: true}
		err := s.refusal(sum)
		if refused := err != nil && cdi.IsUnserved(err) && strings.Contains(err.Error(), cdi.EnvChecksum); refused != c.refused {
			t.Errorf("%q: %v", c.container, err)
		}
	}
}

// TestVirtualSize: the disk's size before the copy, as the image's
// first bytes say it.
func TestVirtualSize(t *testing.T) {
	qcow := make([]byte, 72)
	copy(qcow, "QFI\xfb")
	binary.BigEndian.PutUint64(qcow[24:], 5<<30)
	huge := append([]byte(nil), qcow...)
	binary.BigEndian.PutUint64(huge[24:], 1<<63+5)
	vmdk := make([]byte, 512)
	copy(vmdk, "KDMV")
	binary.LittleEndian.PutUint64(vmdk[12:], 2048)
	for _, c := range []struct {
		container string
		head      []byte
		want      int64
	}{
		{"", nil, 77}, {"luks", nil, 77}, {"qcow2", qcow, 5 << 30}, {"qcow2", huge, math.MaxInt64},
		{"vmdk", vmdk, 1 << 20}, {"vhdx", qcow, -1}, {"qcow2", qcow[:20], -1},
	} {
		if got := virtualSize(c.container, c.head, 77); got != c.want {
			t.Errorf("%s (%d bytes): %d, want %d", c.container, len(c.head), got, c.want)
		}
	}
}

// TestQcow2Backing: the backing file a qcow2 header names, found where
// its offset and length say, quoted when it is not plain text.
func TestQcow2Backing(t *testing.T) {
	header := func(off uint64, name string) []byte {
		h := make([]byte, 512)
		copy(h, "QFI\xfb\x00\x00\x00\x03")
		binary.BigEndian.PutUint64(h[8:], off)
		binary.BigEndian.PutUint32(h[16:], uint32(len(name)))
		copy(h[off:], name)
		return h
	}
	for _, c := range []struct {
		head []byte
		want string
	}{
		{header(0, ""), ""},
		{header(104, "base.qcow2"), "base.qcow2"},
		{header(104, "a\nb"), `"a\nb"`},
		{header(104, "x")[:104], "(1 bytes at offset 104 of the image)"},
		{header(104, "x")[:12], ""}, // shorter than a header
	} {
		if got := qcow2Backing(c.head); got != c.want {
			t.Errorf("backing %q, want %q", got, c.want)
		}
	}
}

// TestSparseVmdkWord: the sniff tells a sparse vmdk by guard's words for
// its magic; words changed in guard must not refuse every vmdk.
func TestSparseVmdkWord(t *testing.T) {
	head := append([]byte("KDMV"), make([]byte, 508)...)
	if format, where := guard.ImageFormatOf(head, nil); format != "vmdk" || where != sparseVmdk {
		t.Fatalf("guard calls a KDMV header %q (%q), the sniff waits for %q", format, where, sparseVmdk)
	}
}

// TestCheckMountRoot: a filesystem volume's directory must be a mount's
// root, and no symbolic link.
func TestCheckMountRoot(t *testing.T) {
	if err := checkMountRoot("/"); err != nil {
		t.Errorf("/: %v", err)
	}
	dir := t.TempDir()
	err := checkMountRoot(dir)
	if err == nil || !strings.Contains(err.Error(), "not a mount") {
		t.Errorf("%s, a folder of /tmp: %v", dir, err)
	}
}
