package blocksync

import (
	"fmt"

	"github.com/ringcp/ringcp/guard"
	"github.com/ringcp/ringcp/unpack"
)

// RefuseImage refuses an end whose bytes are a container rather than a
// disk: a disk image (qcow2, vmdk, vhdx... as guard.ImageFormat names
// them; a LUKS volume is raw to qemu too) or, for SRC, a compressed
// stream. A sync moves bytes as they are: from such a SRC it would give
// DST the container where a copy gives it the disk inside (ringcp reads
// qcow2 and decompresses), and onto such a DST it would leave neither
// the image nor a disk, which a copy refuses. end is "SRC" or "DST"; the
// caller skips the check when raw bytes are meant (--src-format raw,
// --dst-format raw or --force for DST). A DST this sync creates, and an
// empty end, are never containers.
func (e *File) RefuseImage(end string) error {
	size := e.Size()
	if e.fresh != nil || size == 0 {
		return nil
	}
	format, where := guard.ImageFormat(e.path, size, size)
	what := "a " + format + " disk image"
	if format == "" && end == "SRC" {
		head := make([]byte, min(size, unpack.HeadSize))
		if n, _ := e.f.ReadAt(head, 0); n == len(head) {
			if f := unpack.Detect(head); f != unpack.Raw {
				format, where, what = f.String(), "its first bytes", f.String()+"-compressed"
			}
		}
	}
	if format == "" || format == "luks" {
		return nil
	}
	if end == "SRC" {
		return refuse(KindImageFormat, e.path, fmt.Sprintf("SRC is %s (%s), not raw disk bytes: a sync sends the bytes as they are, the container and not the disk inside (--src-format raw sends them so; or convert it first)", what, where), nil)
	}
	return refuse(KindImageFormat, e.path, fmt.Sprintf("DST is %s (%s): raw bytes written over it leave neither the image nor a disk (--dst-format raw or --force writes them anyway)", what, where), nil)
}
