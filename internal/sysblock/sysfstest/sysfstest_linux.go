// Package sysfstest builds fake sysfs trees of disks and partitions for
// the tests of every package that reads sysfs through sysblock (align,
// guard, sysblock itself), so that none of them keeps its own copy.
package sysfstest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ringcp/ringcp/internal/sysblock"
)

// Disk is a whole disk of the fake tree.
type Disk struct {
	Name    string            // the kernel's name: vda, sdb, loop0
	Dev     string            // its number, "254:0"
	Queue   map[string]string // files of queue/: "logical_block_size": "512\n"
	Holders []string          // names in holders/: "dm-0"
	Parts   []Part
	// Loop makes it a bound loop device: the files of loop/
	// ("backing_file": "/path\n", "offset", "sizelimit").
	Loop map[string]string
}

// Part is a partition of a Disk, numbered in order from 1.
type Part struct {
	Name    string // vda1
	Dev     string // "254:1"
	Start   int64  // in 512-byte sectors, as sysfs counts
	Holders []string
}

// Tree is a fake sysfs that sysblock reads while the test runs.
type Tree struct {
	Root string
	dirs map[string]string // device name -> its folder
}

// Build writes disks as sysfs shows them (folders under devices/virtual/
// block/, symlinks in dev/block/ and block/) into a new temp dir, and
// points sysblock.Root at it until the test ends. Tests that build a tree
// must not run in parallel with each other.
func Build(t testing.TB, disks ...Disk) *Tree {
	t.Helper()
	tr := &Tree{Root: t.TempDir(), dirs: map[string]string{}}
	for _, d := range disks {
		tr.disk(t, d)
	}
	old := sysblock.Root
	sysblock.Root = tr.Root
	t.Cleanup(func() { sysblock.Root = old })
	return tr
}

// Dir is the folder of the disk or partition named name.
func (tr *Tree) Dir(name string) string { return tr.dirs[name] }

func (tr *Tree) disk(t testing.TB, d Disk) {
	rel := filepath.Join("devices", "virtual", "block", d.Name)
	tr.device(t, d.Name, rel, d.Dev, d.Holders)
	for name, body := range d.Queue {
		write(t, filepath.Join(tr.Root, rel, "queue", name), body)
	}
	for name, body := range d.Loop {
		write(t, filepath.Join(tr.Root, rel, "loop", name), body)
	}
	link(t, filepath.Join("..", rel), filepath.Join(tr.Root, "block", d.Name))
	for i, p := range d.Parts {
		prel := filepath.Join(rel, p.Name)
		tr.device(t, p.Name, prel, p.Dev, p.Holders)
		write(t, filepath.Join(tr.Root, prel, "partition"), fmt.Sprintf("%d\n", i+1))
		write(t, filepath.Join(tr.Root, prel, "start"), fmt.Sprintf("%d\n", p.Start))
	}
}

// device writes the folder rel of one device: its dev file, holders/, and
// its dev/block/MAJ:MIN symlink.
func (tr *Tree) device(t testing.TB, name, rel, dev string, holders []string) {
	dir := filepath.Join(tr.Root, rel)
	tr.dirs[name] = dir
	write(t, filepath.Join(dir, "dev"), dev+"\n")
	if err := os.MkdirAll(filepath.Join(dir, "holders"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range holders {
		write(t, filepath.Join(dir, "holders", h), "")
	}
	link(t, filepath.Join("..", "..", rel), filepath.Join(tr.Root, "dev", "block", dev))
}

func write(t testing.TB, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func link(t testing.TB, target, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}
