package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
)

// checkOperands checks the operands and the flags that depend on the
// mode: SRC DST for one copy; none with --jobs, whose list holds them
// and each job's range. The values of the flags are copier's to check.
func checkOperands(fs *pflag.FlagSet, jobs string) error {
	if fs.Changed("jobs") && jobs == "" {
		return errors.New("--jobs needs a FILE (or - for stdin)")
	}
	if jobs == "" {
		if fs.Changed("parallel") {
			return errors.New("--parallel is for --jobs: a single copy runs alone")
		}
		if fs.NArg() != 2 {
			return fmt.Errorf("need SRC and DST, got %d operand(s) (see ringcp --help)", fs.NArg())
		}
		return nil
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("--jobs %s: SRC and DST go in the list, one job a line; got %d operand(s) besides", jobs, fs.NArg())
	}
	for _, name := range []string{"src-offset", "dst-offset", "length"} {
		if fs.Changed(name) {
			return fmt.Errorf("--%s goes on a job's line with --jobs: each job has its own range", name)
		}
	}
	return nil
}
