package cdi

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestWaitReady(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	go func() {
		time.Sleep(100 * time.Millisecond)
		os.WriteFile(ready, []byte("disk.img"), 0o644)
	}()
	if err := WaitReady(context.Background(), ready, 10*time.Second, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := WaitReady(context.Background(), "", time.Nanosecond, time.Second); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "never")
	err := WaitReady(context.Background(), missing, 50*time.Millisecond, 10*time.Millisecond)
	var timeout *ReadyTimeoutError
	if !errors.As(err, &timeout) || (Outcome{Err: err}).Text() != "Timeout waiting for file "+missing {
		t.Errorf("%v", err)
	}
}

func TestTouchDone(t *testing.T) {
	done := filepath.Join(t.TempDir(), "done")
	for range 2 { // a second time finds it there, and is no error
		if err := TouchDone(done); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(done); err != nil {
		t.Fatal(err)
	}
	if err := TouchDone(filepath.Join(done, "x")); err == nil {
		t.Error("no error where the file cannot be made")
	}
}

// TestFlags: the arguments CDI's controller passes (-v=N) and the paths'
// flags.
func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{{nil, 0}, {[]string{"-v=1"}, 1}, {[]string{"-v=5"}, 5}, {[]string{"-v"}, 1}, {[]string{"--verbosity=3"}, 3}} {
		p := DefaultPaths()
		fs := pflag.NewFlagSet("cdi-importer", pflag.ContinueOnError)
		p.AddFlags(fs)
		if err := fs.Parse(tc.args); err != nil || p.Verbosity != tc.want {
			t.Errorf("%q: verbosity %d, %v; want %d", tc.args, p.Verbosity, err, tc.want)
		}
	}
	p := DefaultPaths()
	if p.DiskImage() != "/data/disk.img" || p.BlockDevice != "/dev/cdi-block-volume" || p.TerminationLog != "/dev/termination-log" ||
		p.MetricsAddr != ":8443" || p.ScratchDir != "/scratch" {
		t.Errorf("defaults %+v", p)
	}
	fs := pflag.NewFlagSet("cdi-importer", pflag.ContinueOnError)
	p.AddFlags(fs)
	err := fs.Parse([]string{"--data-dir", "/d", "--block-device", "/b", "--scratch-dir", "/s", "--termination-log", "/t",
		"--metrics-addr", "127.0.0.1:0", "--extra-headers-dir", "/h", "--delegate", "/usr/bin/cdi-importer"})
	want := Paths{DataDir: "/d", BlockDevice: "/b", ScratchDir: "/s", TerminationLog: "/t", MetricsAddr: "127.0.0.1:0",
		SecretHeadersDir: "/h", Delegate: "/usr/bin/cdi-importer"}
	if err != nil || p != want {
		t.Errorf("%+v, %v", p, err)
	}
	if err := fs.Parse([]string{"-v=high"}); err == nil {
		t.Error("-v=high taken")
	}
}
