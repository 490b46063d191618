package cdi

import (
	"errors"
	"strings"
)

// Refusal is an import refused before anything was written: a variable,
// flag or volume that cannot be used, or a source ringcp does not serve.
// Its text is the termination message's, whole on one line.
type Refusal struct {
	Name   string // the variable, flag or path at fault
	Value  string // its value as given ("" when unset or secret)
	Reason string
	// Unserved: the request is valid for CDI, and CDI's own importer
	// image serves it; ringcp does not.
	Unserved bool
}

func (r *Refusal) Error() string {
	var b strings.Builder
	if r.Unserved {
		b.WriteString("ringcp cdi-importer does not serve ")
	}
	b.WriteString(r.Name)
	if r.Value != "" {
		b.WriteString("=" + r.Value)
	}
	if r.Unserved {
		b.WriteString(": " + r.Reason + "; CDI's own importer image does")
		return b.String()
	}
	if r.Reason != "" {
		b.WriteString(" " + r.Reason)
	}
	return b.String()
}

func refuse(name, value, reason string) *Refusal {
	return &Refusal{Name: name, Value: value, Reason: reason}
}

func unserved(name, value, reason string) *Refusal {
	return &Refusal{Name: name, Value: value, Reason: reason, Unserved: true}
}

// IsUnserved tells whether err is a request CDI's own importer serves and
// ringcp does not (a delegate importer may take it).
func IsUnserved(err error) bool {
	var r *Refusal
	return errors.As(err, &r) && r.Unserved
}
