package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// completionCommand is `ringcp completion bash|zsh|fish`: the script that
// completes subcommands, flags, their choices and paths, generated from
// subcommands and each one's flag set, so that it never drifts.
func completionCommand(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return usagef("completion takes one shell: bash, zsh or fish (ringcp completion bash > /etc/bash_completion.d/ringcp)")
	}
	switch args[0] {
	case "bash":
		io.WriteString(stdout, bashCompletion())
	case "zsh":
		io.WriteString(stdout, zshCompletion())
	case "fish":
		io.WriteString(stdout, fishCompletion())
	case "-h", "--help":
		fmt.Fprint(stdout, completionUsage)
		return errHelp
	default:
		return usagef("completion %s: want bash, zsh or fish", args[0])
	}
	return nil
}

const completionUsage = `Usage: ringcp completion bash|zsh|fish

Prints the shell's completion script for ringcp: its commands, flags, the
choices of each flag and paths. Load it with
  bash:  source <(ringcp completion bash)    or install it in /etc/bash_completion.d/ringcp
  zsh:   ringcp completion zsh > "${fpath[1]}/_ringcp"
  fish:  ringcp completion fish > ~/.config/fish/completions/ringcp.fish
`

// commandNames lists the subcommands' names (not the copy's "").
func commandNames() []string {
	var out []string
	for _, c := range subcommands {
		if c.name != "" {
			out = append(out, c.name)
		}
	}
	return out
}

// flagSpellings are a flag set's spellings, --long and -s.
func flagSpellings(fs *pflag.FlagSet) []string {
	var out []string
	for _, f := range visibleFlags(fs) {
		out = append(out, "--"+f.Name)
		if f.Shorthand != "" {
			out = append(out, "-"+f.Shorthand)
		}
	}
	return out
}

// takesValue says whether a flag is followed by a value word.
func takesValue(f *pflag.Flag) bool { return f.NoOptDefVal == "" }

// shortUsage is a flag's usage cut to its first clause, for the one-line
// descriptions zsh and fish show.
func shortUsage(usage string) string {
	if i := strings.IndexAny(usage, ";("); i > 0 {
		usage = usage[:i]
	}
	usage = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(usage), ":"))
	if len(usage) > 70 {
		usage = usage[:strings.LastIndex(usage[:70], " ")] + "..."
	}
	return usage
}
