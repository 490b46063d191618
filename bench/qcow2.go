package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/ringcp/ringcp/internal/units"
)

// The qcow2 workloads (issue 24) import a qcow2 image onto a raw DST,
// each tool reading the image itself: ringcp natively, qemu-img convert
// -m 16 -W -t none -T none as vdsm runs it, and nbdcopy from a qemu-nbd
// it starts (qemu-nbd+nbdcopy, libguestfs' way; its CPU is counted with
// nbdcopy's, whose child it is). qcow2-native reads the sparse workload's
// image converted, to a file; qcow2-native-dev the same onto a loop
// device; qcow2-zstd-* and qcow2-zlib-* a compressed image of a disk laid
// out as a used filesystem (imagecontent.go), made by qemu-img convert
// -c, to a file and onto a loop device; qcow2-chain-file a base image
// and an overlay a guest wrote to through qemu-nbd (qcow2_chain.go).
// qcow2-import (nbd.go) keeps ringcp reading through qemu-nbd. The
// raw-to-qcow2 workloads are in qcow2_write.go, the targets table in
// qcow2_report.go.

// qcow2Case is one workload that reads a qcow2 image onto a raw DST.
type qcow2Case struct {
	compress string // "zstd", "zlib", or "" for an uncompressed image
	chain    bool   // a base image and an overlay
	dev      bool   // DST is a loop device
}

var qcow2Cases = []qcow2Case{
	{}, {dev: true},
	{compress: "zstd"}, {compress: "zstd", dev: true},
	{compress: "zlib"}, {compress: "zlib", dev: true},
	{chain: true},
}

// qcow2ReadTools are what every qcow2 read workload compares.
var qcow2ReadTools = []string{"ringcp", "qemu-img", "qemu-nbd+nbdcopy"}

func init() {
	for _, c := range qcow2Cases {
		workloads = append(workloads, c.workload())
	}
	tools = append(tools, Tool{Name: "qemu-nbd+nbdcopy", Needs: []string{"nbdcopy", "qemu-nbd"},
		Plan: qemuNBDCopyPlan, Workloads: qcow2CaseNames(false)})
}

func (c qcow2Case) name() string {
	switch {
	case c.chain:
		return "qcow2-chain-file"
	case c.compress != "":
		return "qcow2-" + c.compress + map[bool]string{false: "-file", true: "-dev"}[c.dev]
	case c.dev:
		return "qcow2-native-dev"
	}
	return "qcow2-native"
}

// qcow2CaseNames names the read workloads; all, or the new ones alone
// (qcow2-native, the first, compares ringcp with qemu-img only).
func qcow2CaseNames(all bool) []string {
	var ns []string
	for i, c := range qcow2Cases {
		if all || i > 0 {
			ns = append(ns, c.name())
		}
	}
	return ns
}

func (c qcow2Case) workload() Workload {
	to := map[bool]string{false: "a new raw file", true: "a loop device (direct-io on)"}[c.dev]
	w := Workload{Name: c.name(), Setup: c.setup, Tools: qcow2ReadTools, Optional: true,
		Source: makeSparseSource, Space: func(cfg *Config) int64 { return sparseSpace(cfg) + cfg.SparseSize/8 }}
	switch {
	case c.chain:
		w.Desc = "two-deep chain (the sparse workload's image as the base qcow2, an overlay a guest wrote to and zeroed parts of) to " + to
		w.Space = func(cfg *Config) int64 { return sparseSpace(cfg) + cfg.SparseSize/4 }
	case c.compress != "":
		w.Desc = fmt.Sprintf("%s-compressed qcow2 image (qemu-img convert -c) of a disk laid out as a used filesystem to %s", c.compress, to)
		w.Source, w.Space = makeImageSource, imageSpace
	default:
		w.Desc = "sparse qcow2 image (the sparse workload's, converted) to " + to
	}
	if c == (qcow2Case{}) {
		w.Desc += ", read by each tool itself"
		w.Tools, w.Optional = []string{"ringcp", "qemu-img"}, false
	}
	return w
}

// setup makes the image from the source and DST.
func (c qcow2Case) setup(e *Env, src *Source) (*Pair, error) {
	if err := needPrograms("qemu-img"); err != nil {
		return nil, err
	}
	img := filepath.Join(e.Dir, "src.qcow2")
	content, about, err := c.makeImage(e, src, img)
	if err != nil {
		return nil, err
	}
	var p *Pair
	if c.dev {
		p, err = newDeviceDst(e, src, "dst-qcow2.img")
	} else {
		p, err = setupFile(e, src)
	}
	if err != nil {
		removeImage(img)
		return nil, err
	}
	// The guest's size is the source's rounded up to 512 bytes, its
	// padding zeros (every content reads zeros past the source).
	p.Size = (src.Size + 511) / 512 * 512
	p.Src, p.SrcImage, p.SrcFormat, p.Content, p.About = img, img, "qcow2", content, about
	// A chain is followed only when the format is given, not guessed.
	p.RingcpFlags = []string{"--src-format", "qcow2"}
	if c.chain {
		// The guest wrote over the base's holes: SRC's allocation is
		// no bound for DST's.
		p.SrcAlloc = 0
	}
	close := p.Close
	p.Close = func() { close(); removeImage(img) }
	return p, nil
}

// makeImage writes the case's image at img and says what it holds.
func (c qcow2Case) makeImage(e *Env, src *Source, img string) (Content, string, error) {
	if c.chain {
		return makeChain(e, src, img)
	}
	args := []string{"convert", "-f", "raw", "-O", "qcow2"}
	if c.compress != "" {
		args = append(args, "-c", "-o", "compression_type="+c.compress)
	}
	if err := qemuImg(e, append(args, src.Path, img)...); err != nil {
		return nil, "", err
	}
	about, err := imageAbout("The image", img)
	return src.Content, about, err
}

// qemuImg runs qemu-img with args, logging the command.
func qemuImg(e *Env, args ...string) error {
	e.logf("qemu-img %v", args)
	if out, err := exec.Command("qemu-img", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("qemu-img %v: %v: %s", args, err, firstLines(out, 2))
	}
	return nil
}

// imageAbout says how large the image file at path is, for the report.
func imageAbout(what, path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	alloc, err := allocBytes(path)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s is %s (%s allocated).", what, units.Format(st.Size()), units.Format(alloc)), nil
}

// removeImage removes an image the setup made, and an overlay's base.
func removeImage(img string) {
	os.Remove(img)
	os.Remove(baseName(img))
}

// qemuNBDCopyPlan is nbdcopy reading the image from a qemu-nbd it starts
// as its child (socket activation; one connection), as libguestfs does.
func qemuNBDCopyPlan(j Job) Plan {
	return Plan{{{"nbdcopy", "--flush", "--", "[", "qemu-nbd", "-r", "-f", j.SrcFormat, "--cache=none",
		j.SrcImage, "]", j.Dst}}}
}
