package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

const modulePath = "github.com/ringcp/ringcp"

// findRingcp returns the ringcp binary to bench: the -ringcp path when
// given, else one built from the enclosing module into dir. Either way the
// binary must answer --help with its real usage; the placeholder main of
// an unfinished checkout does not, and is reported as missing.
func findRingcp(path, dir string) (string, error) {
	if path == "" {
		root, err := moduleRoot()
		if err != nil {
			return "", err
		}
		path = filepath.Join(dir, "ringcp")
		cmd := exec.Command("go", "build", "-o", path, ".")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build in %s: %v\n%s", root, err, firstLines(out, 8))
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

// moduleRoot finds the directory of ringcp's go.mod from the working
// directory (the repository root for `go run ./bench`, bench/ for go test).
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside the %s module; pass -ringcp PATH", modulePath)
	}
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	if !bytes.Contains(b, []byte("module "+modulePath+"\n")) {
		return "", fmt.Errorf("%s is not %s's; pass -ringcp PATH", gomod, modulePath)
	}
	return filepath.Dir(gomod), nil
}

// ringcpReport is the part of `ringcp --json` the bench records.
type ringcpReport struct {
	Engine         string  `json:"engine"`
	FallbackReason string  `json:"fallback_reason"`
	Bytes          int64   `json:"bytes"`
	Seconds        float64 `json:"seconds"`
	CPUSeconds     float64 `json:"cpu_seconds"`
	BlockSize      int64   `json:"block_size"`
	QueueDepth     int     `json:"queue_depth"`
	DirectSrc      bool    `json:"direct_src"`
	DirectDst      bool    `json:"direct_dst"`
}

// parseRingcp reads the JSON object ringcp prints last on stdout and keeps
// what it chose (engine, block size, queue depth, O_DIRECT per side), so the
// report can say which defaults were measured.
func parseRingcp(out [][]byte, r *Run) error {
	var last []byte
	sc := bufio.NewScanner(bytes.NewReader(out[0]))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 && line[0] == '{' {
			last = append(last[:0], line...)
		}
	}
	if last == nil {
		return fmt.Errorf("ringcp --json printed no JSON object")
	}
	var rep ringcpReport
	if err := json.Unmarshal(last, &rep); err != nil {
		return fmt.Errorf("ringcp --json: %w", err)
	}
	r.setInfo("engine", rep.Engine)
	if rep.FallbackReason != "" {
		r.setInfo("fallback_reason", rep.FallbackReason)
	}
	r.setInfo("block_size", strconv.FormatInt(rep.BlockSize, 10))
	r.setInfo("queue_depth", strconv.Itoa(rep.QueueDepth))
	r.setInfo("direct", fmt.Sprintf("src=%v dst=%v", rep.DirectSrc, rep.DirectDst))
	r.setInfo("self_seconds", strconv.FormatFloat(rep.Seconds, 'f', 3, 64))
	if rep.Bytes != r.Size {
		return fmt.Errorf("ringcp --json says %d bytes copied, want %d", rep.Bytes, r.Size)
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
