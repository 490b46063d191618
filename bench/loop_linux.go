package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// loopSet is the loop devices one workload attached, detached together.
type loopSet struct{ devs []string }

// attach runs `losetup --find --show --direct-io=on` (and extra options)
// on file. Direct I/O on
// the loop device makes it read and write its backing file with O_DIRECT,
// as a disk would, instead of caching every block twice.
func (l *loopSet) attach(e *Env, file string, readOnly bool, extra ...string) (string, error) {
	args := append([]string{"--find", "--show", "--direct-io=on"}, extra...)
	if readOnly {
		// SRC is never written; read-only also keeps a tool that mixes up
		// its operands from damaging the source of the later runs.
		args = append(args, "--read-only")
	}
	bin, err := lookPath("losetup")
	if err != nil {
		return "", err
	}
	out, err := exec.Command(bin, append(args, file)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("losetup %s: %v: %s", file, err, strings.TrimSpace(string(out)))
	}
	lines := strings.Fields(string(out))
	dev := lines[len(lines)-1] // a size warning may come first
	l.devs = append(l.devs, dev)
	dio, _ := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "loop/dio"))
	if strings.TrimSpace(string(dio)) != "1" {
		e.logf("warning: %s did not take direct-io=on; it caches like a buffered file", dev)
	}
	return dev, nil
}

func (l *loopSet) detachAll() {
	bin, err := lookPath("losetup")
	if err != nil {
		return
	}
	for _, d := range l.devs {
		exec.Command(bin, "-d", d).Run()
	}
	l.devs = nil
}

// newDeviceDst is DST as a loop device over a preallocated image, name
// in the run's folder, of SRC's size rounded up to 4 KiB (the copy's
// bytes are checked; the tail past them is not), zeroed before each run.
func newDeviceDst(e *Env, src *Source, name string) (*Pair, error) {
	p, err := loopImage(e, name, (src.Size+4095)&^4095)
	if err != nil {
		return nil, err
	}
	p.Size, p.Content = src.Size, src.Content
	return p, nil
}

// loopImage is a Pair whose DST is a loop device over a preallocated
// image of size bytes, name in the run's folder, zeroed before each run
// and detached and removed at its end.
func loopImage(e *Env, name string, size int64) (*Pair, error) {
	if !e.Root {
		return nil, fmt.Errorf("%w: loop devices need root", errSkip)
	}
	img := filepath.Join(e.Dir, name)
	if err := preallocate(img, size); err != nil {
		return nil, err
	}
	var l loopSet
	e.onClose(l.detachAll)
	dev, err := l.attach(e, img, false)
	if err != nil {
		os.Remove(img)
		return nil, err
	}
	return &Pair{Dst: dev, DstDev: true,
		Reset: func() error { return wipeDevice(dev, img, size) },
		Close: func() { l.detachAll(); os.Remove(img) }}, nil
}

// preallocate makes path a size-byte file whose blocks exist, like the
// storage behind a disk, so that writes to DST do not also allocate.
func preallocate(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Fallocate(int(f.Fd()), 0, 0, size); err != nil {
		return fmt.Errorf("fallocate %s: %w", path, err)
	}
	return nil
}

// wipeDevice turns the DST device back to zeros, cheaply: fallocate
// PUNCH_HOLE on a block device is a zero-out that the loop driver passes
// to its backing file as a hole punch (and that drops the device's cached
// pages). The backing file is then preallocated again, so each run starts
// from the same allocated, all-zero device.
func wipeDevice(dev, img string, size int64) error {
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, size)
	f.Close()
	if err != nil {
		return fmt.Errorf("zero %s: %w", dev, err)
	}
	g, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer g.Close()
	return unix.Fallocate(int(g.Fd()), 0, 0, size)
}

// lookPath finds a program in PATH and, for sudo-less root shells whose
// PATH lacks them, in the sbin directories.
func lookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range []string{"/usr/sbin", "/sbin"} {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found", name)
}
