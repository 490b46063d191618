package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/schematest"

	"github.com/ringcp/ringcp/internal/uringtest"
)

// TestShareFlags: --max-rate, --ioprio and --yield reach the copy on both
// engines; -v says what each did to the plan, --json reports the cap, the
// rate reached, the priority applied, the cgroup limits met (none here:
// [], not null) and what yield did; the copy is exact. Without them the
// same fields say no cap, no priority and no yield (null).
func TestShareFlags(t *testing.T) {
	uringtest.NeedOn(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	data := randomFile(t, src, 6<<20+4097, 17)
	for _, eng := range []string{"uring", "pool"} {
		dst := filepath.Join(dir, "dst-"+eng)
		r := cli(t, "--engine", eng, "--max-rate", "8M", "--ioprio", "be:7", "--yield", "-v", "--json", src, dst)
		r.want(t, 0, "I/O priority be:7 on every read and write", "50 ms of the 8.00 MiB/s cap", "yield: depth and rate are cut", "yield: cut ", "ioprio be:7")
		schematest.Output(t).Check(t, []byte(r.stdout)) // the yield object too
		var got map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("%s: %v\n%s", eng, err, r.stdout)
		}
		rate, _ := got["bytes_per_second"].(float64)
		if got["max_rate"] != float64(8<<20) || got["ioprio"] != "be:7" || rate <= 0 {
			t.Errorf("%s: max_rate %v, ioprio %v, bytes_per_second %v", eng, got["max_rate"], got["ioprio"], got["bytes_per_second"])
		}
		if rate > 8<<20*1.05+float64(got["block_size"].(float64))*4 {
			t.Errorf("%s: achieved %v over the cap", eng, rate)
		}
		if l, ok := got["io_limits"].([]any); !ok || len(l) != 0 {
			t.Errorf("%s: io_limits %v, want []", eng, got["io_limits"])
		}
		y, ok := got["yield"].(map[string]any)
		if !ok || y["lowest_depth"] == nil || y["cuts"] == nil {
			t.Errorf("%s: yield %v", eng, got["yield"])
		}
		if out, err := os.ReadFile(dst); err != nil || !bytes.Equal(out, data) {
			t.Fatalf("%s: DST differs (%v)", eng, err)
		}
	}
	r := cli(t, "--json", src, filepath.Join(dir, "plain"))
	r.want(t, 0)
	for _, k := range []string{`"max_rate":0`, `"ioprio":""`, `"io_limits":[]`, `"yield":null`} {
		if !strings.Contains(r.stdout, k) {
			t.Errorf("plain copy: --json lacks %s:\n%s", k, r.stdout)
		}
	}
}
