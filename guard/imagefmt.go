package guard

import (
	"bytes"
	"encoding/binary"
	"os"
	"syscall"
)

// lookFlags open a file to look at it. O_NONBLOCK: should the path have
// turned into a FIFO, the open must not wait for a writer; on files and
// disks it changes nothing.
const lookFlags = os.O_RDONLY | syscall.O_CLOEXEC | syscall.O_NONBLOCK

// sniffSize is how much of a file's start and end is read to recognise a
// container: every header below lies in the first 512 bytes, and a fixed
// VHD's footer is the last 512.
const sniffSize = 512

// ImageFormat names the disk image container the file at path is, in
// qemu-img's words (qcow2, vmdk, vhdx, vdi, vpc, qed, qcow; luks for a
// LUKS volume, which qemu treats as raw), and where its signature is; ""
// when none is found or the file cannot be read. size is the file's size,
// length how much of it from byte 0 is of interest: a fixed VHD's footer
// is only looked for when that range reaches it. A container's bytes are
// the container, not the disk inside: a copy of them is a file qemu-img
// still calls qcow2.
func ImageFormat(path string, size, length int64) (format, where string) {
	return imageFormat(readEnds(path, size, length))
}

// ImageFormatOf is ImageFormat for bytes already read: head, the first
// bytes of an object (a URL's, say, or a decompressed stream's), and
// tail, its last ones (nil when they were not read), whose last 512
// bytes are looked at.
func ImageFormatOf(head, tail []byte) (format, where string) {
	if len(tail) > sniffSize {
		tail = tail[len(tail)-sniffSize:]
	}
	return imageFormat(head, tail)
}

// readEnds reads the first sniffSize bytes of the file, and the last ones
// when the range reaches into them. A read that fails leaves its part
// empty: the copy itself will say what is wrong.
func readEnds(path string, size, length int64) (head, foot []byte) {
	f, err := os.OpenFile(path, lookFlags, 0)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	head = make([]byte, min(sniffSize, length))
	n, _ := f.ReadAt(head, 0)
	head = head[:n]
	if size >= 2*sniffSize && length > size-sniffSize {
		foot = make([]byte, sniffSize)
		n, _ = f.ReadAt(foot, size-sniffSize)
		foot = foot[:n]
	}
	return head, foot
}

// imageFormat names the container head (the file's first bytes) or foot
// (its last sniffSize bytes) shows, in qemu-img's words, and where its
// signature is; "" when none. The signatures are those qemu's probes
// test (block/qcow2.c, vmdk.c, vhdx.c, vdi.c, vpc.c, qed.c).
func imageFormat(head, foot []byte) (format, where string) {
	switch {
	case bytes.HasPrefix(head, []byte("QFI\xfb")) && len(head) >= 8:
		// qcow (version 1) and qcow2 (2 and 3) share the magic.
		if binary.BigEndian.Uint32(head[4:8]) == 1 {
			return "qcow", "QFI\\xfb header, version 1"
		}
		return "qcow2", "QFI\\xfb header"
	case bytes.HasPrefix(head, []byte("QED\x00")):
		return "qed", "QED header"
	case bytes.HasPrefix(head, []byte("KDMV")):
		return "vmdk", "sparse extent header KDMV"
	case bytes.HasPrefix(head, []byte("COWD")):
		return "vmdk", "ESX sparse extent header COWD"
	case bytes.HasPrefix(head, []byte("# Disk DescriptorFile")):
		return "vmdk", "descriptor file"
	case bytes.HasPrefix(head, []byte("vhdxfile")):
		return "vhdx", "vhdxfile signature"
	case len(head) >= 0x44 && binary.LittleEndian.Uint32(head[0x40:0x44]) == 0xbeda107f:
		return "vdi", "signature 0xbeda107f at offset 0x40"
	case bytes.HasPrefix(head, []byte("conectix")):
		return "vpc", "dynamic VHD header conectix"
	case bytes.HasPrefix(foot, []byte("conectix")):
		return "vpc", "fixed VHD footer conectix in the last 512 bytes"
	case bytes.HasPrefix(head, []byte("LUKS\xba\xbe")):
		return "luks", "LUKS header"
	}
	return "", ""
}
