package guard

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// TestImageFormatSignatures: each container is known by its signature
// where qemu looks for it, and nowhere else.
func TestImageFormatSignatures(t *testing.T) {
	vdi := make([]byte, 512)
	binary.LittleEndian.PutUint32(vdi[0x40:], 0xbeda107f)
	shifted := make([]byte, 512)
	binary.LittleEndian.PutUint32(shifted[0x44:], 0xbeda107f)
	cases := []struct {
		name       string
		head, foot []byte
		want       string
	}{
		{"qcow2 v3", []byte("QFI\xfb\x00\x00\x00\x03rest"), nil, "qcow2"},
		{"qcow v1", []byte("QFI\xfb\x00\x00\x00\x01rest"), nil, "qcow"},
		{"qed", []byte("QED\x00...."), nil, "qed"},
		{"vmdk sparse", []byte("KDMV\x01\x00\x00\x00"), nil, "vmdk"},
		{"vmdk esx", []byte("COWD\x01\x00\x00\x00"), nil, "vmdk"},
		{"vmdk descriptor", []byte("# Disk DescriptorFile\nversion=1\n"), nil, "vmdk"},
		{"vhdx", []byte("vhdxfile\x00\x00"), nil, "vhdx"},
		{"vdi", vdi, nil, "vdi"},
		{"vdi signature elsewhere", shifted, nil, ""},
		{"dynamic vhd", []byte("conectix\x00\x00\x00\x02"), nil, "vpc"},
		{"fixed vhd", make([]byte, 512), append([]byte("conectix"), make([]byte, 504)...), "vpc"},
		{"luks", []byte("LUKS\xba\xbe\x00\x01"), nil, "luks"},
		{"mbr", append(bytes.Repeat([]byte{0xeb, 0x63, 0x90}, 170), 0x55, 0xaa), nil, ""},
		{"zeros", make([]byte, 512), make([]byte, 512), ""},
		{"short", []byte("QFI"), nil, ""},
		{"empty", nil, nil, ""},
	}
	for _, c := range cases {
		if got, _ := imageFormat(c.head, c.foot); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestReadEndsFooterOnlyWhenInRange: a fixed VHD's footer is its last 512
// bytes; a range that stops before them copies pure disk data, and is
// not refused.
func TestReadEndsFooterOnlyWhenInRange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fixed.vhd")
	data := append(make([]byte, 8192), append([]byte("conectix"), make([]byte, 504)...)...)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	size := int64(len(data))
	if _, foot := readEnds(path, size, size); !bytes.HasPrefix(foot, []byte("conectix")) {
		t.Errorf("whole file: footer %q", foot)
	}
	if _, foot := readEnds(path, size, size-512); foot != nil {
		t.Errorf("range without the footer read it: %q", foot)
	}
}
