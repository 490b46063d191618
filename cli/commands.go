package cli

import (
	"strings"

	"github.com/ringcp/ringcp/cdi"
	"github.com/ringcp/ringcp/copier"

	"github.com/spf13/pflag"
)

// subcommand is one of ringcp's commands as help, completion and the man
// page describe it. Its flags come from the same definitions the command
// parses with (optionFlags and each command's own), never a copy of them.
type subcommand struct {
	name     string // "" for the copy itself
	synopsis string // after "ringcp "
	summary  string
	flags    func() *pflag.FlagSet // nil: no flags
	operands []string              // dd's NAME= operands
	files    bool                  // its operands are paths
}

// subcommands, in usage's order.
var subcommands = []subcommand{
	{name: "", synopsis: "[flags] SRC DST", summary: "copy SRC to DST (files, block devices, NBD exports; DST may be a directory)",
		flags: func() *pflag.FlagSet { fs, _ := copyFlags(&config{}); return fs }, files: true},
	{name: "dd", synopsis: "dd [if=SRC] [of=DST] [OPERAND]...", summary: "copy as GNU dd's operands say, with ringcp's checks",
		operands: ddOperands, files: true},
	{name: "verify", synopsis: "verify [flags] SRC DST", summary: "compare two files, devices or NBD exports (exit 3 if they differ)",
		flags: func() *pflag.FlagSet { return newReadFlags("ringcp verify", true).fs }, files: true},
	{name: "checksum", synopsis: "checksum [flags] PATH", summary: "print the oVirt imageio checksum of a file, device or NBD export",
		flags: func() *pflag.FlagSet { return newReadFlags("ringcp checksum", false).fs }, files: true},
	{name: "rate", synopsis: "rate PID [RATE]", summary: "show or change the rate cap of a running copy (0: none)"},
	{name: "demo", synopsis: "demo [--size SIZE] [--dir DIR]", summary: "copy a built-in image with each engine, verified",
		flags: func() *pflag.FlagSet { fs, _, _, _ := demoFlags(); return fs }},
	{name: "cdi-importer", synopsis: "cdi-importer [flags]", summary: "import the image KubeVirt CDI's importer environment describes onto its volume",
		flags: func() *pflag.FlagSet { p := cdi.DefaultPaths(); fs, _ := cdiFlags(&p, &copier.Options{}); return fs }},
	{name: "completion", synopsis: "completion bash|zsh|fish", summary: "print the shell completion script"},
	{name: "man", synopsis: "man", summary: "print the manual page (roff): ringcp man | man -l -"},
}

// ddOperands are the NAME= operands ringcp dd takes (ddArgs.set).
var ddOperands = []string{"if", "of", "bs", "ibs", "obs", "count", "skip", "iseek", "seek", "oseek", "iflag", "oflag", "conv", "status", "iformat"}

// flagValues is what a flag's value may be, for completion: its choices
// ("auto|never" placeholders, --progress's modes), "file" or "dir" for a
// path, nil for anything else (a number, a size).
func flagValues(f *pflag.Flag) []string {
	if f.Name == "progress" {
		return progressModes
	}
	place := flagPlaceholders()[f.Name]
	switch {
	case strings.Contains(place, "|"):
		return strings.Split(place, "|")
	case place == "FILE" || place == "PATH":
		return []string{"file"}
	case place == "DIR":
		return []string{"dir"}
	}
	return nil
}

// visibleFlags lists fs's flags in definition order.
func visibleFlags(fs *pflag.FlagSet) []*pflag.Flag {
	var out []*pflag.Flag
	if fs != nil {
		fs.VisitAll(func(f *pflag.Flag) { out = append(out, f) })
	}
	return out
}

// isChoice says whether values are choices rather than "file" or "dir".
func isChoice(values []string) bool {
	return len(values) > 0 && values[0] != "file" && values[0] != "dir"
}
