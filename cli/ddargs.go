package cli

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// ddArgs are `ringcp dd`'s operands as GNU dd (coreutils 9) reads them.
// Sizes are in bytes; skip, seek and count keep their units until
// ddPlan resolves them.
type ddArgs struct {
	src, dst          string
	ibs, obs          int64 // bytes per input and output record; 512 unless given
	bsGiven           bool  // bs= (ibs and obs in one): the engine's block size
	count             int64 // -1: to the end of SRC
	skip, seek        int64
	countBytes        bool // count in bytes (iflag=count_bytes, or count=NB)
	skipBytes         bool // skip in bytes (iflag=skip_bytes, or skip=NB)
	seekBytes         bool // seek in bytes (oflag=seek_bytes, or seek=NB)
	iflags, oflags    []string
	conv              []string
	status            string // "", none, noxfer, progress
	directIn, directO bool
	iformat           string // iformat=: what SRC's bytes are read as (Options.SrcFormat); "" as ringcp reads them
}

// ddNoOps are flags that change nothing in a copy of regular files and
// block devices by ringcp: what they ask for is what ringcp does anyway
// (fullblock: reads are always whole), or concerns what ringcp refuses
// anyway (nonblock, noctty: FIFOs and terminals), or the cache (ringcp
// reads and writes with O_DIRECT where it can).
var ddNoOps = []string{"fullblock", "noatime", "nocache", "nonblock", "noctty", "binary", "text"}

// ddFormats are iformat='s values: Options.SrcFormat's.
var ddFormats = []string{"auto", "raw", "qcow2", "vmdk", "gzip", "zstd", "xz", "bzip2"}

// ddConvs are the conv= values ringcp takes; ddPlan refuses the others
// with the reason.
var ddConvs = []string{"notrunc", "fdatasync", "fsync", "sparse", "excl", "nocreat", "sync"}

// parseDD reads dd's operands: NAME=VALUE, in any order, each at most
// once. Errors name the operand, as GNU dd does.
func parseDD(args []string) (ddArgs, error) {
	a := ddArgs{ibs: 512, obs: 512, count: -1}
	err := a.setAll(args)
	a.ends(args)
	return a, err
}

func (a *ddArgs) setAll(args []string) error {
	seen := map[string]bool{}
	for _, arg := range args {
		name, val, ok := strings.Cut(arg, "=")
		if !ok {
			return usagef("unrecognized operand %q (dd operands are NAME=VALUE; ringcp dd --help lists them)", arg)
		}
		if seen[name] {
			return usagef("%s= given twice", name)
		}
		seen[name] = true
		if err := a.set(name, val); err != nil {
			return err
		}
	}
	return nil
}

// ends sets SRC and DST from if= and of= wherever they are, so that a
// line refused at an operand before them still names them: its --json
// object goes where the copy's would (on stderr when stdout carries the
// copy, not into the data a pipe's reader takes). As dd: no if= reads
// stdin, no of= writes stdout ("-" for both).
func (a *ddArgs) ends(args []string) {
	for _, arg := range args {
		switch name, val, _ := strings.Cut(arg, "="); name {
		case "if":
			a.src = val
		case "of":
			a.dst = val
		}
	}
	if a.src == "" {
		a.src = "-"
	}
	if a.dst == "" {
		a.dst = "-"
	}
}

func (a *ddArgs) set(name, val string) error {
	switch name {
	case "if":
		a.src = val
	case "of":
		a.dst = val
	case "bs", "ibs", "obs":
		return a.setBlock(name, val)
	case "count", "skip", "iseek", "seek", "oseek":
		return a.setCount(name, val)
	case "iflag", "oflag":
		return a.setFlags(name, val)
	case "conv":
		a.conv = strings.Split(val, ",")
	case "status":
		if !slices.Contains([]string{"none", "noxfer", "progress"}, val) {
			return usagef("status=%s: want none, noxfer or progress", val)
		}
		a.status = val
	case "iformat":
		// ringcp's own: dd has no formats, and copies a disk image's or
		// compressed data's bytes as they are.
		if !slices.Contains(ddFormats, val) {
			return usagef("iformat=%s: want %s", val, strings.Join(ddFormats, ", "))
		}
		a.iformat = val
	case "cbs":
		return usagef("cbs=%s: ringcp dd does not convert records (conv=block, unblock)", val)
	default:
		return usagef("unrecognized operand %s=", name)
	}
	return nil
}

func (a *ddArgs) setBlock(name, val string) error {
	n, err := ddValue(val)
	switch {
	case err != nil:
		return usagef("%s=%s: %v", name, val, err)
	case n == 0:
		return usagef("%s=%s: invalid number (a block size is more than 0)", name, val)
	}
	switch name {
	case "bs":
		a.ibs, a.obs, a.bsGiven = n, n, true
	case "ibs":
		a.ibs = n
	case "obs":
		a.obs = n
	}
	return nil
}

func (a *ddArgs) setCount(name, val string) error {
	n, inBytes, err := ddNumber(val)
	if err != nil {
		return usagef("%s=%s: %v", name, val, err)
	}
	switch name {
	case "count":
		a.count, a.countBytes = n, a.countBytes || inBytes
	case "skip", "iseek":
		a.skip, a.skipBytes = n, a.skipBytes || inBytes
	default:
		a.seek, a.seekBytes = n, a.seekBytes || inBytes
	}
	return nil
}

func (a *ddArgs) setFlags(name, val string) error {
	in := name == "iflag"
	for _, f := range strings.Split(val, ",") {
		switch {
		case f == "direct" && in:
			a.directIn = true
		case f == "direct":
			a.directO = true
		case f == "skip_bytes" && in:
			a.skipBytes = true
		case f == "count_bytes" && in:
			a.countBytes = true
		case f == "seek_bytes" && !in:
			a.seekBytes = true
		case (f == "sync" || f == "dsync") && !in:
			// Every write synced before the next: ringcp syncs once, at
			// the end, so that DST is as durable when it exits.
		case slices.Contains(ddNoOps, f) && (in || f != "fullblock"):
		default:
			return usagef("%s=%s: ringcp dd does not do %s the dd way (it takes direct, %s)", name, f, f, ddFlagList(in))
		}
	}
	if in {
		a.iflags = strings.Split(val, ",")
	} else {
		a.oflags = strings.Split(val, ",")
	}
	return nil
}

func ddFlagList(in bool) string {
	if in {
		return "skip_bytes, count_bytes, " + strings.Join(ddNoOps, ", ")
	}
	return "seek_bytes, sync, dsync, " + strings.Join(slices.DeleteFunc(slices.Clone(ddNoOps), func(s string) bool { return s == "fullblock" }), ", ")
}

// ddMultipliers are GNU dd's number suffixes: c, w, b, then K M G T P E
// (and k) binary, with B (kB, MB) decimal and iB (KiB) binary.
var ddMultipliers = map[byte]int64{'c': 1, 'w': 2, 'b': 512}

const ddPowers = "KMGTPE"

// ddNumber reads a dd number: digits, an optional suffix, and "xN"
// products (2x512). For count, skip and seek a number that ends in B
// (3B, 1KiB, 2kB) counts bytes, not records, as coreutils 9.1 reads it.
func ddNumber(s string) (n int64, inBytes bool, err error) {
	n, err = ddValue(s)
	return n, strings.HasSuffix(s, "B"), err
}

func ddValue(s string) (int64, error) {
	if before, after, ok := strings.Cut(s, "x"); ok {
		l, err := ddValue(before)
		if err != nil {
			return 0, err
		}
		r, err := ddValue(after)
		if err != nil {
			return 0, err
		}
		return ddMul(l, r)
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("invalid number")
	}
	v, perr := strconv.ParseInt(s[:i], 10, 64)
	if perr != nil {
		return 0, fmt.Errorf("too large")
	}
	mult, ok := ddSuffix(s[i:])
	if !ok {
		return 0, fmt.Errorf("invalid number")
	}
	return ddMul(v, mult)
}

// ddSuffix reads what follows the digits.
func ddSuffix(suf string) (mult int64, ok bool) {
	switch suf {
	case "", "B":
		return 1, true
	}
	if m, ok := ddMultipliers[suf[0]]; ok {
		return m, len(suf) == 1
	}
	c := suf[0]
	if c == 'k' {
		c = 'K'
	}
	p := strings.IndexByte(ddPowers, c)
	if p < 0 {
		return 0, false
	}
	base := int64(1024)
	switch suf[1:] {
	case "":
	case "B":
		base = 1000
	case "iB":
		if suf[0] == 'k' {
			return 0, false
		}
	default:
		return 0, false
	}
	mult = 1
	for range p + 1 {
		mult *= base
	}
	return mult, true
}

func ddMul(a, b int64) (int64, error) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, fmt.Errorf("too large")
	}
	return int64(lo), nil
}
