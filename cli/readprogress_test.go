package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ringcp/ringcp/copier"
)

// TestReadProgress: verify and checksum write the machine formats as a
// copy does, over the bytes read and checked (a checksum's holes
// included), ending at 100 in phase done; checksum's records stay off
// stdout, which has its result. Before, neither had --progress.
func TestReadProgress(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	randomFile(t, src, 9<<20+511, 8)
	sparse := filepath.Join(dir, "sparse")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteAt([]byte("data"), 20<<20) // 20 MiB of hole, then data
	if cerr := f.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	for _, args := range [][]string{{"verify", src, src}, {"checksum", src}, {"checksum", sparse}} {
		r := cli(t, append([]string{args[0], "--progress", "json", "--progress-interval", "5ms"}, args[1:]...)...)
		r.want(t, exitOK)
		var last copier.Status
		n := 0
		for _, line := range strings.Split(r.stderr, "\n") {
			if strings.HasPrefix(line, "{") {
				if err := json.Unmarshal([]byte(line), &last); err != nil {
					t.Fatalf("%v: %q: %v", args, line, err)
				}
				n++
			}
		}
		if n == 0 || last.Phase != copier.PhaseDone || last.Percent != 100 || last.BytesDone != last.BytesTotal || last.BytesTotal == 0 {
			t.Errorf("%v: %d lines, last %+v", args, n, last)
		}
	}
	r := cli(t, "checksum", "--progress", "qemu", "--progress-interval", "5ms", src)
	r.want(t, exitOK)
	if strings.Contains(r.stdout, "/100%") || !strings.Contains(r.stderr, "(100.00/100%)") || !strings.HasPrefix(r.stdout, `{"algorithm"`) {
		t.Errorf("checksum --progress qemu: stdout %q stderr %q", r.stdout, r.stderr)
	}
	r = cli(t, "verify", "--progress", "percent", "--progress-interval", "5ms", src, src)
	r.want(t, exitOK)
	if !strings.Contains(r.stderr, "100/100\n") {
		t.Errorf("verify --progress percent: %q", r.stderr)
	}
	r = cli(t, "checksum", "--progress", "json", "--progress-fd", "1", src)
	r.want(t, exitRefused, "would share stdout")
	r = cli(t, "verify", "--json", "--progress", "json", "--progress-fd", "1", src, src)
	r.want(t, exitRefused, "would share stdout")
}
