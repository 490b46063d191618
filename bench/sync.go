package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/ringcp/ringcp/internal/sysblock"
	"github.com/ringcp/ringcp/internal/units"
)

// The sync workloads (ringcp issue 25): DST holds an earlier image of
// SRC, and SRC has since changed in 1% of its 4 KiB blocks, at random.
// `ringcp sync` writes only the granules that differ (4 KiB by default;
// ringcp-sync-64k is the largest granule, the default before); it runs
// against a full ringcp copy, rsync --inplace --no-whole-file (rsync's
// delta algorithm writing into DST) and rsync's default (a new file
// renamed over DST), on this host and over ssh to this host through an
// sshd the bench starts, with 20 ms added to every round trip
// (syncssh.go). Every DST is made the old image again before each run
// (outside the timed part), and checked equal to SRC after it. DST lives
// on a loop device (a file DST on an ext4 made on one), so that the
// bytes each tool wrote reach the device's own counters
// (/sys/block/loopN/stat), which the report gives beside the bytes that
// changed.

// syncBlock is the unit that changes, and the granule ringcp sync
// compares and writes by default; syncGranule is the largest granule
// (ringcp-sync-64k's), what a changed block cost before.
const (
	syncBlock   = 4096
	syncGranule = 64 << 10
)

// changedContent is SRC of the sync workloads: old's bytes, with 1% of
// the 4 KiB blocks (those changed picks) filled from repl instead.
type changedContent struct {
	old, repl randomContent
	seed      uint64
}

func newChangedContent(seed uint64) changedContent {
	return changedContent{old: randomContent{seed: seed}, repl: randomContent{seed: seed ^ 0xc0ffee}, seed: seed}
}

// changed says whether block b of SRC differs from DST's old image.
func (c changedContent) changed(b int64) bool { return mix64(c.seed^0x5eed^uint64(b)<<1)%100 == 0 }

func (c changedContent) Fill(off int64, p []byte) {
	c.old.Fill(off, p)
	for b := off / syncBlock; b*syncBlock < off+int64(len(p)); b++ {
		if !c.changed(b) {
			continue
		}
		from, to := max(b*syncBlock, off), min((b+1)*syncBlock, off+int64(len(p)))
		c.repl.Fill(from, p[from-off:to-off])
	}
}

// syncChange is how much of SRC changed: the bytes of the changed
// blocks, and of the granules that hold them (what a sync must write).
type syncChange struct{ blocks, granules int64 }

func (c changedContent) measure(size int64) syncChange {
	var s syncChange
	lastGranule := int64(-1)
	for b := int64(0); b*syncBlock < size; b++ {
		if !c.changed(b) {
			continue
		}
		s.blocks += min(syncBlock, size-b*syncBlock)
		if g := b * syncBlock / syncGranule; g != lastGranule {
			s.granules += min(syncGranule, size-g*syncGranule)
			lastGranule = g
		}
	}
	return s
}

// syncChanged is the change every sync workload's SRC has (one seed and
// size a run), for the report.
var syncChanged syncChange

func init() {
	workloads = append(workloads,
		Workload{Name: "sync-file", Desc: "ringcp sync of a file whose 4 KiB blocks changed at 1%, into its old image (a file on an ext4 on a loop device)",
			Source: makeSyncSource, Space: syncSpace, Setup: setupSyncFile, Tools: []string{"ringcp", "ringcp-sync", "ringcp-sync-64k", "rsync-inplace", "rsync"},
			Extra: writeSyncExtra, Optional: true},
		Workload{Name: "sync-blockdev", Desc: "ringcp sync of the same file into its old image on a loop device (rsync does not update devices in place)",
			Source: makeSyncSource, Space: syncSpace, Setup: setupSyncBlockdev, Tools: []string{"ringcp", "ringcp-sync", "ringcp-sync-64k"},
			Extra: writeSyncExtra, Optional: true},
		Workload{Name: "sync-ssh", Desc: "the file workload's sync to this host over ssh (an sshd of the bench's own), 20 ms added to every round trip",
			Source: makeSyncSource, Space: syncSpace, Setup: setupSyncSSH, Tools: []string{"ringcp-sync-ssh", "ringcp-sync-ssh-64k", "rsync-ssh-inplace", "rsync-ssh"},
			Extra: writeSyncExtra, Optional: true},
	)
	tools = append(tools,
		Tool{Name: "ringcp-sync", Needs: []string{"ringcp"}, Plan: syncPlan, Parse: parseSync, Workloads: []string{"sync-file", "sync-blockdev"}},
		Tool{Name: "ringcp-sync-64k", Needs: []string{"ringcp"}, Plan: withGranule(syncPlan, "64K"), Parse: parseSync, Workloads: []string{"sync-file", "sync-blockdev"}},
		Tool{Name: "rsync-inplace", Needs: []string{"rsync"}, Plan: rsyncPlan("--inplace", "--no-whole-file"), Workloads: []string{"sync-file"}},
		Tool{Name: "rsync", Needs: []string{"rsync"}, Plan: rsyncPlan(), Workloads: []string{"sync-file"}},
		Tool{Name: "ringcp-sync-ssh", Needs: []string{"ringcp", "ssh"}, Plan: syncSSHPlan, Parse: parseSyncSSH, Workloads: []string{"sync-ssh"}},
		Tool{Name: "ringcp-sync-ssh-64k", Needs: []string{"ringcp", "ssh"}, Plan: withGranule(syncSSHPlan, "64K"), Parse: parseSyncSSH, Workloads: []string{"sync-ssh"}},
		Tool{Name: "rsync-ssh-inplace", Needs: []string{"rsync", "ssh"}, Plan: rsyncSSHPlan("--inplace", "--no-whole-file"), Workloads: []string{"sync-ssh"}},
		Tool{Name: "rsync-ssh", Needs: []string{"rsync", "ssh"}, Plan: rsyncSSHPlan(), Workloads: []string{"sync-ssh"}},
	)
	debianPkg["rsync"], debianPkg["ssh"], debianPkg["sshd"] = "rsync", "openssh-client", "openssh-server"
	versionArg["rsync"] = "--version"
}

// makeSyncSource writes SRC: the run's random bytes, 1% of its blocks
// changed.
func makeSyncSource(e *Env, cfg *Config) (*Source, error) {
	c := newChangedContent(cfg.Seed)
	path := filepath.Join(e.Dir, "src-sync.bin")
	e.logf("writing %s of random data with 1%% of its blocks changed (seed %d) to %s", sizeLabel(cfg.Size), cfg.Seed, path)
	if err := writeSource(path, c, cfg.Size); err != nil {
		return nil, err
	}
	syncChanged = c.measure(cfg.Size)
	about := fmt.Sprintf("SRC differs from DST's old image in %s of 4 KiB blocks, %s of 64 KiB granules (%.2f%% of it). "+
		"\"DST written\" is what DST's loop device was sent (its stat, sectors written), the median over rounds; "+
		"the target is at most 1.1x the changed bytes rounded to 4 KiB blocks.",
		units.Format(syncChanged.blocks), units.Format(syncChanged.granules), 100*float64(syncChanged.granules)/float64(cfg.Size))
	return &Source{Path: path, Size: cfg.Size, Content: c, About: about}, nil
}

// syncSpace: SRC, and an ext4 that holds DST twice (rsync's default
// writes a new file beside the old one).
func syncSpace(cfg *Config) int64 { return cfg.Size + 2*cfg.Size + cfg.Size/8 + 256<<20 }

// syncPlan is ringcp sync SRC DST.
func syncPlan(j Job) Plan {
	return Plan{{append(append([]string{"ringcp", "sync", "--json", "--progress", "none"}, j.Extra...), j.Src, j.Dst)}}
}

// withGranule is plan with --granule g: the largest granule, against
// the default's.
func withGranule(plan func(j Job) Plan, g string) func(j Job) Plan {
	return func(j Job) Plan {
		j.Extra = append([]string{"--granule", g}, j.Extra...)
		return plan(j)
	}
}

// rsyncPlan is rsync on this host: its default copies whole files
// (--whole-file is its default locally); with --no-whole-file it runs its
// delta algorithm against DST.
func rsyncPlan(flags ...string) func(j Job) Plan {
	return func(j Job) Plan {
		return Plan{{append(append([]string{"rsync"}, flags...), j.Src, j.Dst)}}
	}
}

// syncReport is the part of ringcp sync's --json the bench reads.
type syncReport struct {
	ringcpReport
	Outcome string `json:"outcome"`
	Changed *struct {
		GranulesChanged int64 `json:"granules_changed"`
		Granules        int64 `json:"granules"`
	} `json:"changed"`
}

// parseSync checks that ringcp sync completed a sync (not a full copy
// of a missing DST) and keeps what it chose.
func parseSync(out [][]byte, r *Run) error {
	last := lastJSON(out[0])
	var rep syncReport
	if err := json.Unmarshal(last, &rep); err != nil || rep.Outcome != "complete" || rep.Changed == nil || rep.Changed.Granules == 0 {
		return fmt.Errorf("ringcp sync --json: %v: %s", err, last)
	}
	r.Ringcp = &rep.ringcpReport
	return nil
}

// setupSyncFile makes DST a file on an ext4 on a loop device.
func setupSyncFile(e *Env, src *Source) (*Pair, error) {
	fs, err := makeLoopFS(e, src.Size, "sync-file")
	if err != nil {
		return nil, err
	}
	return syncPair(src, filepath.Join(fs.dir, "dst.img"), fs.dev, fs.close), nil
}

// setupSyncBlockdev makes DST a loop device over a preallocated image of
// SRC's size, rounded up to its 4 KiB sectors.
func setupSyncBlockdev(e *Env, src *Source) (*Pair, error) {
	if !e.Root {
		return nil, fmt.Errorf("%w: loop devices need root", errSkip)
	}
	img := filepath.Join(e.Dir, "dst-sync.img")
	if err := preallocate(img, (src.Size+4095)/4096*4096); err != nil {
		return nil, err
	}
	l := &loopSet{}
	release := func() { l.detachAll(); os.Remove(img) }
	e.onClose(release)
	dev, err := l.attach(e, img, false, "--sector-size", "4096")
	if err != nil {
		release()
		return nil, err
	}
	p := syncPair(src, dev, dev, release)
	p.DstDev = true
	return p, nil
}

// syncPair is SRC and a DST made the old image before each run, on the
// loop device dev whose counters say what a run wrote.
func syncPair(src *Source, dst, dev string, release func()) *Pair {
	old := src.Content.(changedContent).old
	var before int64
	p := &Pair{Src: src.Path, Dst: dst, Size: src.Size, Content: src.Content}
	p.Reset = func() error {
		if err := writeSource(dst, old, src.Size); err != nil {
			return err
		}
		n, err := loopWritten(dev)
		before = n
		return err
	}
	p.Written = func() (int64, error) {
		n, err := loopWritten(dev)
		return n - before, err
	}
	p.Close = release
	return p
}

// loopWritten is the bytes dev was sent to write, from its stat.
func loopWritten(dev string) (int64, error) {
	st, err := sysblock.ReadStat(filepath.Join("/sys/block", filepath.Base(dev), "stat"))
	return st.WriteSectors * 512, err
}

// loopFS is an ext4 on a loop device, mounted in the run's folder.
type loopFS struct {
	dir, dev string
	close    func() // unmounts, detaches and removes it (again: nothing)
}

// makeLoopFS makes an ext4 that holds two DSTs of size bytes, on a loop
// device (direct-io on) over a sparse image, and mounts it at name in
// the run's folder.
func makeLoopFS(e *Env, size int64, name string) (*loopFS, error) {
	if !e.Root {
		return nil, fmt.Errorf("%w: loop devices and mounts need root", errSkip)
	}
	for _, prog := range []string{"mkfs.ext4", "mount", "umount"} {
		if _, err := lookPath(prog); err != nil {
			return nil, fmt.Errorf("%w: %v", errSkip, err)
		}
	}
	img, dir := filepath.Join(e.Dir, name+".img"), filepath.Join(e.Dir, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	l := &loopSet{}
	mounted := false
	fs := &loopFS{dir: dir}
	fs.close = func() {
		if mounted {
			exec.Command("umount", dir).Run()
			mounted = false
		}
		l.detachAll()
		os.Remove(img)
		os.Remove(dir)
	}
	e.onClose(fs.close)
	f, err := os.Create(img)
	if err != nil {
		return nil, err
	}
	err = f.Truncate(2*size + size/8 + 256<<20)
	f.Close()
	if err != nil {
		fs.close()
		return nil, err
	}
	if fs.dev, err = l.attach(e, img, false); err != nil {
		fs.close()
		return nil, err
	}
	// Inode tables and the journal written now, not by ext4lazyinit in
	// the background after the mount: those writes reached the device
	// during the runs and were counted as the tools' (25 MiB of a 64 MiB
	// ringcp sync over ssh, the longest run, where 0.6 MiB changed).
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", fs.dev).CombinedOutput(); err != nil {
		fs.close()
		return nil, fmt.Errorf("mkfs.ext4 %s: %v: %s", fs.dev, err, out)
	}
	if out, err := exec.Command("mount", fs.dev, dir).CombinedOutput(); err != nil {
		fs.close()
		return nil, fmt.Errorf("mount %s: %v: %s", fs.dev, err, out)
	}
	mounted = true
	return fs, nil
}
