package cli

import (
	"strings"
	"testing"

	"github.com/ringcp/ringcp/internal/cmdtest"
)

// badInput is a command line ringcp must refuse with exit 2, one line on
// stderr containing want, and nothing written.
type badInput struct {
	name string
	args []string // {src} {dst} {new} {dir} {fifo} {link} {dangling} are replaced
	want string
}

var badInputs = []badInput{
	{"size unknown suffix", []string{"-b", "12Q", "{src}", "{new}"}, "not a size"},
	{"size negative", []string{"-b", "-1", "{src}", "{new}"}, "not a size"},
	{"size zero", []string{"-b", "0", "{src}", "{new}"}, `"-b, --block-size" flag: must be more than 0`},
	{"size fraction", []string{"-b", "1.5G", "{src}", "{new}"}, "not a size"},
	{"size overflow", []string{"--length", "99999999999P", "{src}", "{new}"}, "too large"},
	{"size too many digits", []string{"--src-offset", "99999999999999999999", "{src}", "{new}"}, "too large"},
	{"size empty", []string{"--dst-offset=", "{src}", "{new}"}, "not a size"},
	{"size with space", []string{"-b", "4 k", "{src}", "{new}"}, "not a size"},
	{"block size over 1 GiB", []string{"-b", "2G", "{src}", "{new}"}, "--block-size 2147483648: out of range (1 B to 1 GiB)"},
	{"block size unaligned direct always", []string{"-b", "1000", "--direct", "always", "{src}", "{new}"}, "--direct always: block size 1000 is not a multiple of the alignment"},
	{"offset unaligned direct always", []string{"--src-offset", "100", "--direct", "always", "{src}", "{new}"}, "--direct always: offset 100 is not a multiple of the alignment"},
	{"queue depth zero", []string{"-q", "0", "{src}", "{new}"}, `"-q, --queue-depth" flag: must be more than 0`},
	{"queue depth negative", []string{"-q", "-1", "{src}", "{new}"}, "--queue-depth -1: out of range (1 to 1024)"},
	{"queue depth huge", []string{"-q", "100000", "{src}", "{new}"}, "--queue-depth 100000: out of range (1 to 1024)"},
	{"queue depth overflow", []string{"-q", "99999999999999999999", "{src}", "{new}"}, "invalid argument"},
	{"queue depth not a number", []string{"-q", "many", "{src}", "{new}"}, "invalid argument"},
	{"rate fraction", []string{"--max-rate", "1.5G", "{src}", "{new}"}, "not a size"},
	{"rate negative", []string{"--max-rate", "-1", "{src}", "{new}"}, "not a size"},
	{"ioprio unknown class", []string{"--ioprio", "low", "{src}", "{new}"}, `--ioprio: I/O priority "low": want idle, be[:0-7] or rt[:0-7]`},
	{"ioprio level out of range", []string{"--ioprio", "be:8", "{src}", "{new}"}, "the level is 0 (highest) to 7 (lowest)"},
	{"ioprio idle with a level", []string{"--ioprio", "idle:3", "{src}", "{new}"}, "the idle class has no levels"},
	{"unknown flag", []string{"--bogus", "{src}", "{new}"}, "unknown flag: --bogus"},
	{"unknown short flag", []string{"-Z", "{src}", "{new}"}, "unknown shorthand flag: 'Z'"},
	{"unknown engine", []string{"--engine", "spdk", "{src}", "{new}"}, `unknown --engine "spdk" (auto, `},
	{"unknown direct mode", []string{"--direct", "sometimes", "{src}", "{new}"}, `unknown --direct "sometimes" (auto, always or never)`},
	{"unknown sync mode", []string{"--sync", "maybe", "{src}", "{new}"}, `invalid argument "maybe" for "--sync" flag: want end or none`},
	{"unknown progress mode", []string{"--progress", "loud", "{src}", "{new}"}, `--progress "loud": want one of`},
	{"unknown sparse mode", []string{"--sparse", "sometimes", "{src}", "{new}"}, `unknown --sparse "sometimes" (auto, always or never)`},
	{"unknown offload mode", []string{"--offload", "magic", "{src}", "{new}"}, `unknown --offload "magic" (auto, never, reflink or copy-range)`},
	{"zero block not a power of two", []string{"--zero-block", "3000", "{src}", "{new}"}, "--zero-block 3000: must be a power of two up to 1 GiB"},
	{"zero block zero", []string{"--zero-block", "0", "{src}", "{new}"}, `"--zero-block" flag: must be more than 0`},
	{"zero block over 1 GiB", []string{"--zero-block", "2G", "{src}", "{new}"}, "--zero-block 2147483648: must be a power of two up to 1 GiB"},
	{"bad bool", []string{"--json=perhaps", "{src}", "{new}"}, "invalid argument"},
	{"no operands", []string{"-v"}, "need SRC and DST, got 0 operand(s)"},
	{"one operand", []string{"{src}"}, "need SRC and DST, got 1 operand(s)"},
	{"three operands", []string{"{src}", "{new}", "{dst}"}, "need SRC and DST, got 3 operand(s)"},
	{"empty SRC", []string{"", "{new}"}, "SRC and DST must both be given"},
	{"empty DST", []string{"{src}", ""}, "SRC and DST must both be given"},
	{"DST is a directory, SRC has no name", []string{"nbd://localhost/x", "{dir}"}, "DST is a directory, and SRC nbd://localhost/x has no file name to give the copy in it: name the file"},
	{"DST is a directory, SRC is /", []string{"/", "{dir}"}, "has no file name"},
	{"SRC is a directory", []string{"{dir}", "{new}"}, "is a directory"},
	{"SRC is a character device", []string{"/dev/zero", "{new}"}, "is a character device"},
	{"DST is a character device", []string{"{src}", "/dev/null"}, "is a character device"},
	{"SRC is a FIFO, with --checksum", []string{"--checksum", "{fifo}", "{new}"}, "does not say its size before its end"},
	{"DST is a FIFO", []string{"{src}", "{fifo}"}, "is a FIFO"},
	{"DST is a dangling symlink", []string{"{src}", "{dangling}"}, "is a symlink to " + cmdtest.DanglingTarget + ", which does not exist"},
	{"SRC missing", []string{"{dir}/missing", "{new}"}, "no such file or device"},
	{"DST folder missing", []string{"{src}", "{dir}/no/such/dst"}, "DST's folder is missing"},
	{"SRC offset past end", []string{"--src-offset", "65537", "{src}", "{new}"}, "--src-offset 65537 is past the end (size 65536)"},
	{"range past end", []string{"--src-offset", "4096", "--length", "64k", "{src}", "{new}"}, "range 4096+65536 runs past the end (size 65536)"},
	{"DST offset overflows", []string{"--dst-offset", "9223372036854775000", "{src}", "{dst}"}, "--dst-offset plus length overflows"},
	{"same file", []string{"{src}", "{src}"}, "SRC and DST are the same file"},
	{"same file by symlink", []string{"{link}", "{src}"}, "SRC and DST are the same file"},
	{"same file overlapping ranges", []string{"--src-offset", "0", "--dst-offset", "4096", "--length", "8192", "{src}", "{src}"}, "the ranges overlap"},
	{"conflicting engines", []string{"--engine", "pool", "--engine", "uring", "{src}", "{new}"}, `given twice with different values ("pool", then "uring")`},
	{"conflicting direct modes", []string{"--direct", "always", "--direct=never", "{src}", "{new}"}, `given twice with different values ("always", then "never")`},
	{"conflicting block sizes", []string{"-b", "4k", "--block-size", "8k", "{src}", "{new}"}, `given twice with different values ("4k", then "8k")`},
	{"SRC on proc", []string{"/proc/cpuinfo", "{new}"}, "/proc/cpuinfo: SRC is on proc, a pseudo filesystem"},
	{"SRC on sysfs", []string{"/sys/kernel/uevent_seqnum", "{dst}"}, "SRC is on sysfs, a pseudo filesystem"},
	{"SRC is - with --verify", []string{"--verify", "-", "{new}"}, "SRC (stream) does not say its size before its end, and verification and checksums need the length of the range: announce it with --size"},
	{"DST is -", []string{"{src}", "-"}, "writing to standard output is not supported"},
	{"unknown source format", []string{"--src-format", "vmdk", "{src}", "{new}"}, `unknown source format "vmdk"`},
	{"unknown destination format", []string{"--dst-format", "vmdk", "{src}", "{new}"}, `unknown destination format "vmdk"`},
	{"raw SRC as qcow2", []string{"--src-format", "qcow2", "{src}", "{new}"}, "is not a qcow2 image (no QFI\\xfb magic): --src-format raw copies its bytes"},
	{"qcow2 flags on a raw DST", []string{"--compress", "zstd", "{src}", "{new}"}, "--compress"},
	{"SRC is qcow v1", []string{"{img:qcow}", "{new}"}, "SRC is a qcow disk image"},
	{"SRC is vmdk", []string{"{img:vmdk}", "{dst}"}, "SRC is a vmdk disk image (sparse extent header KDMV)"},
	{"SRC is a vmdk descriptor", []string{"{img:vmdk-flat}", "{new}"}, "SRC is a vmdk disk image (descriptor file)"},
	{"SRC is vhdx", []string{"{img:vhdx}", "{new}"}, "SRC is a vhdx disk image"},
	{"SRC is vdi", []string{"{img:vdi}", "{new}"}, "SRC is a vdi disk image (signature 0xbeda107f at offset 0x40)"},
	{"SRC is dynamic vhd", []string{"{img:vpc}", "{new}"}, "SRC is a vpc disk image (dynamic VHD header conectix)"},
	{"SRC is fixed vhd", []string{"{img:vpc-fixed}", "{dst}"}, "SRC is a vpc disk image (fixed VHD footer conectix in the last 512 bytes)"},
	{"SRC is qed", []string{"{img:qed}", "{new}"}, "SRC is a qed disk image"},
}

// TestBadInput runs every bad command line through the real CLI entry
// point: exit 2, exactly one line on stderr saying what is wrong, nothing
// on stdout, DST neither created nor changed, SRC unchanged.
func TestBadInput(t *testing.T) {
	if len(badInputs) < 25 {
		t.Fatalf("only %d cases", len(badInputs))
	}
	for _, tc := range badInputs {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t)
			r := cli(t, fx.Expand(t, tc.args)...)
			r.want(t, exitRefused, tc.want)
			if lines := strings.Count(r.stderr, "\n"); lines != 1 || !strings.HasPrefix(r.stderr, "ringcp: ") {
				t.Errorf("stderr has %d lines, want one starting with \"ringcp: \":\n%s", lines, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout: %q, want nothing", r.stdout)
			}
			fx.Unchanged(t)
		})
	}
}
