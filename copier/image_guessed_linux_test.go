package copier_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/qemutest"
)

// Images whose bytes someone else chose: a guest that wrote a qcow2
// header into the first sector of its raw disk, hoping the host reads a
// file of its choosing into a copy of that disk.

// secretFile is a file of the host the guest must never read: a stand-in
// for /etc/shadow.
func secretFile(t testing.TB, dir string) (string, []byte) {
	secret := bytes.Repeat([]byte("host secret, not the guest's\n"), 2000)
	path := filepath.Join(dir, "secret")
	writeFile(t, path, secret)
	return path, secret
}

// rawDiskWithHeader is a raw disk of random bytes whose first bytes are
// a qcow2 header naming backing as a raw backing file, as a guest can
// write them.
func rawDiskWithHeader(t testing.TB, dir, backing string) string {
	hdr := filepath.Join(dir, "hdr.qcow2")
	qemu(t, "qemu-img", "create", "-q", "-f", "qcow2", "-b", backing, "-F", "raw", hdr, "1m")
	h, err := os.ReadFile(hdr)
	if err != nil {
		t.Fatal(err)
	}
	disk := randomBytes(4<<20, 24)
	copy(disk, h)
	path := filepath.Join(dir, "guest.raw")
	writeFile(t, path, disk)
	return path
}

// TestGuessedImageNamesRefused: a raw disk that starts with a qcow2
// header naming a backing file is not read as that image when its format
// was only guessed: the copy is refused and the file it names is never
// copied; said raw, its bytes are copied; said qcow2, it is read as one.
func TestGuessedImageNamesRefused(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	dir := t.TempDir()
	secretPath, secret := secretFile(t, dir)
	disk := rawDiskWithHeader(t, dir, secretPath)
	dst := filepath.Join(dir, "copy")
	_, err := copier.Copy(context.Background(), copier.Options{Src: disk, Dst: dst})
	var refused *copier.RefusedError
	if !errors.As(err, &refused) || refused.Kind != copier.KindImageFormat || !strings.Contains(err.Error(), "guessed") ||
		!strings.Contains(err.Error(), "Options.SrcFormat qcow2") {
		got, _ := os.ReadFile(dst)
		t.Fatalf("got %v; want a refusal naming the guess (DST holds the secret: %v)", err, bytes.Contains(got, secret[:100]))
	}
	if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("DST was made: %v", err)
	}
	if _, err := copier.Copy(context.Background(), copier.Options{Src: disk, Dst: dst, SrcFormat: copier.FormatRaw}); err != nil {
		t.Fatal(err)
	}
	sameImage(t, dst, disk)
	// Said to be qcow2, its names are followed, as qemu-img -f qcow2 does.
	explicit := filepath.Join(dir, "explicit")
	if _, err := copier.Copy(context.Background(), copier.Options{Src: disk, Dst: explicit, SrcFormat: copier.FormatQcow2}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(explicit)
	if !bytes.HasPrefix(got, secret) {
		t.Fatal("said qcow2, the image does not read its backing file")
	}
}

// TestGuessedImageReadPasses: checksum and verify guess too, and are
// refused alike; told the format, they read it.
func TestGuessedImageReadPasses(t *testing.T) {
	qemutest.Need(t, "qemu-img")
	dir := t.TempDir()
	secretPath, _ := secretFile(t, dir)
	disk := rawDiskWithHeader(t, dir, secretPath)
	same := filepath.Join(dir, "same")
	writeFile(t, same, mustRead(t, disk))
	ctx := context.Background()
	var refused *copier.RefusedError
	if _, err := copier.Checksum(ctx, copier.ReadOptions{Src: disk}); !errors.As(err, &refused) || !strings.Contains(err.Error(), "guessed") {
		t.Errorf("checksum of the guessed image: %v; want a refusal", err)
	}
	if _, err := copier.Compare(ctx, copier.ReadOptions{Src: same, Dst: disk, SrcFormat: copier.FormatRaw}); !errors.As(err, &refused) || !strings.Contains(err.Error(), "guessed") {
		t.Errorf("verify with the guessed image as DST: %v; want a refusal", err)
	}
	if _, err := copier.Checksum(ctx, copier.ReadOptions{Src: disk, SrcFormat: copier.FormatRaw}); err != nil {
		t.Errorf("checksum said raw: %v", err)
	}
	if _, err := copier.Compare(ctx, copier.ReadOptions{Src: same, Dst: disk, SrcFormat: copier.FormatRaw, DstFormat: copier.FormatRaw}); err != nil {
		t.Errorf("verify said raw: %v", err)
	}
	if _, err := copier.Checksum(ctx, copier.ReadOptions{Src: disk, SrcFormat: "vmdk"}); !errors.As(err, &refused) || refused.Kind != copier.KindBadInput {
		t.Errorf("checksum said vmdk: %v; want a bad input refusal", err)
	}
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
