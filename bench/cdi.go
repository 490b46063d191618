package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The cdi workloads import an image over HTTP (nginx, on loopback) onto a
// loop device, as KubeVirt CDI's importer pod does (issue 26): `ringcp
// cdi-importer` with CDI's environment, against the pipeline CDI's own
// importer runs: qemu-img convert -t writeback -p -O raw from nbdkit's
// curl plugin for a qcow2 image; for a .raw.xz, the image downloaded and
// decompressed into a scratch file, then qemu-img convert from it. Each
// tool runs in a memory cgroup of its own, made anew for every run, whose
// peak (page cache included, which is what got CDI's importer OOM-killed)
// is the run's memory (details.MemPeak).

var cdiWorkloads = []string{"cdi-qcow2", "cdi-xz"}

// cdiSetups are the workloads' servers and paths, for the tools' plans
// and the memory reading (Parse gets the run, not the pair).
var cdiSetups = map[string]*cdiSetup{}

// cdiSetup is one cdi workload's: the URL of its image, the scratch
// file, the termination log, the memory cgroup of the current run.
type cdiSetup struct {
	url, scratch, log string
	cg                *memCgroup
}

func init() {
	for _, format := range []string{"qcow2", "xz"} {
		workloads = append(workloads, Workload{
			Name:     "cdi-" + format,
			Desc:     cdiDesc[format],
			Source:   makeSparseSource,
			Space:    func(cfg *Config) int64 { return 2 * sparseSpace(cfg) },
			Setup:    setupCDI(format),
			Tools:    []string{"ringcp-cdi", "cdi-qemu-img"},
			Optional: true,
		})
	}
	tools = append(tools,
		Tool{Name: "ringcp-cdi", Needs: []string{"sh", "env", "ringcp"}, Plan: cdiRingcpPlan, Parse: parseCDIMemory, Workloads: cdiWorkloads},
		Tool{Name: "cdi-qemu-img", Needs: []string{"sh", "nbdkit", "qemu-img", "curl", "xz"}, Plan: cdiQemuPlan, Parse: parseCDIMemory, Workloads: cdiWorkloads})
	debianPkg["nginx"], debianPkg["curl"], debianPkg["xz"], debianPkg["sh"], debianPkg["env"] = "nginx-light", "curl", "xz-utils", "dash", "coreutils"
}

var cdiDesc = map[string]string{
	"qcow2": "sparse qcow2 image (the sparse workload's) over HTTP onto a loop device, as CDI's importer pod: ringcp cdi-importer against nbdkit curl | qemu-img convert -t writeback",
	"xz":    "the sparse image as .raw.xz over HTTP onto a loop device, as CDI's importer pod: ringcp cdi-importer against curl | xz -d into a scratch file, then qemu-img convert -t writeback",
}

// setupCDI converts the sparse source to the format, serves it with
// nginx, and makes the loop device the import writes.
func setupCDI(format string) func(e *Env, src *Source) (*Pair, error) {
	return func(e *Env, src *Source) (*Pair, error) {
		if err := needPrograms("nginx", "qemu-img", "xz"); err != nil {
			return nil, err
		}
		cg, err := newMemCgroup("ringcp-bench-cdi-" + format)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errSkip, err)
		}
		e.onClose(cg.remove)
		web := filepath.Join(e.Dir, "web-"+format)
		if err := os.MkdirAll(web, 0o755); err != nil {
			return nil, err
		}
		name, err := cdiImage(e, src, web, format)
		if err != nil {
			return nil, err
		}
		srv, err := startNginx(e, web)
		if err != nil {
			return nil, err
		}
		url := "http://" + srv.addr
		p, err := cdiVolume(e, src)
		if err != nil {
			return nil, err
		}
		s := &cdiSetup{url: url + "/" + name, scratch: filepath.Join(e.Dir, "cdi-scratch.img"),
			log: filepath.Join(e.Dir, "cdi-termination-log"), cg: cg}
		cdiSetups["cdi-"+format] = s
		p.Src = s.url
		wipe := p.Reset
		p.Reset = func() error {
			os.Remove(s.scratch)
			if err := cg.renew(); err != nil {
				return err
			}
			return wipe()
		}
		return p, nil
	}
}

// cdiVolume is the block volume the import writes: a loop device (direct
// I/O on) over a preallocated image of the source's size rounded up to
// 512 bytes, as QEMU sizes an image (the import is that long).
func cdiVolume(e *Env, src *Source) (*Pair, error) {
	size := (src.Size + 511) / 512 * 512
	p, err := loopImage(e, "dst-cdi.img", size)
	if err != nil {
		return nil, err
	}
	p.Src, p.Size, p.Content = src.Path, size, src.Content
	return p, nil
}

// cdiImage writes the image nginx serves and returns its name.
func cdiImage(e *Env, src *Source, dir, format string) (string, error) {
	if format == "qcow2" {
		e.logf("converting %s to qcow2", src.Path)
		out, err := exec.Command("qemu-img", "convert", "-f", "raw", "-O", "qcow2", src.Path, filepath.Join(dir, "disk.qcow2")).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("qemu-img convert to qcow2: %v: %s", err, firstLines(out, 2))
		}
		return "disk.qcow2", nil
	}
	e.logf("compressing %s with xz -T0", src.Path)
	out, err := os.Create(filepath.Join(dir, "disk.raw.xz"))
	if err != nil {
		return "", err
	}
	defer out.Close()
	cmd := exec.Command("xz", "-T0", "-1", "-c", src.Path)
	var msg strings.Builder
	cmd.Stdout, cmd.Stderr = out, &msg
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("xz: %v: %s", err, firstLines([]byte(msg.String()), 2))
	}
	return "disk.raw.xz", nil
}

// inCgroup runs argv as the first thing in the run's memory cgroup.
func (s *cdiSetup) inCgroup(argv ...string) []string {
	return append([]string{"sh", "-c", `echo $$ > "$0" && exec "$@"`, s.cg.procs()}, argv...)
}

// cdiRingcpPlan is ringcp cdi-importer with CDI's environment for the
// image, onto the device; no scratch space (none is needed).
func cdiRingcpPlan(j Job) Plan {
	s := cdiSetups[j.workload()]
	env := []string{"env", "-i", "IMPORTER_SOURCE=http", "IMPORTER_ENDPOINT=" + s.url, "IMPORTER_CONTENTTYPE=kubevirt",
		"OWNER_UID=bench", "PREALLOCATION=false", "FILESYSTEM_OVERHEAD=0"}
	argv := append(env, "ringcp", "cdi-importer", "--block-device", j.Dst, "--data-dir", "/nonexistent",
		"--scratch-dir", "/nonexistent", "--termination-log", s.log, "--metrics-addr", "127.0.0.1:0")
	return Plan{{s.inCgroup(append(argv, j.Extra...)...)}}
}

// cdiQemuPlan is CDI's pipeline: nbdkit curl under qemu-img convert for
// qcow2; for xz a scratch file first.
func cdiQemuPlan(j Job) Plan {
	s := cdiSetups[j.workload()]
	convert := "qemu-img convert -t writeback -p -O raw"
	if strings.HasSuffix(s.url, ".qcow2") {
		return Plan{{s.inCgroup("nbdkit", "-r", "-U", "-", "curl", "url="+s.url, "--run", convert+` "$uri" `+shQuote(j.Dst))}}
	}
	fetch := fmt.Sprintf("curl -sSf %s | xz -dc > %s", shQuote(s.url), shQuote(s.scratch))
	return Plan{
		{s.inCgroup("sh", "-c", fetch)},
		{s.inCgroup("sh", "-c", convert+" -f raw "+shQuote(s.scratch)+" "+shQuote(j.Dst))},
	}
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// workload names the job's workload by its pair.
func (j Job) workload() string {
	for name, s := range cdiSetups {
		if s.url == j.Src {
			return name
		}
	}
	return ""
}

// parseCDIMemory records the run's memory cgroup's peak.
func parseCDIMemory(_ [][]byte, r *Run) error {
	s := cdiSetups[r.Workload]
	if s == nil {
		return fmt.Errorf("no cdi setup for %s", r.Workload)
	}
	peak, err := s.cg.peak()
	r.MemPeak = peak
	return err
}
