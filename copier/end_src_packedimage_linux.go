package copier

import (
	"bytes"
	"fmt"
	"io"

	"github.com/ringcp/ringcp/unpack"
)

// A compressed SRC that holds a qcow2 image (an image.qcow2.xz) is not
// decompressed onto DST: its bytes are an image's file, not its guest's,
// and the qcow2 reader reads at any offset while a compressed SRC is
// read once, in order. Copied as it is, DST would hold a qcow2 file
// where the caller wanted a disk. It is refused with the line to run.

// packedImageProbe is how much of a compressed SRC is read to decompress
// its first bytes: enough for a block of xz or zstd as they write them
// for a start; a format whose first output needs more (bzip2's 900 kB
// blocks) is simply not told, and copied as it was before.
const packedImageProbe = 4 << 20

// refusePackedImage refuses SRC when its first decompressed bytes are
// qcow2's magic. Only a SRC read at offsets is looked at (a file, an
// object with ranges): a stream's bytes are read once, by the copy.
func refusePackedImage(p *Plan, ep *endpoint, raw rawSource, f unpack.Format) error {
	o := &p.opts
	if raw.at == nil || raw.size <= 0 || (o.SrcFormat != "" && o.SrcFormat != FormatAuto) {
		return nil
	}
	r, err := unpack.NewReader(io.NewSectionReader(raw.at, 0, min(raw.size, packedImageProbe)), unpack.Options{Format: f, Threads: 1})
	if err != nil {
		return nil // the copy meets what is wrong, and says it there
	}
	defer r.Close()
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil || !bytes.Equal(head[:], []byte("QFI\xfb")) {
		return nil
	}
	dec := decompressor(f) + " -dc"
	line := fmt.Sprintf("%s '%s' > image.qcow2", dec, raw.name)
	switch raw.transport {
	case "http":
		line = fmt.Sprintf("curl -fL '%s' | %s > image.qcow2", raw.name, dec)
	case "s3":
		line = fmt.Sprintf("aws s3 cp '%s' - | %s > image.qcow2", raw.name, dec)
	}
	return refuse(KindImageFormat, ep.path, fmt.Sprintf("is a qcow2 image compressed with %s: ringcp reads a qcow2 image at any offset, and a compressed SRC only once, in order; decompress it first, then copy the image: %s && ringcp image.qcow2 DST", f, line)).on("Src")
}

// decompressor is the command that decompresses f.
func decompressor(f unpack.Format) string {
	switch f {
	case unpack.Gzip:
		return "gzip"
	case unpack.Zstd:
		return "zstd"
	case unpack.Bzip2:
		return "bzip2"
	}
	return "xz"
}

// refuseStreamImage refuses a SRC read only in order (a server without
// ranges, standard input, a pipe) whose first bytes are a qcow2 image's
// (magic and version 2 or 3) or a sparse vmdk's (KDMV), unless
// Options.SrcFormat says raw: its file's bytes would land on DST where a
// disk was wanted.
func refuseStreamImage(p *Plan, ep *endpoint, raw rawSource) error {
	o := &p.opts
	if raw.at != nil || (o.SrcFormat != "" && o.SrcFormat != FormatAuto) {
		return nil
	}
	format := streamImageFormat(raw.head)
	if format == "" {
		return nil
	}
	first := "write it to a file first, then copy the file"
	if raw.transport == "http" || raw.transport == "s3" {
		first = fmt.Sprintf("its server does not serve ranges: download it first (curl -fL -o image.%s '%s'), then ringcp image.%s DST", format, raw.name, format)
	}
	return refuse(KindImageFormat, ep.path, fmt.Sprintf("is a %s image read only in order, and ringcp reads a %s image at any offset: %s; Options.SrcFormat raw copies its file's bytes as they are", format, format, first)).on("Src")
}

// streamImageFormat is the image format whose file starts with h (qcow2,
// vmdk), "" for another.
func streamImageFormat(h []byte) string {
	switch {
	case isQcow2Head(h):
		return "qcow2"
	case len(h) >= 4 && bytes.Equal(h[:4], []byte("KDMV")):
		return "vmdk"
	}
	return ""
}
