package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ringcp/ringcp/internal/units"
)

// The busy workload's frontier (-busy-windows): ringcp with a fixed
// window, one tool per block size x queue depth, each beside the same
// foreground. No controller can do better beside others than the best
// fixed window of the same bytes in flight, so these rows say what the
// disk allows: the foreground's share and the copy's share that any
// window reaches at once (issue 27's targets ask for both).

// addWindowTools registers a tool ringcp-w<BS>x<QD> for each BS:QD of
// spec, a comma-separated list such as "256K:1,1M:2,8M:8", and appends
// them to the busy table's rows.
func addWindowTools(spec string) error {
	for _, w := range splitList(spec) {
		bs, qd, err := parseWindow(w)
		if err != nil {
			return fmt.Errorf("-busy-windows %q: %w", w, err)
		}
		name := "ringcp-w" + strings.TrimSuffix(units.Exact(bs), "iB") + "x" + strconv.Itoa(qd)
		if _, err := toolByName(name); err == nil {
			continue
		}
		tools = append(tools, Tool{Name: name, Needs: []string{"ringcp"}, Parse: parseRingcp,
			Plan:      ringcpPlan("--block-size="+strconv.FormatInt(bs, 10), "--queue-depth="+strconv.Itoa(qd)),
			Workloads: busyWorkloads})
		busyTools = append(busyTools, name)
	}
	for i := range workloads {
		if slices.Contains(busyWorkloads, workloads[i].Name) {
			workloads[i].Tools = busyTools
		}
	}
	return nil
}

// busyWorkloads are the workloads with the busy workload's foreground.
var busyWorkloads = []string{"busy", "busy-mq-deadline", "busy-bfq"}

// parseWindow reads one BS:QD of -busy-windows.
func parseWindow(w string) (int64, int, error) {
	b, q, ok := strings.Cut(w, ":")
	if !ok {
		return 0, 0, fmt.Errorf("want BLOCKSIZE:QUEUEDEPTH, as 1M:4")
	}
	bs, err := parseSize(b)
	if err != nil || bs < 4096 || bs%4096 != 0 {
		return 0, 0, fmt.Errorf("block size %q: want a multiple of 4 KiB", b)
	}
	qd, err := strconv.Atoi(q)
	if err != nil || qd < 1 {
		return 0, 0, fmt.Errorf("queue depth %q: want a positive integer", q)
	}
	return bs, qd, nil
}
