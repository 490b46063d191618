package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/nbdtest"
)

// Disk image formats through qemu-nbd: a qcow2 (or vmdk) image served
// read-only is imported to a raw file byte-identical to what
// qemu-img convert -O raw makes, holes kept; a raw file is exported into a
// new qcow2 that qemu-img compare finds identical.

// TestQcow2Import: a sparse qcow2 with a backing file (data in the
// backing, overwritten, zeroed, and new in the overlay; an odd-sized
// write at an odd offset), and a vmdk converted from it, served read-only
// by qemu-nbd; and the qcow2 served by qemu-storage-daemon over both
// transports.
func TestQcow2Import(t *testing.T) {
	nbdtest.Need(t, "qemu-nbd", "qemu-img", "qemu-io", "qemu-storage-daemon")
	dir := t.TempDir()
	top := sparseQcow2(t, dir)
	ref := filepath.Join(dir, "ref.raw")
	nbdtest.QemuImg(t, "convert", "-f", "qcow2", "-O", "raw", top, ref)
	vmdk := filepath.Join(dir, "disk.vmdk")
	nbdtest.QemuImg(t, "convert", "-f", "qcow2", "-O", "vmdk", top, vmdk)
	want := fileBytes(t, ref)
	for _, c := range []struct {
		name  string
		serve func(t *testing.T) *nbdtest.Server
	}{
		{"qemu-nbd/qcow2", func(t *testing.T) *nbdtest.Server { return nbdtest.QemuNBD(t, nbdtest.Unix, "qcow2", top, "-r") }},
		{"qemu-nbd/vmdk", func(t *testing.T) *nbdtest.Server { return nbdtest.QemuNBD(t, nbdtest.Unix, "vmdk", vmdk, "-r") }},
		{"qemu-storage-daemon/unix", func(t *testing.T) *nbdtest.Server {
			return nbdtest.QemuStorageDaemon(t, nbdtest.Unix, "qcow2", top, false)
		}},
		{"qemu-storage-daemon/tcp", func(t *testing.T) *nbdtest.Server {
			return nbdtest.QemuStorageDaemon(t, nbdtest.TCP, "qcow2", top, false)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "disk.raw")
			rep := jsonCopy(t, c.serve(t).URI, out)
			sameFile(t, c.name+" import, against qemu-img convert -O raw", out, want)
			if holes := num(t, rep, "bytes_holes"); holes < 32<<20 {
				t.Errorf("holes %d: the image's unallocated 32+ MiB must be mapped and skipped", holes)
			}
			if a := allocated(t, out); a > 16<<20 {
				t.Errorf("the raw copy allocates %d bytes: the image's holes must stay holes", a)
			}
		})
	}
}

// TestQcow2Export: a raw file with holes into a new qcow2 through
// qemu-nbd (qemu-img create, then serve it writable): qemu-img compare
// says identical, qemu-img check finds no error, and the holes are not
// allocated in the image.
func TestQcow2Export(t *testing.T) {
	nbdtest.Need(t, "qemu-nbd", "qemu-img", "qemu-io")
	dir := t.TempDir()
	raw := filepath.Join(dir, "ref.raw")
	nbdtest.QemuImg(t, "convert", "-f", "qcow2", "-O", "raw", sparseQcow2(t, dir), raw)
	for _, flags := range [][]string{nil, {"--target-is-zero"}} {
		img := filepath.Join(t.TempDir(), "new.qcow2")
		nbdtest.QemuImg(t, "create", "-q", "-f", "qcow2", img, "64M")
		srv := nbdtest.QemuNBD(t, nbdtest.TCP, "qcow2", img)
		jsonCopy(t, append(flags, raw, srv.URI)...)
		srv.Stop()
		if out, err := exec.Command("qemu-img", "compare", "-f", "raw", "-F", "qcow2", raw, img).CombinedOutput(); err != nil {
			t.Fatalf("%v: qemu-img compare: %v\n%s", flags, err, out)
		}
		nbdtest.QemuImg(t, "check", "-q", img)
		out, err := exec.Command("qemu-img", "info", "--output=json", img).Output()
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(img); err != nil || fi.Size() > 24<<20 {
			t.Errorf("%v: the qcow2 is %d bytes (%v): its holes must not be allocated\n%s", flags, fi.Size(), err, out)
		}
	}
}

// sparseQcow2 builds dir/top.qcow2 over dir/base.qcow2, 64 MiB: data in
// the base at 0-4M and 20-23M; the overlay rewrites 2-6M, zeroes 21-22M,
// writes 40M+4097 bytes at an odd offset; the rest is unallocated in both.
func sparseQcow2(t *testing.T, dir string) string {
	t.Helper()
	base, top := filepath.Join(dir, "base.qcow2"), filepath.Join(dir, "top.qcow2")
	nbdtest.QemuImg(t, "create", "-q", "-f", "qcow2", base, "64M")
	qemuIO(t, "qcow2", base, "write -P 0xaa 0 4M", "write -P 0xbb 20M 3M")
	nbdtest.QemuImg(t, "create", "-q", "-f", "qcow2", "-b", base, "-F", "qcow2", top)
	qemuIO(t, "qcow2", top, "write -P 0xcc 2M 4M", "write -z 21M 1M", "write -P 0x5a 41947137 4097")
	return top
}

func qemuIO(t *testing.T, format, image string, cmds ...string) {
	t.Helper()
	args := []string{"-f", format}
	for _, c := range cmds {
		args = append(args, "-c", c)
	}
	if out, err := exec.Command("qemu-io", append(args, image)...).CombinedOutput(); err != nil || strings.Contains(string(out), "error") {
		t.Fatalf("qemu-io %v: %v\n%s", cmds, err, out)
	}
}

// TestQcow2Recipe runs the README's recipe as written: qemu-nbd in the
// foreground with --socket, neither --persistent nor --shared (so it
// serves one client, once, and exits when that client leaves), then
// ringcp on its socket; and the reverse into a new qcow2. ringcp must get
// through with its one session, and qemu-nbd must exit by itself after.
func TestQcow2Recipe(t *testing.T) {
	nbdtest.Need(t, "qemu-nbd", "qemu-img", "qemu-io")
	dir := t.TempDir()
	top := sparseQcow2(t, dir)
	ref, out := filepath.Join(dir, "ref.raw"), filepath.Join(dir, "out.raw")
	nbdtest.QemuImg(t, "convert", "-f", "qcow2", "-O", "raw", top, ref)

	sock := filepath.Join(dir, "import.sock")
	wait := recipeServer(t, sock, "-r", "-f", "qcow2", "--socket", sock, top)
	jsonCopy(t, "nbd+unix:///?socket="+sock, out)
	wait()
	got := fileBytes(t, out)
	want := fileBytes(t, ref)
	sameBytes(t, "raw imported by the recipe", got, want)

	img := filepath.Join(dir, "new.qcow2")
	nbdtest.QemuImg(t, "create", "-q", "-f", "qcow2", img, "64M")
	sock = filepath.Join(dir, "export.sock")
	wait = recipeServer(t, sock, "-f", "qcow2", "--socket", sock, img)
	jsonCopy(t, out, "nbd+unix:///?socket="+sock)
	wait()
	if b, err := exec.Command("qemu-img", "compare", "-f", "raw", "-F", "qcow2", ref, img).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img compare after the reverse recipe: %v\n%s", err, b)
	}
}

// recipeServer starts qemu-nbd with args in the foreground, waits for its
// socket, and returns a wait that fails the test unless qemu-nbd exits by
// itself within 10 s.
func recipeServer(t *testing.T, sock string, args ...string) (wait func()) {
	t.Helper()
	cmd := exec.Command("qemu-nbd", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	for i := 0; ; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if i == 500 {
			t.Fatalf("qemu-nbd %v: no socket after 5 s: %s", args, stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return func() {
		t.Helper()
		select {
		case err := <-done:
			done <- err // for the cleanup
			if err != nil {
				t.Errorf("qemu-nbd exited with %v: %s", err, stderr.String())
			}
		case <-time.After(10 * time.Second):
			t.Errorf("qemu-nbd did not exit after its one client left")
		}
	}
}
