package copier

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
)

// SrcFormatRaw in Options.SrcFormat says SRC's bytes are what to copy even
// when they start like a disk image container.
const SrcFormatRaw = "raw"

// sniffSize is how much of SRC's start and end is read to recognise a
// container: every header below lies in the first 512 bytes, and a fixed
// VHD's footer is the last 512.
const sniffSize = 512

// checkImageFormat refuses a SRC that is a disk image container (qcow2,
// vmdk, vhdx, vdi, vpc, qed): its bytes are the container, not the disk
// inside, and a copy of them is a file qemu-img still calls qcow2. Only a
// range that starts at 0 is checked: a header elsewhere is data.
// Options.SrcFormat "raw" copies the bytes as they are.
func (p *Plan) checkImageFormat() error {
	o := &p.opts
	if o.SrcFormat == SrcFormatRaw || o.SrcOffset != 0 || p.Length == 0 {
		return nil
	}
	head, foot := readEnds(o.Src, p.src.geo.Size, p.Length)
	format, where := imageFormat(head, foot)
	switch format {
	case "":
		return nil
	case "luks":
		// LUKS is raw to qemu too: the encrypted volume, copied byte for
		// byte, opens with the same passphrase. Nothing to convert.
		p.note("SRC is a LUKS volume: copied as it is, still encrypted")
		return nil
	}
	return refuse(o.Src, fmt.Sprintf("SRC is a %s disk image (%s), not raw disk bytes: convert it with qemu-img convert -f %s -O raw %s %s, or pass --src-format raw to copy the image file as it is",
		format, where, format, shellQuote(o.Src), shellQuote(o.Dst)))
}

// readEnds reads the first sniffSize bytes of SRC, and the last ones when
// the range reaches into them. A read that fails leaves its part empty:
// the copy itself will say what is wrong.
func readEnds(path string, size, length int64) (head, foot []byte) {
	f, err := os.OpenFile(path, inspectFlags, 0)
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

// imageFormat names the container head (SRC's first bytes) or foot (its
// last sniffSize bytes) shows, in qemu-img's words, and where its
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

// shellQuote makes path safe to paste into a shell command line.
func shellQuote(path string) string {
	if path != "" && strings.Trim(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:,@%=") == "" {
		return path
	}
	return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
}
