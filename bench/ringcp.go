package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const modulePath = "github.com/ringcp/ringcp"

// findRingcp returns the ringcp binary to bench: the -ringcp path when
// given, else one built into dir from ringcp's module (moduleRoot), or
// from commit rev of it (-ringcp-rev: a checkout that others edit may not
// build, and a commit names what was measured). Either way the binary must answer --help
// with its real usage; the placeholder main of an unfinished checkout does
// not, and is reported as missing.
func findRingcp(path, rev, dir string) (string, error) {
	if path == "" {
		root, err := moduleRoot()
		if err != nil {
			return "", err
		}
		if rev != "" {
			if root, err = exportRev(root, rev, filepath.Join(dir, "ringcp-src")); err != nil {
				return "", err
			}
		}
		path = filepath.Join(dir, "ringcp")
		cmd := exec.Command("go", "build", "-o", path, ".")
		cmd.Dir = root
		// ringcp's module alone, as `go install` builds it for a user: not
		// the workspace that adds the bench's module; static, as the
		// README says to build it.
		cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			msg := strings.ReplaceAll(firstLines(out, 4), "\n", " | ")
			return "", fmt.Errorf("go build in %s: %v: %s", root, err, msg)
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	out, _ := exec.Command(abs, "--help").CombinedOutput()
	if !bytes.Contains(out, []byte("block-size")) {
		return "", fmt.Errorf("ringcp CLI not ready: --help says %q", firstLines(out, 1))
	}
	return abs, nil
}

// exportRev writes the tree of commit rev of the repository at root into
// dst (git archive, unpacked here) and returns dst.
func exportRev(root, rev, dst string) (string, error) {
	cmd := exec.Command("git", "-C", root, "archive", "--format=tar", rev)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	xerr := untar(out, dst)
	if err := cmd.Wait(); err != nil {
		return "", fmt.Errorf("git archive %s: %v: %s", rev, err, strings.TrimSpace(stderr.String()))
	}
	return dst, xerr
}

func untar(r io.Reader, dst string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Join(dst, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(name, filepath.Clean(dst)+string(os.PathSeparator)) {
			continue // an entry outside dst: not ours to write
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(name, 0o755)
		case tar.TypeReg:
			err = writeFileFrom(name, tr, h.FileInfo().Mode().Perm())
		}
		if err != nil {
			return err
		}
	}
}

func writeFileFrom(name string, r io.Reader, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// moduleRoot is the directory of ringcp's module, as the go command
// resolves it from the working directory: the repository root under the
// go.work there (`go run ./bench` at the root, go test in bench/), and the
// same directory through bench/go.mod's replace without it (GOWORK=off).
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", modulePath).CombinedOutput()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		return "", fmt.Errorf("go list -m %s: %v: %s; pass -ringcp PATH", modulePath, err, firstLines(out, 1))
	}
	return dir, nil
}

// ringcpReport is the part of `ringcp --json` the bench records, under
// ringcp's own names.
type ringcpReport struct {
	Engine          string `json:"engine"`
	FallbackReason  string `json:"fallback_reason"`
	Bytes           int64  `json:"bytes"` // written as data
	BytesRead       int64  `json:"bytes_read"`
	BytesHoles      int64  `json:"bytes_holes"`
	BytesZeroed     int64  `json:"bytes_zeroed"`
	Offload         string `json:"offload"`
	Milliseconds    int64  `json:"milliseconds"`
	CPUMilliseconds int64  `json:"cpu_milliseconds"`
	BlockSize       int64  `json:"block_size"`
	QueueDepth      int    `json:"queue_depth"`
	DirectSrc       bool   `json:"direct_src"`
	DirectDst       bool   `json:"direct_dst"`
	// Neighbour is what its good neighbour chose (issue 27); nil with
	// --queue-depth.
	Neighbour *ringcpNeighbour `json:"neighbour,omitempty"`
	// Yield is what --yield's controller did; nil without --yield.
	Yield *ringcpYield `json:"yield,omitempty"`
}

// ringcpYield is the part of ringcp's yield report the busy workload
// reads: how often it cut and raised (futile: others suffered but the
// last cut had not helped), how long it held the copy cut, how low the
// depth and rate went, and the probe read's wait before the copy and at
// its worst.
type ringcpYield struct {
	Cuts        int   `json:"cuts"`
	Raises      int   `json:"raises"`
	Futile      int   `json:"futile"`
	CutMillis   int64 `json:"cut_milliseconds"`
	LowestDepth int   `json:"lowest_depth"`
	LowestRate  int64 `json:"lowest_rate"`
	ProbeBase   int64 `json:"probe_base_microseconds"`
	ProbeMax    int64 `json:"probe_max_microseconds"`
}

// ringcpNeighbour is the part of ringcp's neighbour report the busy
// workload reads: the speed alone it learnt, the most beside others, the
// share it aimed at, and which windows it held for how long.
type ringcpNeighbour struct {
	SoloRate     int64          `json:"solo_rate"`
	BestRate     int64          `json:"best_rate"`
	Keep         float64        `json:"keep"`
	MedianBytes  int64          `json:"median_bytes_in_flight"`
	HeldMillis   int64          `json:"held_milliseconds"`
	FloorMillis  int64          `json:"floor_milliseconds"`
	OthersMillis int64          `json:"others_milliseconds"`
	Samples      int            `json:"samples"`
	Restarts     int            `json:"restarts"`
	Windows      []ringcpWindow `json:"windows"`
}

// ringcpWindow is the time ringcp's window held Bytes in flight.
type ringcpWindow struct {
	Bytes  int64 `json:"bytes_in_flight"`
	Millis int64 `json:"milliseconds"`
}

// parseRingcp reads the JSON object ringcp prints last on stdout and keeps
// what it chose (engine, block size, queue depth, O_DIRECT per side), so the
// report can say which defaults were measured, and how it accounted for
// the bytes: data written, holes left, zeros made. Those must add up to
// the copy's size.
func parseRingcp(out [][]byte, r *Run) error {
	last := lastJSON(out[0])
	if last == nil {
		return fmt.Errorf("ringcp --json printed no JSON object")
	}
	var rep ringcpReport
	if err := json.Unmarshal(last, &rep); err != nil {
		return fmt.Errorf("ringcp --json: %w", err)
	}
	r.Ringcp = &rep
	if sum := rep.Bytes + rep.BytesHoles + rep.BytesZeroed; sum != r.Size {
		return fmt.Errorf("ringcp --json accounts for %d bytes (%d data, %d holes, %d zeroed), want %d",
			sum, rep.Bytes, rep.BytesHoles, rep.BytesZeroed, r.Size)
	}
	return nil
}

func firstLines(b []byte, n int) string {
	lines := strings.SplitN(strings.TrimSpace(string(b)), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
