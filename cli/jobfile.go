package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ringcp/ringcp/copier"
	"github.com/spf13/pflag"
)

// The --jobs list: one job a line, "SRC DST", with the range flags
// --src-offset, --dst-offset and --length, and --state (the job's resume
// state file), where a job needs them. Words are split as a POSIX shell
// splits them, without any expansion:
//
//   - blanks (spaces, tabs) separate words; a blank line is no job;
//   - '...' keeps everything inside as it is, blanks and backslashes too;
//   - "..." keeps everything inside except that a backslash before " \ $
//     or ` stands for that character;
//   - outside quotes a backslash makes the next character plain;
//   - # at the start of a word comments out the rest of the line;
//   - no $VAR, ~, globs or command substitution: they are plain text;
//   - lines may end in CRLF, and a UTF-8 byte order mark may start the
//     list; any other control character in a word (a CR inside quotes,
//     a tab) is refused.
//
// A path that starts with - follows --. Relative paths are relative to
// ringcp's working folder, as on its command line. A line is one job: a
// backslash at its end, or a quote left open, is an error.

// maxJobLine bounds one line of the list: two paths of PATH_MAX and the
// flags fit many times over, and a binary file given by mistake fails
// early.
const maxJobLine = 1 << 20

// jobLine is one job of the list.
type jobLine struct {
	line     int // where it is in the list, from 1
	src, dst string
	// rng holds the line's flags: the range (offsets, length, and what
	// they make of DST's size) and --state, the job's resume state file.
	rng copier.Options
}

// readJobList reads the list from the file named, or stdin for "-".
func readJobList(name string) ([]jobLine, error) {
	if name == "-" {
		return parseJobList(os.Stdin, "stdin")
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("--jobs: %w", err)
	}
	defer f.Close()
	return parseJobList(f, name)
}

// parseJobList parses every line; an error names the list and the line.
func parseJobList(r io.Reader, name string) ([]jobLine, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxJobLine)
	var jobs []jobLine
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r") // CRLF lines
		if n == 1 {
			// A UTF-8 byte order mark, as Windows editors write one.
			line = strings.TrimPrefix(line, "\ufeff")
		}
		words, err := splitWords(line)
		if err == nil {
			err = controlIn(words)
		}
		if err == nil && len(words) > 0 {
			var j jobLine
			j, err = parseJobWords(words)
			j.line = n
			jobs = append(jobs, j)
		}
		if err != nil {
			return nil, fmt.Errorf("--jobs %s line %d: %w", name, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--jobs %s line %d: %w", name, len(jobs)+1, err)
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("--jobs %s: no jobs (one \"SRC DST\" a line)", name)
	}
	return jobs, nil
}

// controlIn refuses a word that holds a control character: a CR left in
// a quoted name by a list saved with CRLF line ends, a tab or an escape
// sequence pasted in, or a byte order mark that does not start the list,
// would name a file nobody meant.
func controlIn(words []string) error {
	for _, w := range words {
		for i, r := range w {
			if r < 0x20 || r == 0x7f || r == 0xfeff {
				return fmt.Errorf("%s holds the control character %q at byte %d: not taken as a file name", quoteWord(w), r, i)
			}
		}
	}
	return nil
}

// parseJobWords reads one job's words: two operands and range flags.
func parseJobWords(words []string) (jobLine, error) {
	var j jobLine
	fs := newFlagSet("job")
	defineOptionFlags(fs, &j.rng, "src-offset", "dst-offset", "length", "state")
	onlyOnce(fs)
	if err := fs.Parse(words); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			err = errors.New("unknown flag: --help")
		}
		return j, fmt.Errorf("%v (a job line takes SRC DST and --src-offset, --dst-offset, --length, --state; other flags go on the command line)", err)
	}
	if fs.Changed("state") && j.rng.StatePath == "" {
		return j, errors.New("--state needs a PATH")
	}
	if fs.NArg() != 2 {
		return j, fmt.Errorf("want SRC DST, got %d word(s) besides flags (quote paths with blanks: 'my disk.img')", fs.NArg())
	}
	j.src, j.dst = fs.Arg(0), fs.Arg(1)
	return j, nil
}

// options are the command line's options with this job's ends and range.
// As on the command line, --dst-offset or --length keeps the rest of DST.
// A resumable job keeps its state in the file its line names, else in
// the folder --state names (stateDir; copier.StateIn names it after
// DST), else beside DST.
func (j jobLine) options(common copier.Options, stateDir string) copier.Options {
	o := common
	o.Src, o.Dst = j.src, j.dst
	o.SrcOffset, o.DstOffset, o.Length, o.LengthSet = j.rng.SrcOffset, j.rng.DstOffset, j.rng.Length, j.rng.LengthSet
	if j.rng.DstSize != "" {
		o.DstSize = j.rng.DstSize
	}
	switch {
	case j.rng.StatePath != "":
		o.StatePath = j.rng.StatePath
	case stateDir != "":
		o.StatePath = copier.StateIn(stateDir, j.dst)
	}
	return o
}

// splitWords splits a line into words by the rules above.
func splitWords(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
			continue
		case c == '#' && !inWord:
			return words, nil
		case c == '\\':
			if i+1 == len(line) {
				return nil, errors.New("a backslash ends the line (a job is one line)")
			}
			i++
			w.WriteByte(line[i])
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("a ' quote is not closed")
			}
			w.WriteString(line[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			n, err := doubleQuoted(line[i+1:], &w)
			if err != nil {
				return nil, err
			}
			i += n
		default:
			w.WriteByte(c)
		}
		inWord = true
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// doubleQuoted copies the inside of a "..." word to w and returns how
// many bytes of s it used, the closing quote included.
func doubleQuoted(s string, w *strings.Builder) (int, error) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return i + 1, nil
		case c == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0:
			i++
			w.WriteByte(s[i])
		default:
			w.WriteByte(c)
		}
	}
	return 0, errors.New("a \" quote is not closed")
}

// quoteWord writes a path so that the list's rules (and a shell) read it
// back as it is: plain when it holds nothing special, else in '...'.
func quoteWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
