package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// usageShort is what `ringcp` alone prints (on stderr, exit 2).
const usageShort = `Usage: ringcp [flags] SRC DST     copy SRC to DST (files or block devices)
       ringcp [flags] --jobs FILE  copy each SRC DST line of FILE, in one process
       ringcp dd [if=SRC] [of=DST] [bs=N count=N skip=N seek=N ...]
       ringcp verify SRC DST       compare two files or devices (exit 3 if they differ)
       ringcp checksum PATH        print the oVirt imageio checksum as JSON
       ringcp sync SRC DST         write only what differs (either may be ssh://host/path)
       ringcp info IMAGE           what a qcow2 or raw image is (as qemu-img info, measure)
       ringcp rate PID [RATE]      show or change the rate cap of a running copy
       ringcp demo                 copy a built-in 1 GiB image with each engine, verified
       ringcp completion bash|zsh|fish, ringcp man, ringcp --version
ringcp --help lists the flags, with examples and exit codes.
`

const usageHead = `Usage: ringcp [flags] SRC DST
       ringcp [flags] --jobs FILE
       ringcp dd [if=SRC] [of=DST] [OPERAND]... (ringcp dd --help)
       ringcp verify [flags] SRC DST          compare two files or devices (exit 3 if they differ)
       ringcp checksum [flags] PATH           print the oVirt imageio checksum as JSON
       ringcp sync [flags] SRC DST            write only what differs (DST or SRC may be ssh://host/path)
       ringcp info [--json] IMAGE             what a qcow2 or raw image is (as qemu-img info, measure)
       ringcp rate PID [RATE]                 show or change the rate cap of copy PID (0: none)
       ringcp demo [--size SIZE] [--dir DIR]
       ringcp completion bash|zsh|fish        print the shell's completion script
       ringcp man                             print the manual page (ringcp man | man -l -)
       ringcp --version [--json]

Copies SRC to DST (regular files or block devices; DST may be a new file,
or a directory to copy into under SRC's name, as cp does) with io_uring and O_DIRECT, ending with an fdatasync barrier. Everything is
checked before the first write, and a new DST gets its name only once it is
complete. SRC and DST may also be NBD exports (qemu-nbd, nbdkit...):
nbd://host[:port]/export or nbd+unix:///export?socket=PATH, and over TLS
nbds:// or nbds+unix:// (?tls-certificates=DIR). SRC may be an http(s)://
URL or s3://bucket/key (read in parallel ranges, pinned to its ETag), - for
standard input or a named pipe, and xz, gzip, zstd or bzip2 data from any of
them or a file, decompressed on the fly. SRC may be /dev/zero (a wipe: of
--length bytes, or of a whole device DST) or /dev/urandom; DST may be
/dev/null (a read test) or - for standard output (written in order, never
a terminal; --json's object then goes to stderr).

Flags:
`

const usageTail = `
Sizes are whole bytes: 4096, 64k, 4M, 1G, 2T (k m g t p in either case, and
KiB MiB GiB: x1024; kB MB GB: x1000).

Examples:
  ringcp -b 32M /var/lib/images/base.raw /var/lib/images/clone.raw
  ringcp -v --json /dev/vg0/lv_src /dev/vg1/lv_dst
  ringcp --progress qemu disk.img /dev/sdc        # progress as qemu-img -p prints it
  ringcp --json --progress json a.raw b.raw 2>progress.jsonl
  ringcp --src-offset 4G --dst-offset 8G --length 1G /dev/sdb /dev/sdc
  ringcp dd if=/dev/sdb of=/dev/sdc bs=4M status=progress
  ringcp /dev/zero /dev/vg0/old-vm                 # wipe a whole device
  ringcp /dev/sdb /dev/null                        # a read test
  ringcp 'nbd+unix:///?socket=/tmp/disk.sock' /dev/vg0/disk  # after: qemu-nbd -r -f qcow2 --socket /tmp/disk.sock disk.qcow2
  ringcp --verify --resume disk.img /dev/sdc --state /var/lib/ringcp/sdc.state
  ringcp --max-rate 100M --ioprio idle --yield /dev/vg0/lv0 /dev/vg1/lv0   # on a busy host
  ringcp sync disk.img /dev/sdc                  # write only the 4 KiB granules that differ
  ringcp sync disk.img ssh://backup/srv/disk.img # ringcp sync --serve runs there, over ssh
  ringcp --dirty-bitmap b0 'nbd+unix:///disk?socket=/run/vm.sock' backup.raw  # incremental

Exit codes:
  0    the copy is complete and synced
  1    the copy failed while running; stderr says what DST holds
  2    refused before anything was written (bad input, an unsafe target)
  3    verification found a difference, or SRC is not what --expect-checksum says
  128+N  stopped by signal N (129 SIGHUP, 130 SIGINT, 143 SIGTERM); what was
       written is synced. SIGUSR1 prints one status line; the copy goes on.

--json prints one object on stdout for every outcome, --progress json one
object a line; the README ("Machine-readable output") lists their fields,
which are added, never renamed.
`

// flagPlaceholders name what a flag takes, in its help line: those of
// optionFlags, and the command's own; a bool flag takes nothing (pflag
// would print [=true|false]).
func flagPlaceholders() map[string]string {
	places := map[string]string{"progress": "MODE", "progress-interval": "DURATION", "progress-fd": "FD",
		"size": "SIZE", "dir": "DIR", "jobs": "FILE", "parallel": "N",
		"granule": "SIZE", "ssh": "COMMAND", "remote-ringcp": "PATH"}
	for _, f := range optionFlags {
		if f.placeholder != "" {
			places[f.name] = f.placeholder
		}
	}
	return places
}

// noDefault are default values not worth printing.
var noDefault = map[string]bool{"": true, "0": true, "false": true, "-1": true, "0s": true}

const (
	helpIndent = 32 // where descriptions start
	helpWidth  = 92 // where lines are wrapped
)

// flagHelp renders the flags, one entry each, descriptions wrapped.
func flagHelp(fs *pflag.FlagSet) string {
	var b strings.Builder
	places := flagPlaceholders()
	fs.VisitAll(func(f *pflag.Flag) {
		left := "      --" + f.Name
		if f.Shorthand != "" {
			left = "  -" + f.Shorthand + ", --" + f.Name
		}
		if p := places[f.Name]; p != "" {
			left += " " + p
		}
		usage := f.Usage
		if !noDefault[f.DefValue] && !strings.Contains(usage, "(default") {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		b.WriteString(wrapped(left, usage))
	})
	return b.String()
}

// wrapped lays out one entry: left, then the text from helpIndent on
// (on a line of its own when left is too long), wrapped at helpWidth.
func wrapped(left, text string) string {
	var b strings.Builder
	line := left
	if len(left) >= helpIndent-1 {
		b.WriteString(left + "\n")
		line = ""
	}
	line += strings.Repeat(" ", helpIndent-len(line))
	width := len(line)
	for _, w := range strings.Fields(text) {
		if width > helpIndent && width+1+len(w) > helpWidth {
			b.WriteString(line + "\n")
			line, width = strings.Repeat(" ", helpIndent), helpIndent
		}
		if width > helpIndent {
			line += " "
			width++
		}
		line += w
		width += len(w)
	}
	return b.String() + line + "\n"
}
