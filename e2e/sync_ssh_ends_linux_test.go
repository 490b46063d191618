package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/schematest"
	"github.com/ringcp/ringcp/internal/sshtest"
	"github.com/ringcp/ringcp/internal/synctest"
)

// What a sync across hosts must refuse, as a copy or a local sync
// refuses it, before anything is written: exit 2, both ends untouched.

// sshSync runs ringcp sync with the test's sshd, the remote half the
// built binary.
type sshSync struct {
	srv  *sshtest.Server
	bin  string
	flag string
}

func newSSHSync(t *testing.T) sshSync {
	srv := sshtest.Start(t)
	return sshSync{srv: srv, bin: binary(t), flag: "ssh " + strings.Join(srv.Options, " ")}
}

func (s sshSync) run(t *testing.T, args ...string) result {
	t.Helper()
	return ringcp(t, append([]string{"sync", "--ssh", s.flag, "--remote-ringcp", s.bin}, args...)...)
}

// TestSyncOverSSHImages: a sync moves bytes as they are; from a qcow2
// or compressed SRC it gave DST the container where a copy (and a local
// sync) gives it the disk inside, and over a qcow2 DST it wrote raw
// bytes a copy refuses to write: all with exit 0. Refused now on either
// host, unless --src-format raw (--dst-format raw, --force) says the
// bytes are meant as they are.
func TestSyncOverSSHImages(t *testing.T) {
	blocktest.NeedTool(t, "qemu-img")
	blocktest.NeedTool(t, "xz")
	s := newSSHSync(t)
	dir := t.TempDir()
	image := filepath.Join(dir, "vm.qcow2")
	blocktest.Run(t, "qemu-img", "create", "-q", "-f", "qcow2", image, "4M")
	imageBytes, _ := os.ReadFile(image)
	packed := filepath.Join(dir, "disk.img.xz")
	if out, err := exec.Command("sh", "-c", "head -c 1048576 /dev/urandom | xz -0 > "+packed).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	raw := filepath.Join(dir, "raw")
	rawBytes := synctest.Random(71, 1<<20)
	fresh := func(t *testing.T) string {
		p := filepath.Join(t.TempDir(), "dst")
		synctest.WriteFile(t, p, rawBytes)
		return p
	}
	synctest.WriteFile(t, raw, rawBytes)
	t.Run("qcow2 SRC pushed", func(t *testing.T) {
		dst := fresh(t)
		s.run(t, image, s.srv.URL(dst)).want(t, 2, "qcow2")
		synctest.Same(t, dst, rawBytes)
		s.run(t, "--src-format", "raw", image, s.srv.URL(dst)).want(t, 0)
		synctest.Same(t, dst, imageBytes)
	})
	t.Run("qcow2 SRC pulled", func(t *testing.T) {
		dst := fresh(t)
		s.run(t, s.srv.URL(image), dst).want(t, 2, "qcow2")
		synctest.Same(t, dst, rawBytes)
	})
	t.Run("xz SRC pushed", func(t *testing.T) {
		dst := fresh(t)
		s.run(t, packed, s.srv.URL(dst)).want(t, 2, "xz")
		synctest.Same(t, dst, rawBytes)
	})
	t.Run("qcow2 DST pushed to", func(t *testing.T) {
		dst := filepath.Join(t.TempDir(), "vm.qcow2")
		synctest.WriteFile(t, dst, imageBytes)
		s.run(t, raw, s.srv.URL(dst)).want(t, 2, "qcow2")
		synctest.Same(t, dst, imageBytes)
	})
	t.Run("qcow2 DST pulled into", func(t *testing.T) {
		dst := filepath.Join(t.TempDir(), "vm.qcow2")
		synctest.WriteFile(t, dst, imageBytes)
		s.run(t, s.srv.URL(raw), dst).want(t, 2, "qcow2")
		synctest.Same(t, dst, imageBytes)
		s.run(t, "--dst-format", "raw", s.srv.URL(raw), dst).want(t, 0)
		synctest.Same(t, dst, rawBytes)
	})
	t.Run("--src-format qcow2", func(t *testing.T) {
		dst := fresh(t)
		s.run(t, "--src-format", "qcow2", image, s.srv.URL(dst)).want(t, 2, "--src-format")
		synctest.Same(t, dst, rawBytes)
	})
}

// TestSyncOverSSHSharedBytes: ssh to this very host, SRC a partition and
// DST its own disk (and the other way round), is refused as a local sync
// refuses it: the ends are not the same device, yet every write lands on
// SRC's bytes still to be read.
func TestSyncOverSSHSharedBytes(t *testing.T) {
	blocktest.NeedRoot(t)
	s := newSSHSync(t)
	const size = 4 << 20
	disk, _ := blocktest.Device(t, size, "--partscan")
	content := synctest.Random(72, size)
	if err := os.WriteFile(disk, content, 0); err != nil {
		t.Fatal(err)
	}
	part := blocktest.Partition(t, disk, 1, 1<<20, 2<<20)
	s.run(t, part, s.srv.URL(disk)).want(t, 2, "shares bytes")
	synctest.Same(t, disk, content)
	s.run(t, s.srv.URL(part), disk).want(t, 2, "shares bytes")
	synctest.Same(t, disk, content)
}

// TestSyncOverSSHPlanted: in a sticky folder all may write to, a DST
// symlink or file another user put there is refused on either host, as a
// copy refuses it (this machine has fs.protected_symlinks off): the
// sync followed the link into the victim's file, or handed SRC to the
// attacker's file.
func TestSyncOverSSHPlanted(t *testing.T) {
	blocktest.NeedRoot(t)
	s := newSSHSync(t)
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o777); err != nil || os.Chmod(shared, os.ModeSticky|0o777) != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	old := synctest.Random(73, 8192)
	synctest.WriteFile(t, victim, old)
	link := filepath.Join(shared, "out.img")
	if err := os.Symlink(victim, link); err != nil || os.Lchown(link, 65534, 65534) != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "src")
	synctest.WriteFile(t, src, synctest.Random(74, 8192))
	s.run(t, src, s.srv.URL(link)).want(t, 2, "symlink that uid 65534")
	synctest.Same(t, victim, old)
	s.run(t, s.srv.URL(src), link).want(t, 2, "symlink that uid 65534")
	synctest.Same(t, victim, old)
}

// TestSyncOverSSHOwnStdout: a pulled DST that is ringcp's own stdout
// (`ringcp sync --json ssh://h/disk /dev/stdout > disk.img`) is refused,
// as a copy refuses it: the JSON report landed over the synced bytes,
// and the sync exited 0.
func TestSyncOverSSHOwnStdout(t *testing.T) {
	s := newSSHSync(t)
	dir := t.TempDir()
	src, out := filepath.Join(dir, "src"), filepath.Join(dir, "out.img")
	synctest.WriteFile(t, src, synctest.Random(75, 1<<20))
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(s.bin, "sync", "--ssh", s.flag, "--remote-ringcp", s.bin, "--json", s.srv.URL(src), "/dev/stdout")
	cmd.Stdout = f
	runToEnd(t, cmd).want(t, 2, "own stdout")
	if b, err := os.ReadFile(out); err != nil || len(b) != 0 {
		t.Fatalf("%s after the refusal holds %d bytes (%v)", out, len(b), err)
	}
}

// TestSyncOverSSHNewInDev: a DST in /dev that does not exist (a mistyped
// device node) is refused on either host, as a copy refuses it: the sync
// made a regular file of SRC's size in the RAM of devtmpfs and exited 0.
func TestSyncOverSSHNewInDev(t *testing.T) {
	blocktest.NeedRoot(t)
	s := newSSHSync(t)
	src := filepath.Join(t.TempDir(), "src")
	synctest.WriteFile(t, src, synctest.Random(76, 1<<20))
	typo := "/dev/ringcp-attack25-no-such-disk"
	t.Cleanup(func() { os.Remove(typo) })
	s.run(t, src, s.srv.URL(typo)).want(t, 2, "devtmpfs")
	mustNotExist(t, typo)
	s.run(t, s.srv.URL(src), typo).want(t, 2, "devtmpfs")
	mustNotExist(t, typo)
}

// TestSyncOverSSHNewDstMode: a DST the other host creates is its
// owner's alone, as a SRC of mode 0600 is: it was made 0666 & ~umask,
// a disk image every user of that host could read.
func TestSyncOverSSHNewDstMode(t *testing.T) {
	s := newSSHSync(t)
	src := filepath.Join(t.TempDir(), "src")
	synctest.WriteFile(t, src, synctest.Random(78, 1<<20))
	if err := os.Chmod(src, 0o600); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "dst")
	s.run(t, src, s.srv.URL(dst)).want(t, 0)
	st, err := os.Stat(dst)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm != 0o600 {
		t.Fatalf("the new DST has mode %v, want -rw-------", perm)
	}
}

// TestSyncOverSSHJSONRefusals: --json prints one object whatever the
// outcome, and a refusal's kind is the refusal's: a flag a sync across
// hosts does not take printed no object at all, and a refusal by the
// other host's checks (a DST that is a folder: not_supported) said
// bad_input.
func TestSyncOverSSHJSONRefusals(t *testing.T) {
	s := newSSHSync(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	synctest.WriteFile(t, src, synctest.Random(79, 4096))
	for _, c := range []struct {
		args       []string
		kind, path string
	}{
		{[]string{"--resume", src, s.srv.URL(filepath.Join(dir, "x"))}, "bad_input", ""},
		{[]string{src, s.srv.URL(dir)}, "not_supported", dir},
	} {
		r := s.run(t, append([]string{"--json"}, c.args...)...)
		schematest.Output(t).Check(t, []byte(r.stdout))
		var j struct {
			Outcome string `json:"outcome"`
			Error   struct {
				Kind string `json:"kind"`
				Path string `json:"path"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &j); err != nil || r.code != 2 || j.Outcome != "refused" || j.Error.Kind != c.kind || j.Error.Path != c.path {
			t.Errorf("%v: exit %d, %+v (%v), want kind %s path %q:\n%s", c.args, r.code, j, err, c.kind, c.path, r.stdout)
		}
	}
}
