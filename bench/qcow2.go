package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// qcow2-native imports the qcow2-import workload's image with ringcp
// reading the qcow2 itself (no qemu-nbd beside it), against qemu-img
// convert reading it too; qcow2-import keeps the comparison with nbdcopy
// through qemu-nbd.

func init() {
	workloads = append(workloads, Workload{
		Name:   "qcow2-native",
		Desc:   "sparse qcow2 image (the sparse workload's, converted) to a new raw file, read by each tool itself",
		Source: makeSparseSource,
		Space:  func(cfg *Config) int64 { return sparseSpace(cfg) + cfg.SparseSize/8 },
		Setup:  setupQcow2Native,
		Tools:  []string{"ringcp", "qemu-img"},
	})
}

// setupQcow2Native converts the sparse source to qcow2, the file every
// tool reads.
func setupQcow2Native(e *Env, src *Source) (*Pair, error) {
	if err := needPrograms("qemu-img"); err != nil {
		return nil, err
	}
	img := filepath.Join(e.Dir, "src.qcow2")
	e.logf("converting %s to qcow2", src.Path)
	if out, err := exec.Command("qemu-img", "convert", "-f", "raw", "-O", "qcow2", src.Path, img).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("qemu-img convert to qcow2: %v: %s", err, firstLines(out, 2))
	}
	p, err := setupFile(e, src)
	if err != nil {
		os.Remove(img)
		return nil, err
	}
	// The guest's size is the source's rounded up to 512 bytes, its
	// padding zeros (sparseContent reads zeros past the image).
	p.Size = (src.Size + 511) / 512 * 512
	p.Src, p.SrcImage, p.SrcFormat = img, img, "qcow2"
	close := p.Close
	p.Close = func() { close(); os.Remove(img) }
	return p, nil
}
