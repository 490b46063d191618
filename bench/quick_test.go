package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestQuick runs `go run ./bench -quick` in-process: every tool makes one
// copy of 64 MiB plus an odd tail on each workload (of a 256 MiB+4321
// sparse image on the sparse one), and every copy must be byte-exact.
// ringcp's sparse copies must also take no more room than their source, as
// the README promises; a peer's allocation is only reported. It asserts
// nothing about time. It needs root (loop devices, drop_caches), every
// peer installed, and a ringcp that builds and answers --help; otherwise
// it skips and says what is missing.
func TestQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the quick bench copies about a gigabyte in all")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root for loop devices and drop_caches")
	}
	var lack []string
	for _, tool := range tools {
		for _, prog := range tool.Needs {
			if _, err := lookPath(prog); err != nil && prog != "ringcp" {
				lack = append(lack, prog+" (apt-get install "+debianPkg[prog]+")")
			}
		}
	}
	if len(lack) > 0 {
		t.Skipf("peers missing: %s", strings.Join(lack, ", "))
	}
	bin, err := findRingcp(os.Getenv("RINGCP_BENCH_BINARY"), "", t.TempDir())
	if err != nil {
		t.Skipf("no ringcp to bench: %v", err)
	}
	workDir := os.Getenv("RINGCP_BENCH_WORKDIR")
	if workDir == "" {
		// Not t.TempDir: TMPDIR may be a tmpfs, which refuses O_DIRECT.
		workDir = "/var/tmp/ringcp-bench"
	}
	cfg, err := parseFlags([]string{"-quick", "-workdir", workDir, "-ringcp", bin})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute) // the busy workload runs 17 copies beside fio; the web workloads about 50 more; the qcow2 ones 26 (about 4 minutes on the loaded machine)
	defer cancel()
	var out, log bytes.Buffer
	res, err := runBench(ctx, cfg, &out, &log)
	t.Logf("progress:\n%s", log.String())
	t.Logf("report:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Missing) > 0 {
		t.Errorf("tools missing after the check above: %v", res.Missing)
	}
	for _, r := range res.Runs {
		if r.Err != nil {
			t.Errorf("%s on %s: %s: %v", r.Tool, r.Workload, r.Verdict(), r.Err)
		}
		if r.Workload != "sparse" || r.Err != nil {
			continue
		}
		dst, src := r.DstAlloc, r.SrcAlloc
		switch {
		case dst <= 0 || src <= 0:
			t.Errorf("%s on sparse: allocation not measured: DST %d, SRC %d", r.Tool, dst, src)
		case (r.Tool == "ringcp" || r.Tool == "ringcp-pool") && dst > src:
			t.Errorf("%s on sparse: DST allocates %d bytes, SRC %d", r.Tool, dst, src)
		}
	}
	if len(res.Runs) == 0 {
		t.Error("no copy was made")
	}
}
