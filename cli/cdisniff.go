package cli

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/ringcp/ringcp/cdi"
	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/guard"
	"github.com/ringcp/ringcp/httpobj"
	"github.com/ringcp/ringcp/s3obj"
	"github.com/ringcp/ringcp/unpack"
)

// What the image is, learned from its first bytes (and, once
// decompressed, from its content's first bytes) before anything is
// written: CDI's importer converts whatever qemu-img reads into raw
// bytes, so a container copied as it is would be a volume no guest boots
// from, under a termination message that says "Import Complete".

// sniffSize is how many bytes of the image (and of its decompressed
// content) are looked at: guard's signatures are within it.
const sniffSize = 64 << 10

// sniffed is what the image is.
type sniffed struct {
	compression unpack.Format // Raw when not compressed
	container   string        // guard.ImageFormat's name ("qcow2", "vmdk"...), "" for raw bytes
	where       string        // where the container's signature is
	// objectSize is the object's size in bytes, -1 when its server does
	// not say; sized tells whether the disk's size is known before the
	// copy (raw with a size, xz read at offsets, a qcow2 image).
	objectSize int64
	sized      bool
	// virtual is the disk's size as the image says it before the copy
	// (raw bytes of a known size, a qcow2 or sparse vmdk header, an xz
	// index), -1 when it does not.
	virtual int64
	// pinned: the server names the object's version (an ETag or a
	// Last-Modified), which a resume state needs to know it again.
	pinned bool
	// backing is the backing file a qcow2 image names, "" for none:
	// CDI refuses such an image (its qemu-img info check), and so does
	// the import, though copier would follow a name beside its URL.
	backing string
}

func (s sniffed) String() string {
	what := "raw"
	if s.container != "" && s.container != "luks" {
		what = s.container
	}
	if s.compression != unpack.Raw {
		what = s.compression.String() + "-compressed " + what
	}
	if s.objectSize >= 0 {
		what += fmt.Sprintf(", %d bytes", s.objectSize)
	}
	return what
}

// srcFormat is copier's Options.SrcFormat for it: what the sniff found,
// so that the copy refuses an object that is something else by then.
func (s sniffed) srcFormat() string {
	switch {
	case s.container == "qcow2":
		return copier.FormatQcow2
	case s.container == "vmdk":
		return copier.FormatVmdk
	case s.compression != unpack.Raw:
		return s.compression.String()
	}
	return copier.SrcFormatRaw
}

// resumable: an image read at offsets (raw bytes of a known size, a
// qcow2 or sparse vmdk image, whose resume state names the image: copier
// follows no backing file of an image at a URL under Options.Resume) is
// resumed when its server names its version; a compressed stream is
// decoded from its start again, and an object of a server that sends
// neither ETag nor Last-Modified (which CDI's importer imports) is
// imported from its start each time.
func (s sniffed) resumable() bool {
	return s.compression == unpack.Raw && s.sized && s.pinned
}

// sparseVmdk is guard's word for the vmdk kinds copier reads
// (monolithicSparse, streamOptimized); a descriptor file or an ESX
// COWD extent is another.
const sparseVmdk = "sparse extent header KDMV"

// refusal is the import's refusal of what ringcp cannot import as CDI's
// importer would: a container other than qcow2 and sparse vmdk, a
// compressed container, a SRC whose size is not known onto a block
// volume.
func (s sniffed) refusal(t *cdi.Transfer) error {
	unserved := func(reason string) error {
		return &cdi.Refusal{Name: "the image", Value: s.String(), Unserved: true, Reason: reason}
	}
	switch {
	case s.container == "luks", s.container == "":
	case s.compression != unpack.Raw:
		return unserved(fmt.Sprintf("ringcp reads a %s image (%s) only uncompressed, at any offset", s.container, s.where))
	case s.container == "vmdk" && s.where != sparseVmdk:
		return unserved(fmt.Sprintf("ringcp converts sparse vmdk images (monolithicSparse, streamOptimized) to raw, not a vmdk %s", s.where))
	case s.container != "qcow2" && s.container != "vmdk":
		return unserved(fmt.Sprintf("ringcp converts qcow2 and sparse vmdk images to raw, not %s (%s)", s.container, s.where))
	}
	if t.Checksum != "" && s.container != "" && s.container != "luks" {
		// Its clusters are read at their offsets, never the file
		// whole in order: its digest is not known at the end. CDI
		// downloads it to scratch space whole, and checks it there.
		return &cdi.Refusal{Name: cdi.EnvChecksum, Value: t.Checksum, Unserved: true,
			Reason: fmt.Sprintf("ringcp checks the digest of raw and compressed images, not of a %s image, whose clusters it reads at their offsets", s.container)}
	}
	if s.backing != "" {
		// CDI's words (its image validation).
		return &cdi.Refusal{Name: "Image", Reason: redactedSrc(t.SrcURL) + " is invalid because it has backing file " + s.backing}
	}
	if !s.sized && t.Block {
		return unserved("its disk's size is not known before its end, and the bytes of the block volume past it must not be changed; " +
			"raw images whose server says their size, xz and qcow2 images say it")
	}
	return nil
}

// sniff opens the object as copier's web kind will, and reads its first
// and last bytes, and its content's first bytes when it is compressed.
func sniff(ctx context.Context, t *cdi.Transfer, w copier.WebOptions) (sniffed, error) {
	obj, err := openObject(ctx, t, w)
	if err != nil {
		if ctx.Err() != nil {
			return sniffed{}, ctx.Err()
		}
		// Before anything is written: refused, as copier refuses a SRC
		// it cannot open. httpobj's errors name no credentials.
		return sniffed{}, &cdi.Refusal{Name: cdi.EnvEndpoint, Reason: "cannot be opened: " + err.Error()}
	}
	defer obj.Close()
	s := sniffed{objectSize: obj.Size(), pinned: obj.Pinned(), virtual: -1}
	var head, foot []byte
	if obj.Ranges() && obj.Size() >= 0 {
		head, foot, err = readEnds(obj)
	} else {
		st := obj.Stream()
		head, err = readStart(st, sniffSize)
		st.Close()
	}
	if err != nil {
		return s, fmt.Errorf("cannot read the image's first bytes: %w", err)
	}
	s.compression = unpack.Detect(head)
	if s.compression == unpack.Raw {
		s.container, s.where = guard.ImageFormatOf(head, foot)
		s.sized = obj.Size() >= 0
		if s.container == "qcow2" {
			s.backing = qcow2Backing(head)
		}
		if s.sized {
			s.virtual = virtualSize(s.container, head, obj.Size())
		}
		return s, nil
	}
	inner, err := readInner(obj)
	if err != nil {
		return s, fmt.Errorf("cannot decompress the image's first bytes (%s): %w", s.compression, err)
	}
	s.container, s.where = guard.ImageFormatOf(inner, nil)
	if s.compression == unpack.Xz && obj.Ranges() && obj.Size() > 0 {
		size, err := unpack.XzSize(obj, obj.Size())
		if s.sized = err == nil; s.sized && s.container == "" {
			s.virtual = size
		}
	}
	return s, nil
}

// virtualSize is the disk's size as an image's first bytes say it: a raw
// image's own size, a qcow2 header's size, a sparse vmdk header's
// capacity; -1 for another container. A size past 2^63-1 is 2^63-1
// (too large for any volume).
func virtualSize(container string, head []byte, objectSize int64) int64 {
	clamp := func(n uint64) int64 { return int64(min(n, math.MaxInt64)) }
	switch {
	case container == "" || container == "luks":
		return objectSize
	case container == "qcow2" && len(head) >= 32:
		return clamp(binary.BigEndian.Uint64(head[24:32]))
	case container == "vmdk" && len(head) >= 20 && string(head[:4]) == "KDMV":
		sectors := binary.LittleEndian.Uint64(head[12:20])
		return clamp(min(sectors, math.MaxInt64/512) * 512)
	}
	return -1
}

// qcow2Backing is the backing file name a qcow2 header names (its
// offset and length at bytes 8 and 16), "" for none; a name past the
// bytes read is said by where it is.
func qcow2Backing(head []byte) string {
	if len(head) < 20 {
		return ""
	}
	off, n := binary.BigEndian.Uint64(head[8:16]), uint64(binary.BigEndian.Uint32(head[16:20]))
	switch {
	case off == 0:
		return ""
	case n == 0 || off+n > uint64(len(head)):
		return fmt.Sprintf("(%d bytes at offset %d of the image)", n, off)
	}
	name := string(head[off : off+n])
	if strconv.Quote(name) != `"`+name+`"` {
		return strconv.Quote(name)
	}
	return name
}

// openObject opens the image with the options the copy will have.
func openObject(ctx context.Context, t *cdi.Transfer, w copier.WebOptions) (*httpobj.Object, error) {
	h := httpobj.Options{Connections: 1, CAFile: w.CAFile, Insecure: w.Insecure, Headers: w.Headers,
		Retries: w.Retries, StallTimeout: w.StallTimeout}
	if t.S3 == nil {
		return httpobj.Open(ctx, withUser(t.SrcURL, t.Username, t.Password), h)
	}
	return s3obj.Open(ctx, t.SrcURL, s3obj.Options{HTTP: h, Endpoint: w.S3Endpoint, Region: w.S3Region})
}

// readEnds reads an object's first sniffSize bytes, and its last ones
// when it is larger than twice that (a fixed VHD's footer).
func readEnds(obj *httpobj.Object) (head, foot []byte, err error) {
	size := obj.Size()
	head = make([]byte, min(sniffSize, size))
	if _, err := obj.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, err
	}
	if size >= 2*sniffSize {
		foot = make([]byte, 512) // a fixed VHD's footer
		if _, err := obj.ReadAt(foot, size-512); err != nil && !errors.Is(err, io.EOF) {
			return nil, nil, err
		}
	}
	return head, foot, nil
}

// readInner decompresses the object's first bytes.
func readInner(obj *httpobj.Object) ([]byte, error) {
	st := obj.Stream()
	defer st.Close()
	r, err := unpack.NewReader(st, unpack.Options{Threads: 1})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readStart(r, sniffSize)
}

// readStart reads up to n bytes from r's start; fewer when it ends.
func readStart(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, n)
	got, err := io.ReadFull(r, buf)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	return buf[:got], nil
}
