package cli

import (
	"io"
	"strings"

	"github.com/ringcp/ringcp/copier"
	"github.com/spf13/pflag"
)

// badLineJSON prints the --json object of a command line that could not
// be read: a copy's, or with --jobs a batch's with no jobs, carrying what
// the line says (SRC and DST, the range flags that parsed) so that a
// program can tell which of its copies was refused.
func badLineJSON(args []string, stdout, stderr io.Writer, cfg config, err error) error {
	o := cfg.opts
	if o.Src == "" && o.Dst == "" {
		var none config
		fs, _ := copyFlags(&none)
		o.Src, o.Dst = guessOperands(fs, args)
	}
	switch {
	case cfg.version || asks(args, "--version"):
		return writeObject(stdout, newEnvelope("version", err), err, buildVersion())
	case cfg.jobs != "" || asks(args, "--jobs"):
		return writeJobsJSON(stdout, err, nil, jsonTotal{})
	case o.Dst == "-":
		// stdout was to carry the copy: a reader of it takes the object
		// for data, so it goes to stderr, as a copy's does.
		return writeJSON(stderr, o, copier.Report{}, err)
	}
	return writeJSON(stdout, o, copier.Report{}, err)
}

// asks says whether a command line gives flag, whether or not it parsed.
func asks(args []string, flag string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}

// guessOperands finds SRC and DST in a command line the flag parser
// refused: the words that are not flags or a flag's value, as fs defines
// the flags. "" where there is none to find.
func guessOperands(fs *pflag.FlagSet, args []string) (src, dst string) {
	var ops []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--"):
			if valueFollows(fs, a[2:]) {
				i++ // its value follows
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if f := fs.ShorthandLookup(a[len(a)-1:]); len(a) == 2 && f != nil && f.NoOptDefVal == "" {
				i++
			}
		default:
			ops = append(ops, a)
		}
	}
	if len(ops) > 0 {
		src = ops[0]
	}
	if len(ops) > 1 {
		dst = ops[1]
	}
	return src, dst
}

// valueFollows says whether the flag name, of fs or else of the copy's
// flags, is followed by its value: a copy flag given to verify, which
// refuses it, still has its value after it, not an operand.
func valueFollows(fs *pflag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	if f == nil {
		var none config
		copying, _ := copyFlags(&none)
		f = copying.Lookup(name)
	}
	return f != nil && f.NoOptDefVal == ""
}
