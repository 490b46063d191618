package faultfs

import (
	"syscall"
	"testing"
)

func TestFaultMatches(t *testing.T) {
	read := Fault{Op: OpRead, Offset: 100, Errno: syscall.EIO}
	named := Fault{Op: OpWrite, Offset: 0, Errno: syscall.ENOSPC, Name: "dst"}
	fsync := Fault{Op: OpFsync, Errno: syscall.EIO}
	tests := []struct {
		f    Fault
		op   string
		name string
		off  int64
		n    int
		want bool
	}{
		{read, OpRead, "a", 100, 1, true},
		{read, OpRead, "a", 0, 101, true},
		{read, OpRead, "a", 0, 100, false}, // ends just before
		{read, OpRead, "a", 101, 4096, false},
		{read, OpRead, "a", 100, 0, false}, // empty request covers nothing
		{read, OpWrite, "a", 0, 4096, false},
		{named, OpWrite, "dst", 0, 1, true},
		{named, OpWrite, "src", 0, 1, false},
		{fsync, OpFsync, "a", 0, 0, true},
		{fsync, OpRead, "a", 0, 4096, false},
	}
	for _, tt := range tests {
		if got := tt.f.matches(tt.op, tt.name, tt.off, tt.n); got != tt.want {
			t.Errorf("%+v.matches(%s, %s, %d, %d) = %v, want %v", tt.f, tt.op, tt.name, tt.off, tt.n, got, tt.want)
		}
	}
}

func TestFaultValidate(t *testing.T) {
	bad := []Fault{
		{Op: "readx", Errno: syscall.EIO},
		{Op: OpRead, Offset: -1, Errno: syscall.EIO},
		{Op: OpWrite, Offset: 4096},
	}
	for _, f := range bad {
		if err := f.validate(); err == nil {
			t.Errorf("%+v: validate succeeded, want an error", f)
		}
	}
	if err := (Fault{Op: OpFsync, Errno: syscall.EIO}).validate(); err != nil {
		t.Errorf("fsync fault: %v", err)
	}
}

func TestInjectRecordsHits(t *testing.T) {
	fs := &FS{faults: []Fault{
		{Op: OpRead, Offset: 10, Errno: syscall.EIO},
		{Op: OpRead, Offset: 10, Errno: syscall.ENXIO}, // shadowed: first match wins
	}}
	if errno := fs.inject(OpRead, "a", 0, 10); errno != 0 {
		t.Fatalf("inject before the fault = %v, want 0", errno)
	}
	if errno := fs.inject(OpRead, "a", 8, 4); errno != syscall.EIO {
		t.Fatalf("inject over the fault = %v, want EIO", errno)
	}
	want := Hit{Op: OpRead, Name: "a", Offset: 8, Len: 4, Errno: syscall.EIO}
	if hits := fs.Hits(); len(hits) != 1 || hits[0] != want {
		t.Fatalf("Hits() = %v, want [%v]", hits, want)
	}
}
