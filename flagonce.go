package main

import (
	"fmt"

	"github.com/spf13/pflag"
)

// onlyOnce makes a flag given twice with different values an error. pflag
// keeps the last (--engine pool --engine uring runs io_uring), and a tool
// trusted with whole disks must not guess which one was meant. The same
// value twice is fine: scripts repeat their defaults.
func onlyOnce(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		f.Value = &onceValue{Value: f.Value}
	})
}

// onceValue wraps a flag's value and remembers the first value given.
type onceValue struct {
	pflag.Value
	first string
	set   bool
}

func (v *onceValue) Set(s string) error {
	if v.set && s != v.first {
		return fmt.Errorf("given twice with different values (%q, then %q)", v.first, s)
	}
	v.set, v.first = true, s
	return v.Value.Set(s)
}

// IsBoolFlag forwards to a bool flag's value, which pflag asks to render
// the help.
func (v *onceValue) IsBoolFlag() bool {
	b, ok := v.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
