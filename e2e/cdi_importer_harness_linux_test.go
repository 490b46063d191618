package e2e

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ringcp/ringcp/internal/blocktest"
	"github.com/ringcp/ringcp/internal/podtest"
)

// How the cdi-importer tests run it: in an importer pod's world
// (podtest: /dev/cdi-block-volume, /data, /scratch, the termination log),
// with CDI's environment, its progress endpoint on a free loopback port
// scraped as CDI's controller scrapes it while it runs.

// importerRun is one `ringcp cdi-importer` in a pod.
type importerRun struct {
	pod     *podtest.Pod
	cmd     *exec.Cmd
	out     *lockedBuffer
	exited  chan struct{}
	code    int
	metrics string // host:port
	uid     string // OWNER_UID

	mu       sync.Mutex
	progress []float64 // what the scrapes found, in order
}

// cdiEnv is the environment CDI's controller gives an importer, for an
// import from url (a source of http), with over.
func cdiEnv(source, url string, over ...string) []string {
	env := []string{"PATH=/usr/bin:/usr/sbin", "IMPORTER_SOURCE=" + source, "IMPORTER_ENDPOINT=" + url,
		"IMPORTER_CONTENTTYPE=kubevirt", "IMPORTER_IMAGE_SIZE=", "OWNER_UID=7c3b1f9e-test",
		"FILESYSTEM_OVERHEAD=0.055", "PREALLOCATION=false", "CACHE_MODE=", "INSECURE_TLS=false",
		"IMPORTER_CERT_DIR=", "IMPORTER_CHECKSUM=", "IMPORTER_READY_FILE=", "IMPORTER_DONE_FILE="}
	return append(env, over...)
}

// startImporter runs the importer in pod with env and args (beside the
// metrics address), and scrapes its endpoint until it exits.
func startImporter(t *testing.T, pod *podtest.Pod, env []string, args ...string) *importerRun {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	argv := append([]string{"cdi-importer", "-v=1", "--metrics-addr", addr}, args...)
	cmd, err := pod.Command(binary(t), argv...)
	if err != nil {
		t.Fatal(err)
	}
	r := &importerRun{pod: pod, cmd: cmd, out: &lockedBuffer{}, exited: make(chan struct{}), metrics: addr}
	for _, kv := range env {
		if v, ok := cutPrefix(kv, "OWNER_UID="); ok {
			r.uid = v
		}
	}
	cmd.Env, cmd.Stdout, cmd.Stderr = env, r.out, r.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := cmd.Wait()
		r.code = exitCodeOf(err)
		close(r.exited)
	}()
	go r.scrape()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-r.exited
	})
	return r
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return "", false
}

func exitCodeOf(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// wait waits for the importer's exit and returns its code.
func (r *importerRun) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-r.exited:
	case <-time.After(limit):
		t.Fatalf("the importer runs after %v:\n%s", limit, r.out.String())
	}
	t.Logf("cdi-importer -> %d\n%s", r.code, r.out.String())
	return r.code
}

// cdiProgress is CDI's controller's expression for the progress metric
// (its documentation: (METRIC)\{ownerUID\="UID"\} (\d{1,3}\.?\d*)), for
// the import progress metric and uid.
func cdiProgress(uid string) *regexp.Regexp {
	return regexp.MustCompile(`(kubevirt_cdi_import_progress_total)\{ownerUID\=` + regexp.QuoteMeta(strconv.Quote(uid)) + `\} (\d{1,3}\.?\d*)`)
}

// scrape asks the endpoint every 50 ms, as the controller would (any
// certificate accepted), until the importer exits.
func (r *importerRun) scrape() {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	re := cdiProgress(r.uid)
	for {
		select {
		case <-r.exited:
			return
		case <-time.After(50 * time.Millisecond):
		}
		resp, err := client.Get("https://" + r.metrics + "/metrics")
		if err != nil {
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if m := re.FindSubmatch(body); m != nil {
			v, err := strconv.ParseFloat(string(m[2]), 64)
			if err == nil {
				r.mu.Lock()
				r.progress = append(r.progress, v)
				r.mu.Unlock()
			}
		}
	}
}

// scraped is what the scrapes read.
func (r *importerRun) scraped() []float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]float64(nil), r.progress...)
}

// asQemu runs pod's importer as CDI's UID 107, which must reach the
// binary through the tests' folders (0700 as made).
func asQemu(t *testing.T, pod *podtest.Pod) {
	t.Helper()
	pod.User = "107:107"
	for dir := filepath.Dir(binary(t)); dir != os.TempDir() && dir != "/"; dir = filepath.Dir(dir) {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// termination is the termination log's content.
func (r *importerRun) termination(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(r.pod.TerminationLog)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// cdiMessage is what CDI's controller decodes after exit 0, and ringcp's
// details.
type cdiMessage struct {
	ScratchSpaceRequired *bool   `json:"scratchSpaceRequired"`
	PreallocationApplied *bool   `json:"preallocationApplied"`
	Message              *string `json:"message"`
	Ringcp               *struct {
		Bytes   int64 `json:"bytes"`
		Size    int64 `json:"size"`
		Resumed bool  `json:"resumed"`
	} `json:"ringcp"`
}

// completed wants exit 0 and CDI's message of a completed import.
func (r *importerRun) completed(t *testing.T) cdiMessage {
	t.Helper()
	if code := r.wait(t, 3*time.Minute); code != 0 {
		t.Fatalf("exit %d; termination log: %s", code, r.termination(t))
	}
	var m cdiMessage
	text := r.termination(t)
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("termination log is no JSON: %v: %q", err, text)
	}
	if m.Message == nil || *m.Message != "Import Complete" || m.ScratchSpaceRequired == nil || *m.ScratchSpaceRequired {
		t.Fatalf("termination message of a completed import: %s", text)
	}
	return m
}

// lockedBuffer is an output buffer two goroutines may use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// diskImage makes a raw disk image of size bytes at path: data at odd
// places (a 4097-byte tail included), holes between, a run of zeros
// written as data; it returns its bytes.
func diskImage(t *testing.T, path string, size int64, seed uint64) []byte {
	t.Helper()
	want := make([]byte, size)
	rng := rand.New(rand.NewPCG(seed, 26))
	fill := func(from, n int64) {
		for i := from; i < min(from+n, size); i++ {
			want[i] = byte(rng.Uint32())
		}
	}
	fill(0, 1<<20+7)
	fill(size/3, 3<<20+511)
	fill(size-4097, 4097)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int64{{0, 1<<20 + 7}, {size / 3, 3<<20 + 511}, {size / 2, 1 << 20}, {size - 4097, 4097}} {
		if _, err := f.WriteAt(want[r[0]:min(r[0]+r[1], size)], r[0]); err != nil {
			t.Fatal(err)
		}
	}
	return want
}

// filled is a loop device of size bytes holding 0xAA everywhere, so that
// what the import does not write is seen.
func filled(t *testing.T, size int64) (dev string, fill []byte) {
	t.Helper()
	dev, _ = blocktest.Device(t, size)
	fill = bytes.Repeat([]byte{0xAA}, int(size))
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(fill, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	return dev, fill
}

// fsVolume is an ext4 filesystem volume, mounted; it returns the mount.
func fsVolume(t *testing.T, size int64) string {
	t.Helper()
	blocktest.NeedTool(t, "mkfs.ext4")
	dev, _ := blocktest.Device(t, size)
	blocktest.Mkfs(t, dev, "ext4")
	return blocktest.Mount(t, dev, "ext4", 0)
}

// deviceHolds wants dev to start with want and hold rest after it.
func deviceHolds(t *testing.T, dev string, want, rest []byte) {
	t.Helper()
	got, err := os.ReadFile(dev)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[:len(want)], want) {
		t.Fatalf("the block volume does not hold the image (first difference at %d)", firstDiff(got, want))
	}
	if !bytes.Equal(got[len(want):], rest) {
		t.Fatalf("the block volume changed past the image (at %d)", len(want)+firstDiff(got[len(want):], rest))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
