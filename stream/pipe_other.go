//go:build !linux

package stream

import "os"

func growPipe(*os.File) {}

func pollable(f *os.File) *os.File { return f }
