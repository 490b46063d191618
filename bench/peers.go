package main

import (
	"cmp"
	"fmt"
	"strconv"
)

// Job is one copy a tool is asked to make.
type Job struct {
	*Pair
	Fio   fioShape // the ceiling's block size and depth, from calibration
	Extra []string // more ringcp flags (the sweep's -b and -q)
	Rate  int64    // the rate cap of the busy workload's capped copies (-busy-rate)
}

// Plan is what a tool runs for one job: stages one after another, the
// commands of one stage at the same time (four dd's, say). argv[0] is a
// program name from the tool's Needs.
type Plan [][][]string

// Tool is one column of the comparison, run the way the seeds and their
// users run it. Each tool is one entry of the tools table.
type Tool struct {
	Name  string
	Needs []string // programs the plan runs; missing ones skip the tool
	Plan  func(j Job) Plan
	// Parse reads the stdout of the plan's commands (optional): ringcp's
	// --json, fio's JSON.
	Parse func(out [][]byte, r *Run) error
	// Ceiling marks fio: it copies nothing, so nothing is checked, and its
	// time is what the device needs to read and write Size at once.
	Ceiling bool
	// Workloads, when set, limits the tool to these workloads: a variant
	// that only means something there (cp --sparse=always on a file with
	// no zeros is cp).
	Workloads []string
	// Batch: the tool copies the pair's Jobs, all at once (jobs.go).
	Batch bool
	// NoCopy marks a run that copies nothing (the busy workload's
	// foreground alone): DST is neither synced nor checked.
	NoCopy bool
	// NoForeground runs the tool without the workload's foreground (the
	// busy workload's ringcp alone).
	NoForeground bool
}

// debianPkg says where each program comes from, for the "missing" list.
var debianPkg = map[string]string{
	"dd": "coreutils", "cp": "coreutils", "sync": "coreutils", "truncate": "coreutils",
	"sgp_dd":   "sg3-utils",
	"qemu-img": "qemu-utils",
	"nbdcopy":  "libnbd-bin",
	"fio":      "fio",
	"ringcp":   "this repository: go build -o ringcp .",
}

// versionArg is the flag that makes each peer print its version, for the
// report header (numbers move between releases; say which ones ran).
var versionArg = map[string]string{
	"dd": "--version", "cp": "--version", "sgp_dd": "-V", "qemu-img": "--version",
	"nbdcopy": "--version", "fio": "--version",
}

var tools = []Tool{
	{Name: "ringcp", Needs: []string{"ringcp"}, Plan: ringcpPlan(), Parse: parseRingcp},
	{Name: "ringcp-pool", Needs: []string{"ringcp"}, Plan: ringcpPlan("--engine=pool"), Parse: parseRingcp},
	// The reference for the sparse workload: every byte copied as data.
	{Name: "ringcp-nosparse", Needs: []string{"ringcp"}, Plan: ringcpPlan("--sparse=never"), Parse: parseRingcp,
		Workloads: []string{"sparse"}},
	// What --verify and --resume cost, and the read the verify pass is
	// held to (trust.go).
	{Name: "ringcp-verify", Needs: []string{"ringcp"}, Plan: ringcpPlan("--verify"), Parse: parseVerify},
	{Name: "ringcp+read", Needs: []string{"ringcp", "fio"}, Plan: copyReadPlan, Parse: parseCopyRead},
	{Name: "ringcp-resume", Needs: []string{"ringcp"}, Plan: resumePlan, Parse: parseResume},
	// The RHEV bug's dd runs: O_DIRECT both sides, fullblock so a short
	// read cannot shift the output, 1 MiB and the 32 MiB LVM extent.
	{Name: "dd-1M", Needs: []string{"dd"}, Plan: ddPlan("1M")},
	{Name: "dd-32M", Needs: []string{"dd"}, Plan: ddPlan("32M")},
	{Name: "dd-4x1M", Needs: []string{"dd"}, Plan: parallelDDPlan(4, 1<<20)},
	{Name: "sgp_dd", Needs: []string{"sgp_dd", "truncate"}, Plan: sgpDDPlan},
	{Name: "qemu-img", Needs: []string{"qemu-img", "truncate"}, Plan: qemuImgPlan},
	{Name: "nbdcopy", Needs: []string{"nbdcopy"}, Plan: nbdcopyPlan},
	{Name: "cp+sync", Needs: []string{"cp", "sync"}, Plan: cpPlan},
	{Name: "cp-sparse+sync", Needs: []string{"cp", "sync"}, Plan: cpSparsePlan, Workloads: []string{"sparse"}},
	{Name: "fio-ceiling", Needs: []string{"fio"}, Plan: fioPlan, Parse: parseFio, Ceiling: true},
	// Many disks at once (jobs.go): one ringcp --jobs, and four processes
	// of each peer, the AIX technote's dd's (bs=1M, raw devices: O_DIRECT).
	{Name: "ringcp-jobs", Needs: []string{"ringcp"}, Plan: ringcpJobsPlan, Parse: parseRingcpJobs, Batch: true, Workloads: jobsWorkloads},
	{Name: "ringcp-4proc", Needs: []string{"ringcp"}, Plan: eachJob(ringcpPlan()), Parse: parseEachRingcp, Batch: true, Workloads: jobsWorkloads},
	{Name: "dd-4proc", Needs: []string{"dd"}, Plan: eachJob(ddPlan("1M")), Batch: true, Workloads: jobsWorkloads},
	{Name: "sgp_dd-4proc", Needs: []string{"sgp_dd", "truncate"}, Plan: eachJob(sgpDDPlan), Batch: true, Workloads: jobsWorkloads},
	{Name: "qemu-img-4proc", Needs: []string{"qemu-img", "truncate"}, Plan: eachJob(qemuImgPlan), Batch: true, Workloads: jobsWorkloads},
}

func ringcpPlan(flags ...string) func(j Job) Plan {
	return func(j Job) Plan {
		argv := append([]string{"ringcp", "--json", "--progress", "none"}, flags...)
		argv = append(append(argv, j.Extra...), j.RingcpFlags...)
		return Plan{{append(argv, j.Src, j.Dst)}}
	}
}

func ddPlan(bs string) func(j Job) Plan {
	return func(j Job) Plan {
		return Plan{{{"dd", "if=" + j.Src, "of=" + j.Dst, "bs=" + bs,
			"iflag=direct,fullblock", "oflag=direct"}}}
	}
}

// parallelDDPlan is the AIX technote's parallel-dd script: n dd's over
// non-overlapping quarters, placed with skip/seek. conv=notrunc because a
// dd with seek= otherwise truncates the file its siblings are writing; the
// technote copied raw devices, where that cannot happen. The last dd runs
// to the end of SRC, which also takes an odd tail.
func parallelDDPlan(n int, bs int64) func(j Job) Plan {
	return func(j Job) Plan {
		blocks := (j.Size + bs - 1) / bs
		per := (blocks + int64(n) - 1) / int64(n)
		var stage [][]string
		for i := range int64(n) {
			argv := []string{"dd", "if=" + j.Src, "of=" + j.Dst, "bs=" + strconv.FormatInt(bs, 10),
				"iflag=direct,fullblock", "oflag=direct", "conv=notrunc",
				"skip=" + strconv.FormatInt(i*per, 10), "seek=" + strconv.FormatInt(i*per, 10)}
			if i < int64(n)-1 {
				argv = append(argv, "count="+strconv.FormatInt(per, 10))
			}
			stage = append(stage, argv)
		}
		return Plan{stage}
	}
}

// sgpDDPlan is the RHEV bug's sgp_dd run. sgp_dd counts in bs=512 blocks
// and does not probe a regular file's size, so count= is given (rounded up
// to take an odd tail). Its last write is a whole 512-byte block, padded,
// so a file DST whose size is not a multiple of 512 is cut back to size
// afterwards, as its user would have to.
func sgpDDPlan(j Job) Plan {
	blocks := (j.Size + 511) / 512
	p := Plan{{{"sgp_dd", "bs=512", "thr=12", "bpt=65535",
		"if=" + j.Src, "iflag=direct", "of=" + j.Dst, "oflag=direct",
		"count=" + strconv.FormatInt(blocks, 10)}}}
	return withTruncate(p, j)
}

// qemuImgPlan is vdsm's copy. -n (do not create DST) is needed for a
// device target. The raw driver rounds an image up to 512 bytes, so an
// odd-sized file copy gets the same cut back as sgp_dd's.
func qemuImgPlan(j Job) Plan {
	src, format := j.Src, "raw"
	if j.SrcImage != "" {
		src, format = j.SrcImage, j.SrcFormat
	}
	argv := []string{"qemu-img", "convert", "-t", "none", "-T", "none", "-m", "16", "-W",
		"-f", format, "-O", cmp.Or(j.DstFormat, "raw")}
	if j.DstCompress != "" {
		argv = append(argv, "-c", "-o", "compression_type="+j.DstCompress)
	}
	if j.DstDev {
		argv = append(argv, "-n")
	}
	return withTruncate(Plan{{append(argv, src, j.Dst)}}, j)
}

// withTruncate appends `truncate -s SIZE DST` for a file DST that a
// sector-granular tool padded.
func withTruncate(p Plan, j Job) Plan {
	if j.DstDev || j.DstFormat != "" || j.Size%512 == 0 {
		return p
	}
	return append(p, [][]string{{"truncate", "-s", strconv.FormatInt(j.Size, 10), j.Dst}})
}

func nbdcopyPlan(j Job) Plan {
	return Plan{{{"nbdcopy", "--flush", j.Src, j.Dst}}}
}

// cpPlan is what most people type; sync of the one file makes it durable
// (without it cp "finishes" with gigabytes still in the page cache).
func cpPlan(j Job) Plan {
	return Plan{{{"cp", j.Src, j.Dst}}, {{"sync", j.Dst}}}
}

// cpSparsePlan is how people copy an image and keep it thin: cp maps SRC's
// holes (SEEK_DATA/SEEK_HOLE) and, with always, also turns the zero blocks
// it reads into holes.
func cpSparsePlan(j Job) Plan {
	return Plan{{{"cp", "--sparse=always", j.Src, j.Dst}}, {{"sync", j.Dst}}}
}

// toolByName finds an entry of the tools table.
func toolByName(name string) (*Tool, error) {
	for i := range tools {
		if tools[i].Name == name {
			return &tools[i], nil
		}
	}
	return nil, fmt.Errorf("unknown tool %q", name)
}
