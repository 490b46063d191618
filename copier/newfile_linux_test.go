package copier_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/cmdtest"
	"github.com/ringcp/ringcp/internal/faultfs"
	"golang.org/x/sys/unix"
)

// A new DST is never seen under its name before it is complete and
// synced, on every filesystem: an unnamed O_TMPFILE inode where that is
// trusted, a hidden temporary name elsewhere (FUSE, NFS).

// TestNewDstByTemporaryName: on FUSE (no trusted O_TMPFILE) a new DST is
// written as .NAME.ringcp-tmp and renamed when complete; the report says
// so, nothing else is left in the folder, and the bytes are SRC's.
func TestNewDstByTemporaryName(t *testing.T) {
	needRootFUSE(t)
	back := t.TempDir()
	data := randomBytes(3<<20+17, 31)
	writeFile(t, filepath.Join(back, "src"), data)
	fs := faultfs.Mount(t, back)
	for _, e := range []copier.EngineChoice{copier.EngineAuto, copier.EnginePool} {
		dst := "dst-" + string(e)
		rep, err := copier.Copy(context.Background(), copier.Options{Src: fs.Path("src"), Dst: fs.Path(dst), Engine: e})
		if err != nil {
			t.Fatal(err)
		}
		if !hasNote(rep.Notes, "hidden temporary file") {
			t.Errorf("notes %q: want the temporary-name method", rep.Notes)
		}
		compareFile(t, filepath.Join(back, dst), data)
		mustNotExist(t, filepath.Join(back, writtenAs(dst, false)))
	}
}

// TestLeftoverTemporaryFile: a temporary file left by a killed run (no one
// holds its lock) is removed and the copy completes; one that a running
// copy holds is a refusal, and neither DST nor it is touched.
func TestLeftoverTemporaryFile(t *testing.T) {
	needRootFUSE(t)
	back := t.TempDir()
	data := randomBytes(1<<20+3, 32)
	writeFile(t, filepath.Join(back, "src"), data)
	leftover := filepath.Join(back, writtenAs("dst", false))
	writeFile(t, leftover, randomBytes(5000, 33))
	fs := faultfs.Mount(t, back)
	opts := copier.Options{Src: fs.Path("src"), Dst: fs.Path("dst")}
	if _, err := copier.Copy(context.Background(), opts); err != nil {
		t.Fatalf("a leftover from a killed run must not stop the copy: %v", err)
	}
	compareFile(t, filepath.Join(back, "dst"), data)
	mustNotExist(t, leftover)

	// A temporary file another ringcp holds (its flock, taken here
	// through the mount by another process) is refused.
	opts.Dst = fs.Path("dst2")
	held := fs.Path(writtenAs("dst2", false))
	writeFile(t, held, nil)
	lock := exec.Command("flock", "-x", held, "sleep", "60")
	lock.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // so sleep, which holds the file too, dies with it
	if err := lock.Start(); err != nil {
		t.Skipf("flock (util-linux): %v", err)
	}
	t.Cleanup(func() { syscall.Kill(-lock.Process.Pid, syscall.SIGKILL); lock.Wait() })
	waitLocked(t, held)
	_, err := copier.Copy(context.Background(), opts)
	var refused *copier.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "another ringcp is creating DST now") {
		t.Fatalf("err = %v, want a refusal naming the running copy", err)
	}
	mustNotExist(t, filepath.Join(back, "dst2"))
	if fi, err := os.Stat(filepath.Join(back, writtenAs("dst2", false))); err != nil || fi.Size() != 0 {
		t.Errorf("the held temporary file was touched: %v", err)
	}
}

// TestKilledNewCopy: kill -9 during a copy to a new DST by temporary name
// leaves no DST (only the temporary file); running the same command again
// removes that leftover and completes.
func TestKilledNewCopy(t *testing.T) {
	needRootFUSE(t)
	bin := ringcpBinary(t)
	back := t.TempDir()
	data := randomBytes(64<<20, 37)
	writeFile(t, filepath.Join(back, "src"), data)
	fs := faultfs.Mount(t, back)
	args := []string{"--engine", "pool", "-b", "4k", "-q", "1", "--sparse", "never", fs.Path("src"), fs.Path("dst")}
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(back, writtenAs("dst", false))
	deadline := time.Now().Add(30 * time.Second)
	for {
		if fi, err := os.Stat(tmp); err == nil && fi.Size() > 1<<20 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("the copy never wrote 1 MiB to its temporary file")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	mustNotExist(t, filepath.Join(back, "dst"))
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("after kill -9 the temporary file should be left: %v", err)
	}
	if out, err := exec.Command(bin, "--engine", "pool", fs.Path("src"), fs.Path("dst")).CombinedOutput(); err != nil {
		t.Fatalf("rerun: %v\n%s", err, out)
	}
	compareFile(t, filepath.Join(back, "dst"), data)
	mustNotExist(t, tmp)
}

// waitLocked waits until someone holds an exclusive flock on path.
func waitLocked(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		err = unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never got locked", path)
}

// TestNewDstWithoutProc: where /proc is not mounted (a chroot, a minimal
// container) a new DST still gets its name: root links the unnamed inode
// by descriptor. Run in a mount namespace whose /proc is an empty tmpfs.
func TestNewDstWithoutProc(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a mount namespace")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare (util-linux) is not installed")
	}
	bin := ringcpBinary(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	data := randomBytes(2<<20+4097, 34)
	writeFile(t, src, data)
	for _, direct := range []string{"auto", "never"} {
		dst := filepath.Join(dir, "dst-"+direct)
		script := "mount -t tmpfs none /proc && exec " + bin + " --direct " + direct + " " + src + " " + dst
		out, err := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", script).CombinedOutput()
		if err != nil {
			t.Fatalf("--direct %s without /proc: %v\n%s", direct, err, out)
		}
		compareFile(t, dst, data)
	}
}

// TestPreparedDstBecomesFIFO: a DST swapped for a FIFO between Prepare and
// Run must not hang the open (no reader would ever come): Run refuses at
// once. The same for SRC (no writer).
func TestPreparedDstBecomesFIFO(t *testing.T) {
	for _, side := range []string{"src", "dst"} {
		t.Run(side, func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
			writeFile(t, src, randomBytes(1<<20, 35))
			writeFile(t, dst, randomBytes(1<<20, 36))
			p, err := copier.Prepare(copier.Options{Src: src, Dst: dst})
			if err != nil {
				t.Fatal(err)
			}
			swapped := map[string]string{"src": src, "dst": dst}[side]
			if err := os.Remove(swapped); err != nil {
				t.Fatal(err)
			}
			if err := unix.Mkfifo(swapped, 0o644); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := p.Run(context.Background())
				done <- err
			}()
			select {
			case err := <-done:
				var refused *copier.RefusedError
				if !errors.As(err, &refused) {
					t.Fatalf("err = %v, want a refusal", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Run blocked on the FIFO")
			}
		})
	}
}

// ringcpBinary is the ringcp command, for the tests that need a process
// of their own (kill -9, a mount namespace).
func ringcpBinary(t *testing.T) string { return cmdtest.Binary(t) }

func hasNote(notes []string, part string) bool {
	for _, n := range notes {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}
