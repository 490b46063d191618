package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// The raw-to-qcow2 workloads (issue 24) export a raw disk as a new qcow2
// image: ringcp --dst-format qcow2 against qemu-img convert -O qcow2,
// plain and compressed (ringcp --compress zstd|zlib against qemu-img
// convert -c -o compression_type=zstd|zlib), from the disk laid out as a
// used filesystem (imagecontent.go). Every image written is checked with
// qemu-img check and qemu-img compare against SRC (either failing makes
// the run WRONG), and its size is reported beside qemu-img's: the target
// is an image no larger.

var toQcow2Compress = []string{"", "zstd", "zlib"}

func init() {
	for _, comp := range toQcow2Compress {
		name, desc := "to-qcow2", "raw disk laid out as a used filesystem to a new qcow2 image"
		if comp != "" {
			name, desc = name+"-"+comp, desc+", "+comp+"-compressed"
		}
		workloads = append(workloads, Workload{
			Name: name, Desc: desc, Source: makeImageSource,
			Space:    func(cfg *Config) int64 { return 2*cfg.Size + cfg.Size/8 },
			Setup:    toQcow2Setup(comp),
			Tools:    []string{"ringcp", "qemu-img"},
			Optional: true,
			Extra:    writeImageSizes,
		})
	}
}

// toQcow2Names names the raw-to-qcow2 workloads.
func toQcow2Names() []string {
	var ns []string
	for _, comp := range toQcow2Compress {
		ns = append(ns, strings.TrimSuffix("to-qcow2-"+comp, "-"))
	}
	return ns
}

func toQcow2Setup(comp string) func(e *Env, src *Source) (*Pair, error) {
	return func(e *Env, src *Source) (*Pair, error) {
		if err := needPrograms("qemu-img"); err != nil {
			return nil, err
		}
		p, err := setupFile(e, src)
		if err != nil {
			return nil, err
		}
		p.Dst = filepath.Join(e.Dir, "dst.qcow2")
		dst := p.Dst
		p.Reset = func() error { return removeIfThere(dst) }
		p.Close = func() { removeIfThere(dst) }
		p.DstFormat, p.DstCompress, p.ImageDst = "qcow2", comp, true
		// The image's size is held to qemu-img's (writeImageSizes),
		// not to SRC's allocation: a qcow2 adds its tables.
		p.SrcAlloc = 0
		p.RingcpFlags = []string{"--dst-format", "qcow2"}
		if comp != "" {
			p.RingcpFlags = append(p.RingcpFlags, "--compress", comp)
		}
		srcPath := src.Path
		p.Check = func(Content, int64) error { return checkQcow2(srcPath, dst) }
		return p, nil
	}
}

// checkQcow2 holds the image at dst to qemu-img check (clean: no
// corruption, no leak) and qemu-img compare with the raw src (the same
// guest bytes).
func checkQcow2(src, dst string) error {
	for _, args := range [][]string{
		{"check", "-f", "qcow2", dst},
		{"compare", "-f", "raw", "-F", "qcow2", src, dst},
	} {
		out, err := exec.Command("qemu-img", args...).CombinedOutput()
		if err == nil {
			continue
		}
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return fmt.Errorf("%w: qemu-img %s: exit %d: %s", errWrong, strings.Join(args, " "),
				exit.ExitCode(), strings.ReplaceAll(firstLines(out, 3), "\n", " | "))
		}
		return fmt.Errorf("qemu-img %s: %w", args[0], err)
	}
	return nil
}

// imageSize is the file's length and allocation (st_blocks×512).
func imageSize(path string) (size, alloc int64, err error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, 0, err
	}
	return st.Size, st.Blocks * 512, nil
}

// writeImageSizes is the raw-to-qcow2 workloads' table of the images
// written: each tool's largest over its good rounds.
func writeImageSizes(w io.Writer, runs []*Run) {
	var rows bytes.Buffer
	peer := imageBytes(runs, "qemu-img")
	for _, s := range summarize(runs) {
		size := imageBytes(runs, s.Tool)
		if size == 0 {
			continue
		}
		fmt.Fprintf(&rows, "| %s | %.1f | %.1f | %s |\n", s.Tool, mib(size), mib(imageAlloc(runs, s.Tool)),
			fmtImageRatio(ratioOr(size, peer)))
	}
	if rows.Len() == 0 {
		return
	}
	fmt.Fprintf(w, "Images written (checked by qemu-img check and qemu-img compare with SRC); the target is "+
		"ringcp's no larger than qemu-img's:\n\n| tool | image MiB | allocated MiB | × qemu-img's |\n"+
		"|---|---:|---:|---:|\n%s\n", rows.String())
}

// imageBytes is the largest image a tool wrote in a good run; 0 if none.
func imageBytes(runs []*Run, tool string) int64 {
	var n int64
	for _, r := range runs {
		if r.Tool == tool && r.Err == nil {
			n = max(n, r.DstSize)
		}
	}
	return n
}

func imageAlloc(runs []*Run, tool string) int64 {
	var n int64
	for _, r := range runs {
		if r.Tool == tool && r.Err == nil {
			n = max(n, r.DstAlloc)
		}
	}
	return n
}
