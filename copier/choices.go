package copier

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ringcp/ringcp/engine"
)

// The values each enumerated option takes, in one place: normalize checks
// against them, and the ringcp command and its tests read them from here.

// EngineChoices are "auto" and every registered backend, most preferred
// first.
func EngineChoices() []string { return append([]string{string(EngineAuto)}, engine.BackendNames()...) }

// DirectChoices, SparseChoices, OffloadChoices and SizeChoices are the
// values of Options.Direct, Sparse, Offload and DstSize.
var (
	DirectChoices  = []string{string(DirectAuto), string(DirectAlways), string(DirectNever)}
	SparseChoices  = []string{string(SparseAuto), string(SparseAlways), string(SparseNever)}
	OffloadChoices = []string{string(OffloadAuto), string(OffloadNever), string(OffloadReflink), string(OffloadCopyRange)}
	SizeChoices    = []string{string(SizeAuto), string(SizeTruncate), string(SizeKeep)}
)

// checkChoice refuses a value of field that is not among allowed.
func checkChoice(field, value string, allowed []string) error {
	if slices.Contains(allowed, value) {
		return nil
	}
	return refuse(KindBadInput, "", fmt.Sprintf("unknown Options.%s %q (%s)", field, value, oneOf(allowed))).on(field)
}

// oneOf lists the allowed values: "a, b or c".
func oneOf(allowed []string) string {
	if len(allowed) < 2 {
		return strings.Join(allowed, "")
	}
	return strings.Join(allowed[:len(allowed)-1], ", ") + " or " + allowed[len(allowed)-1]
}

// checkChoices refuses any enumerated option set to a value it does not
// take.
func (o *Options) checkChoices() error {
	checks := []struct {
		field, value string
		allowed      []string
	}{
		{"Engine", string(o.Engine), EngineChoices()},
		{"Direct", string(o.Direct), DirectChoices},
		{"Sparse", string(o.Sparse), SparseChoices},
		{"Offload", string(o.Offload), OffloadChoices},
		{"DstSize", string(o.DstSize), SizeChoices},
	}
	for _, c := range checks {
		if err := checkChoice(c.field, c.value, c.allowed); err != nil {
			return err
		}
	}
	return nil
}
