package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A Workload prepares one kind of copy: where SRC and DST are, how long the
// copy is, what DST must hold afterwards and how DST is made "new" again
// before each run. Adding a workload is one entry in the workloads table
// and, at most, one Setup function (and one Source function, for a
// workload that copies a source of its own).
type Workload struct {
	Name string // -workloads key and report heading
	Desc string // one line for the report
	// Source, when set, makes the workload's own SRC (a sparse image, say)
	// instead of the run's random one; Setup then gets that.
	Source func(e *Env, cfg *Config) (*Source, error)
	// Space, with Source, is the most disk the workload's SRC and DST
	// take at once, for the free-space check before anything is written;
	// without Source, what it takes besides the run's source and one DST.
	Space func(cfg *Config) int64
	// Setup builds the pair from the source file (the run's, or the one
	// Source made). It returns an error wrapping errSkip when the machine
	// cannot host the workload.
	Setup func(e *Env, src *Source) (*Pair, error)
	// Tools, when set, limits the workload to these tool names (a rate-cap
	// workload, say, has no meaning for dd).
	Tools []string
	// Foreground runs fio on Pair.Foreground for the whole of every copy
	// (busy.go), and the report gives what it did.
	Foreground bool
	// Optional keeps the workload out of the default -workloads list; it
	// runs when named, and in -quick mode.
	Optional bool
	// NotQuick keeps it out of -quick too: the busy workload under a
	// scheduler runs busy's tools again, and sets a machine-wide setting.
	NotQuick bool
	// Extra, when set, adds the workload's own lines to the report after
	// its table (the sync workloads' bytes written).
	Extra func(w io.Writer, runs []*Run)
}

// errSkip wraps the reason a workload or tool cannot run here.
var errSkip = errors.New("skipped")

// Source is a source file, written once from Content: the run's one
// random file, or a workload's own.
type Source struct {
	Path    string
	Size    int64
	Content Content
	About   string // a paragraph for the report on how it is laid out; may be ""
	// Alloc, when positive, is SRC's allocation (st_blocks×512): each
	// copy's DST allocation is then measured and reported against it.
	Alloc int64
}

// Pair is a prepared workload: what a tool is told to copy.
type Pair struct {
	Src, Dst       string
	Size           int64 // bytes to copy: all of SRC
	SrcDev, DstDev bool  // block devices, not files
	Content        Content
	SrcAlloc       int64 // Source.Alloc: DST's allocation is reported when positive
	// Reset makes DST what a fresh copy starts from: the previous DST gone,
	// so that a tool that writes nothing cannot pass on its predecessor's
	// bytes.
	Reset func() error
	// Close releases what Setup made (loop devices); Env.Close calls it too.
	Close func()
	// Jobs, in a workload of many copies at once, are the copies the
	// batch tools make together (Tool.Batch); Src, Dst and Size are then
	// one copy of the same total bytes, the reference. List is Jobs as a
	// ringcp --jobs list.
	Jobs []*Pair
	List string
	// Sync and Check, when set, make DST durable after a tool's plan and
	// check it, for a DST that is no file (an NBD export, nbd.go); else
	// DST is fdatasync'ed and read back.
	Sync  func() error
	Check func(c Content, size int64) error
	// SrcImage and SrcFormat, when set, are the image behind an NBD Src:
	// qemu-img convert reads it itself (-f SrcFormat), as its users do.
	SrcImage, SrcFormat string
	// ViaNBD, when set, is an NBD export of Src's bytes (nbdkit's curl
	// plugin over a URL, web.go), which nbdcopy-curl reads.
	ViaNBD string
	// RingcpFlags are flags ringcp needs for this pair (--size for a
	// compressed SRC that does not say its size, onto a device).
	RingcpFlags []string
	// Foreground is the file the busy workload's fio reads, on the disk
	// of SRC and DST; "" for the other workloads.
	Foreground string
	// Written, when set, is what DST's device was sent to write since
	// Reset (the sync workloads', from its loop device's stat).
	Written func() (int64, error)
	// About, when set, is said of the workload after its source's About
	// (the image made of the source: its size, how it was made).
	About string
	// DstFormat "qcow2" makes DST a new image the tool writes (qemu-img
	// convert -O qcow2), DstCompress "zstd" or "zlib" a compressed one
	// (-c); ImageDst records each run's image size (details.DstSize).
	DstFormat, DstCompress string
	ImageDst               bool
	// Remote is DST as host:path on the sync-ssh workload's other host,
	// SSH the command line that reaches it, Ringcp the ringcp binary
	// there (sync.go, syncssh.go).
	Remote, SSH, Ringcp string
}

var workloads = []Workload{
	{
		Name:  "file",
		Desc:  "file to a new file on the same filesystem, O_DIRECT where the tool has it",
		Setup: setupFile,
	},
	{
		Name:  "blockdev",
		Desc:  "block device to block device: two loop devices with direct-io on",
		Setup: setupBlockdev,
	},
	{
		Name:   "sparse",
		Desc:   "sparse image (holes, scattered data, written zero runs) to a new file on the same filesystem",
		Source: makeSparseSource,
		Space:  sparseSpace,
		Setup:  setupFile,
		Tools:  []string{"ringcp", "ringcp-pool", "ringcp-nosparse", "ringcp-verify", "qemu-img", "nbdcopy", "cp-sparse+sync"},
	},
	{
		Name:  "jobs-file",
		Desc:  "the source as 4 files to 4 new files at once (jobs.go); the reference copies the whole source as one file",
		Space: jobsSpace,
		Setup: setupJobsFile,
		Tools: jobsTools,
	},
	{
		Name:  "jobs-blockdev",
		Desc:  "4 loop devices to 4 loop devices at once (quarters of the source, 4 images); the reference copies the whole source's",
		Space: jobsSpace,
		Setup: setupJobsBlockdev,
		Tools: jobsTools,
	},
	{
		Name:       "busy",
		Desc:       "file to a new file beside a foreground: fio reading 4 KiB at random, 4 in flight, from a file on the same disk",
		Setup:      setupBusy,
		Tools:      busyTools,
		Foreground: true,
		Optional:   true,
	},
	{
		Name:       "busy-mq-deadline",
		Desc:       "the busy workload with the disk's scheduler set to mq-deadline for it (and put back)",
		Setup:      setupBusySched("mq-deadline"),
		Tools:      busyTools,
		Foreground: true,
		Optional:   true,
		NotQuick:   true,
	},
	{
		Name:       "busy-bfq",
		Desc:       "the busy workload with the disk's scheduler set to bfq for it (and put back)",
		Setup:      setupBusySched("bfq"),
		Tools:      busyTools,
		Foreground: true,
		Optional:   true,
		NotQuick:   true,
	},
}

func findWorkload(name string) (*Workload, error) {
	for i := range workloads {
		if workloads[i].Name == name {
			return &workloads[i], nil
		}
	}
	return nil, fmt.Errorf("unknown workload %q", name)
}

func setupFile(e *Env, src *Source) (*Pair, error) {
	dst := filepath.Join(e.Dir, "dst-file.bin")
	rm := func() error { return removeIfThere(dst) }
	return &Pair{
		Src: src.Path, Dst: dst, Size: src.Size, Content: src.Content, SrcAlloc: src.Alloc,
		Reset: rm,
		Close: func() { rm() },
	}, nil
}

// setupBlockdev puts the source file behind a read-only loop device and a
// preallocated image of the same size behind a second one, both with
// direct-io on so that the loop driver does not double-cache. A loop device
// ends at the last whole 512-byte sector of its file, so an odd tail of the
// source is not part of this workload.
func setupBlockdev(e *Env, src *Source) (*Pair, error) {
	if !e.Root {
		return nil, fmt.Errorf("%w: loop devices need root", errSkip)
	}
	if _, err := lookPath("losetup"); err != nil {
		return nil, fmt.Errorf("%w: losetup not found (util-linux / mount)", errSkip)
	}
	size := src.Size / 512 * 512
	img := filepath.Join(e.Dir, "dst-dev.img")
	if err := preallocate(img, size); err != nil {
		return nil, err
	}
	var l loopSet
	e.onClose(l.detachAll)
	sdev, err := l.attach(e, src.Path, true)
	if err != nil {
		return nil, err
	}
	ddev, err := l.attach(e, img, false)
	if err != nil {
		l.detachAll()
		return nil, err
	}
	return &Pair{
		Src: sdev, Dst: ddev, Size: size, SrcDev: true, DstDev: true,
		Content: src.Content,
		Reset:   func() error { return wipeDevice(ddev, img, size) },
		Close:   func() { l.detachAll(); os.Remove(img) },
	}, nil
}
