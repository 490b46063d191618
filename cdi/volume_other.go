//go:build !linux

package cdi

import "errors"

// ProbeVolume finds no volume here: CDI's importer pods run on Linux.
func ProbeVolume(Paths) (Volume, error) { return Volume{}, errors.ErrUnsupported }

// RunDelegate runs no delegate here.
func RunDelegate(Paths, []string) error { return errors.ErrUnsupported }
