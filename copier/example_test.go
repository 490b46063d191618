package copier_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"syscall"

	"github.com/ringcp/ringcp/copier"
)

// exampleImage makes a 4 MiB file to copy in a new temporary folder.
func exampleImage() (dir, src string) {
	dir, err := os.MkdirTemp("", "ringcp-example-")
	if err != nil {
		log.Fatal(err)
	}
	src = filepath.Join(dir, "disk.raw")
	if err := os.WriteFile(src, randomBytes(4<<20, 1), 0o644); err != nil {
		log.Fatal(err)
	}
	return dir, src
}

// Copy a disk image to a new file: checked, copied, synced, then named.
func ExampleCopy() {
	dir, src := exampleImage()
	defer os.RemoveAll(dir)

	rep, err := copier.Copy(context.Background(), copier.Options{Src: src, Dst: filepath.Join(dir, "clone.raw")})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rep.Bytes, "bytes,", rep.DstState, "and synced:", rep.Synced)
	// Output: 4194304 bytes, complete and synced: true
}

// Prepare checks everything and decides how to copy, writing nothing:
// the plan can be shown or logged before Run copies.
func ExamplePrepare() {
	dir, src := exampleImage()
	defer os.RemoveAll(dir)

	plan, err := copier.Prepare(copier.Options{Src: src, Dst: filepath.Join(dir, "clone.raw"), SrcOffset: 1 << 20})
	if err != nil {
		log.Fatal(err) // a *copier.RefusedError: nothing was written
	}
	fmt.Println("will copy", plan.Length, "bytes")
	rep, err := plan.Run(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("copied", rep.Bytes, "bytes:", rep.DstState)
	// Output:
	// will copy 3145728 bytes
	// copied 3145728 bytes: complete
}

// Progress comes as a Status every ProgressInterval, and once more at the
// end: here into a channel, as a UI or a metrics exporter would read it.
func ExampleOptions_progress() {
	dir, src := exampleImage()
	defer os.RemoveAll(dir)

	updates := make(chan copier.Status, 64)
	o := copier.Options{Src: src, Dst: filepath.Join(dir, "clone.raw"),
		OnProgress: func(s copier.Status) {
			select {
			case updates <- s:
			default: // a slow reader drops updates; the copy never waits
			}
		}}
	done := make(chan copier.Status)
	go func() {
		var last copier.Status
		for s := range updates {
			last = s // a program would export s.BytesDone, s.Percent, s.ETASeconds...
		}
		done <- last
	}()
	_, err := copier.Copy(context.Background(), o)
	close(updates) // no call comes after Copy returned
	if err != nil {
		log.Fatal(err)
	}
	last := <-done
	fmt.Println(last.Phase, last.Percent, last.BytesDone == last.BytesTotal)
	// Output: done 100 true
}

// A cancelled context stops a copy: no new requests, those in flight
// finish, what was written is synced, and the Report says what DST holds.
// A new DST that did not complete is never named.
func ExampleCopy_cancel() {
	dir, src := exampleImage()
	defer os.RemoveAll(dir)

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a signal handler or a job's deadline would do this
	dst := filepath.Join(dir, "clone.raw")
	rep, err := copier.Copy(ctx, copier.Options{Src: src, Dst: dst})
	_, statErr := os.Stat(dst)
	fmt.Println(errors.Is(err, context.Canceled), rep.DstState, errors.Is(statErr, os.ErrNotExist))
	// Output: true discarded true
}

// A refusal (nothing was written, exit 2 in the command) is told from a
// failure during the copy (DST may hold part of it) with errors.As, and
// the errno behind either with errors.Is.
func ExampleRefusedError() {
	dir, _ := exampleImage()
	defer os.RemoveAll(dir)

	_, err := copier.Copy(context.Background(), copier.Options{Src: filepath.Join(dir, "missing.raw"), Dst: filepath.Join(dir, "clone.raw")})
	var refused *copier.RefusedError
	switch {
	case errors.As(err, &refused):
		fmt.Println("refused:", refused.Kind, refused.Field, errors.Is(err, syscall.ENOENT))
	case errors.Is(err, syscall.ENOSPC):
		fmt.Println("DST's filesystem filled up during the copy")
	case err != nil:
		fmt.Println("failed during the copy:", err)
	}
	// Output: refused: not_found Src true
}
