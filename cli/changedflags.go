package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/ringcp/ringcp/extents"
)

// The flags that copy only what changed: --extents, --dirty-bitmap and
// --granule are bound to their Options fields in optionFlags; --ssh and
// --remote-ringcp are ringcp sync's own, for an ssh:// end.

// syncConfig is what only ringcp sync takes.
type syncConfig struct {
	ssh          string // the ssh command line, "" for ssh
	remoteRingcp string // ringcp on the other host, "" for ringcp in its PATH
	given        []string
}

// defineSyncFlags defines ringcp sync's own flags on fs.
func defineSyncFlags(fs *pflag.FlagSet, s *syncConfig) {
	fs.StringVar(&s.ssh, "ssh", "", "ringcp sync with an ssh:// end: the ssh command and its options (default \"ssh\"; e.g. \"ssh -F CONFIG -i KEY\")")
	fs.StringVar(&s.remoteRingcp, "remote-ringcp", "", "ringcp sync with an ssh:// end: the ringcp binary on the other host (default: ringcp in its PATH)")
}

// noteSyncFlags records which of ringcp sync's own flags were given.
func (s *syncConfig) noteSyncFlags(fs *pflag.FlagSet) {
	for _, name := range []string{"ssh", "remote-ringcp"} {
		if fs.Changed(name) {
			s.given = append(s.given, "--"+name)
		}
	}
}

// onlyForSync refuses ringcp sync's own flags on a copy.
func (s syncConfig) onlyForSync() error {
	if len(s.given) > 0 {
		return usagef("%s is for ringcp sync with an ssh:// end", s.given[0])
	}
	return nil
}

// extentsValue is --extents FILE|-: the list is read and parsed when the
// flag is (a list that does not parse is bad input, naming its line),
// and checked against both ends by copier.
type extentsValue struct {
	p   *[]extents.Entry
	set *bool
	arg *string // the FILE given, for String
}

func (v extentsValue) String() string {
	if v.arg == nil {
		return ""
	}
	return *v.arg
}
func (v extentsValue) Type() string { return "FILE" }
func (v extentsValue) Set(path string) error {
	entries, err := readExtents(path)
	if err != nil {
		return err
	}
	*v.p, *v.set = entries, true
	if v.arg != nil {
		*v.arg = path
	}
	return nil
}

// readExtents parses the list in path ("-": stdin).
func readExtents(path string) ([]extents.Entry, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, errors.Unwrap(err) // pflag names the flag and the value
		}
		defer f.Close()
		r = f
	}
	entries, err := extents.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	return entries, nil
}

// nameValue is a string flag that must not be empty: --dirty-bitmap ""
// would otherwise copy everything.
type nameValue struct{ p *string }

func (v nameValue) String() string { return *v.p }
func (v nameValue) Type() string   { return "NAME" }
func (v nameValue) Set(s string) error {
	if s == "" {
		return errors.New("needs a name")
	}
	*v.p = s
	return nil
}
