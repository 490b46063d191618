package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/internal/units"
)

// The pflag.Value types that set copier.Options fields straight from a
// flag. They read the text (a size, a count, a duration) and nothing
// more: whether the value suits a copy is copier's to say (normalize),
// in one wording for the library and the command. What they refuse
// themselves is what the field cannot hold: text that is not a number,
// and 0 given for a field whose 0 means "choose for me" (a block size of
// 0 is a mistake, not a request for the default).

// errZero is a flag given as 0 whose field takes 0 as "not given".
var errZero = errors.New("must be more than 0 (leave the flag out for the default)")

// sizeValue is a byte count ("64k", "1G") in an int or int64 field.
type sizeValue[T int | int64] struct {
	p       *T
	nonZero bool
}

func (v sizeValue[T]) String() string { return units.Exact(int64(*v.p)) }
func (v sizeValue[T]) Type() string   { return "SIZE" }
func (v sizeValue[T]) Set(s string) error {
	n, err := units.ParseSize(s)
	switch {
	case err != nil:
		return err
	case int64(T(n)) != n: // an int field on a 32-bit system
		return fmt.Errorf("%s is too large", s)
	case n == 0 && v.nonZero:
		return errZero
	}
	*v.p = T(n)
	return nil
}

// countValue is a whole number in an int field whose 0 means "choose".
type countValue struct{ p *int }

func (v countValue) String() string { return strconv.Itoa(*v.p) }
func (v countValue) Type() string   { return "int" }
func (v countValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, strconv.IntSize)
	switch {
	case err != nil:
		return errors.Unwrap(err) // strconv's own words, without the function's name
	case n == 0:
		return errZero
	}
	*v.p = int(n)
	return nil
}

// durationValue is a duration; nonZero for a field whose 0 means "the
// default" (--sync-every), unlike --nbd-timeout, where 0 says so.
type durationValue struct {
	p       *time.Duration
	nonZero bool
}

func (v durationValue) String() string { return v.p.String() }
func (v durationValue) Type() string   { return "duration" }
func (v durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return err
	case d == 0 && v.nonZero:
		return errZero
	}
	*v.p = d
	return nil
}

// rangeValue is --dst-offset or --length: a size that, once given (even
// as 0), places the copy inside DST, whose other bytes are kept; given
// (LengthSet), when not nil, records that it was.
type rangeValue struct {
	sizeValue[int64]
	dstSize *copier.SizePolicy
	given   *bool
}

func (v rangeValue) Set(s string) error {
	if err := v.sizeValue.Set(s); err != nil {
		return err
	}
	*v.dstSize = copier.SizeKeep
	if v.given != nil {
		*v.given = true
	}
	return nil
}

// syncValue is --sync end|none, the opposite of Options.NoSync.
type syncValue struct{ noSync *bool }

func (v syncValue) String() string {
	if *v.noSync {
		return "none"
	}
	return "end"
}
func (v syncValue) Type() string { return "string" }
func (v syncValue) Set(s string) error {
	switch s {
	case "end", "none":
		*v.noSync = s == "none"
		return nil
	}
	return fmt.Errorf("want end or none")
}

// checksumValue is --checksum: the oVirt imageio checksum of SRC, as
// Options.Checksum takes a block checksum.
type checksumValue struct{ sum *func(int64) copier.BlockSum }

func (v checksumValue) String() string   { return strconv.FormatBool(*v.sum != nil) }
func (v checksumValue) Type() string     { return "bool" }
func (v checksumValue) IsBoolFlag() bool { return true }
func (v checksumValue) Set(s string) error {
	on, err := strconv.ParseBool(s)
	if err != nil {
		return errors.Unwrap(err)
	}
	*v.sum = nil
	if on {
		*v.sum = imageioChecksum
	}
	return nil
}

// stringValue is a string field (the enumerated ones through their
// underlying string: copier says which values it takes).
type stringValue struct{ p *string }

func (v stringValue) String() string     { return *v.p }
func (v stringValue) Type() string       { return "string" }
func (v stringValue) Set(s string) error { *v.p = s; return nil }

// boolValue is a switch.
type boolValue struct{ p *bool }

func (v boolValue) String() string   { return strconv.FormatBool(*v.p) }
func (v boolValue) Type() string     { return "bool" }
func (v boolValue) IsBoolFlag() bool { return true }
func (v boolValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return errors.Unwrap(err)
	}
	*v.p = b
	return nil
}

// listValue is a field that takes each value of a repeatable flag
// (--header), in order.
type listValue struct{ p *[]string }

func (v listValue) String() string     { return strings.Join(*v.p, ", ") }
func (v listValue) Type() string       { return "string" }
func (v listValue) Set(s string) error { *v.p = append(*v.p, s); return nil }
func (v listValue) Repeatable() bool   { return true }
