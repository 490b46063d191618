//go:build !linux

package stream

import (
	"errors"
	"io"
	"os"
)

func growPipe(*os.File) {}

func pollable(f *os.File) *os.File { return f }

// pollReader exists on Linux only: elsewhere Stdin never needs it.
type pollReader struct{ io.Reader }

func newPollReader(*os.File) (*pollReader, error) {
	return nil, errors.New("stdin cannot be interrupted on this system")
}
func (*pollReader) interrupt() {}
func (*pollReader) close()     {}
