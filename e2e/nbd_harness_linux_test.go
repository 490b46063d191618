package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/nbdtest"
	"github.com/ringcp/ringcp/nbd"
)

// Helpers of the NBD tests: real servers (internal/nbdtest), and the
// exports' bytes read and written with our own client, which package nbd
// tests against the same servers.

// memory serves an nbdkit memory export of size bytes (zeros), with the
// filters and parameters in extra, and returns its URI.
func memory(t *testing.T, tr nbdtest.Transport, size int64, extra ...string) string {
	t.Helper()
	args := append([]string{"memory", strconv.FormatInt(size, 10)}, extra...)
	return nbdtest.Nbdkit(t, tr, filtersFirst(args)...).URI
}

// filtersFirst moves --filter=... arguments before the plugin, where
// nbdkit wants them.
func filtersFirst(args []string) []string {
	var filters, rest []string
	for _, a := range args {
		if len(a) > 9 && a[:9] == "--filter=" {
			filters = append(filters, a)
		} else {
			rest = append(rest, a)
		}
	}
	return append(filters, rest...)
}

// exportClient connects to an export for a test, closed at its end.
func exportClient(t *testing.T, uri string) *nbd.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := nbd.Dial(ctx, uri, nbd.Options{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("dial %s: %v", uri, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// exportBytes reads a whole export.
func exportBytes(t *testing.T, uri string) []byte {
	t.Helper()
	c := exportClient(t, uri)
	b := make([]byte, c.Info().Size)
	if _, err := c.ReadAt(b, 0); err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	return b
}

// fillExport writes b at the start of an export and flushes.
func fillExport(t *testing.T, uri string, b []byte) {
	t.Helper()
	c := exportClient(t, uri)
	if _, err := c.WriteAt(b, 0); err != nil {
		t.Fatalf("write %s: %v", uri, err)
	}
	if err := c.Flush(); err != nil {
		t.Fatalf("flush %s: %v", uri, err)
	}
}

// sameBytes fails the test at the first byte where got differs from want.
func sameBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d bytes, want %d", what, len(got), len(want))
	}
	if i := bytes.Compare(got, want); i != 0 {
		for k := range got {
			if got[k] != want[k] {
				t.Fatalf("%s differs at byte %d: %#x, want %#x", what, k, got[k], want[k])
			}
		}
	}
}

// sameFile fails the test unless the file at path holds exactly want.
func sameFile(t *testing.T, what, path string, want []byte) {
	t.Helper()
	sameBytes(t, what, fileBytes(t, path), want)
}

// fileBytes reads a whole file, failing the test when it cannot.
func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jsonCopy runs ringcp --json and returns its report; the copy must
// succeed.
func jsonCopy(t *testing.T, args ...string) map[string]any {
	t.Helper()
	r := cli(t, append([]string{"--json", "--progress", "none"}, args...)...)
	if r.code != exitOK {
		t.Fatalf("ringcp %v: exit %d\n%s", args, r.code, r.stderr)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("ringcp %v: stdout is not JSON: %v\n%s", args, err, r.stdout)
	}
	if rep["engine"] != "nbd" || rep["synced"] != true || rep["dst_state"] != "complete" {
		t.Fatalf("ringcp %v: report %v: want engine nbd, synced, complete", args, rep)
	}
	return rep
}

// num is a number field of a JSON report.
func num(t *testing.T, rep map[string]any, k string) int64 {
	t.Helper()
	v, ok := rep[k].(float64)
	if !ok {
		t.Fatalf("report has no number %q: %v", k, rep)
	}
	return int64(v)
}

func sizeArg(n int64) string { return fmt.Sprint(n) }
