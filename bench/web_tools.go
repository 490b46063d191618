package main

import (
	"path/filepath"
)

// webTools are the peers of the web workloads (web.go), each limited to
// them: a URL is what they read.
var webTools = []Tool{
	{Name: "curl", Needs: []string{"curl"}, Plan: curlPlan, Workloads: webWorkloads("raw")},
	{Name: "wget", Needs: []string{"wget"}, Plan: wgetPlan, Workloads: webWorkloads("raw")},
	{Name: "aria2c", Needs: []string{"aria2c"}, Plan: aria2cPlan, Workloads: webWorkloads("raw")},
	{Name: "qemu-img-http", Needs: []string{"qemu-img", "truncate"}, Plan: qemuImgHTTPPlan, Workloads: webWorkloads("raw", "qcow2")},
	{Name: "nbdcopy-curl", Needs: []string{"nbdkit", "nbdcopy"}, Plan: nbdcopyCurlPlan, Workloads: webWorkloads("raw")},
	{Name: "curl-xz-dd", Needs: []string{"bash", "curl", "xz", "dd"}, Plan: pipePlan("xz -dc"), Workloads: webWorkloads("xz")},
	{Name: "curl-zstd-dd", Needs: []string{"bash", "curl", "zstd", "dd"}, Plan: pipePlan("zstd -dc"), Workloads: webWorkloads("zst")},
}

// webWorkloads names the web workloads of these kinds ("raw", "xz",
// "zst", "qcow2").
func webWorkloads(kinds ...string) []string {
	var names []string
	for _, c := range webCases {
		kind := c.pack
		switch {
		case c.qcow2:
			kind = "qcow2"
		case kind == "":
			kind = "raw"
		}
		for _, k := range kinds {
			if k == kind {
				names = append(names, c.name())
			}
		}
	}
	return names
}

// curlPlan is `curl -o`, what most people type.
func curlPlan(j Job) Plan {
	return Plan{{{"curl", "-fsS", "-o", j.Dst, j.Src}}}
}

func wgetPlan(j Job) Plan {
	return Plan{{{"wget", "-q", "-O", j.Dst, j.Src}}}
}

// aria2cPlan: eight connections, eight pieces, as its users speed up a
// download; DST is written in place (no preallocation, no renaming).
func aria2cPlan(j Job) Plan {
	return Plan{{{"aria2c", "-q", "-x8", "-s8", "--allow-overwrite=true", "--auto-file-renaming=false",
		"--file-allocation=none", "-d", filepath.Dir(j.Dst), "-o", filepath.Base(j.Dst), j.Src}}}
}

// qemuImgHTTPPlan is qemu-img convert reading the URL through its curl
// driver. -m 1: with more coroutines in flight (its default 8, vdsm's 16)
// QEMU 7.2's curl driver stalls for good on nginx here (a 1 MiB file
// copies, an 8 MiB one never ends), so one request at a time is what
// works; the source's cache mode is the driver's own (no O_DIRECT).
func qemuImgHTTPPlan(j Job) Plan {
	argv := []string{"qemu-img", "convert", "-t", "none", "-m", "1", "-f", j.SrcFormat, "-O", "raw"}
	if j.DstDev {
		argv = append(argv, "-n")
	}
	return withTruncate(Plan{{append(argv, j.SrcImage, j.Dst)}}, j)
}

// nbdcopyCurlPlan reads the export nbdkit's curl plugin makes of the URL.
func nbdcopyCurlPlan(j Job) Plan {
	return Plan{{{"nbdcopy", "--flush", j.ViaNBD, j.Dst}}}
}

// pipePlan is the pipeline platforms run: the URL downloaded, decoded
// and written by dd in 4 MiB blocks, pipefail so that a failure anywhere
// fails it.
func pipePlan(decode string) func(j Job) Plan {
	return func(j Job) Plan {
		script := `curl -fsS "$1" | ` + decode + ` | dd of="$2" bs=4M iflag=fullblock status=none`
		return Plan{{{"bash", "-o", "pipefail", "-c", script, "bash", j.Src, j.Dst}}}
	}
}
