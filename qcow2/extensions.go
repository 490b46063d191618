package qcow2

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
)

// Header extension types.
const (
	extEnd           = 0x00000000
	extBackingFormat = 0xe2792aca
	extFeatureTable  = 0x6803f857
	extBitmaps       = 0x23852875 // read by nothing here; skipped
	extCrypto        = 0x0537be77
	extDataFile      = 0x44415441

	featureEntryLen = 48 // type, bit, 46 bytes of name
)

// parseExtensions reads the header extensions and the backing file name
// from the first cluster, c (cut at the file's end when shorter).
func (h *Header) parseExtensions(name string, c []byte) error {
	start := int64(headerV2Len)
	if h.Version == 3 {
		start = int64(h.HeaderLength)
	}
	// Extensions end where the backing file name begins, else at the end
	// of the first cluster, as QEMU reads them.
	end := h.clusterSize()
	if h.BackingFileOffset != 0 && h.BackingFileOffset < uint64(end) {
		end = int64(h.BackingFileOffset)
	}
	end = min(end, int64(len(c)))
	for off := start; off+8 <= end; {
		typ := binary.BigEndian.Uint32(c[off:])
		n := int64(binary.BigEndian.Uint32(c[off+4:]))
		off += 8
		if typ == extEnd {
			break
		}
		if n > end-off {
			return malformed(name, "header extension %#x of %d bytes runs past the header", typ, n)
		}
		if err := h.extension(name, typ, c[off:off+n]); err != nil {
			return err
		}
		off += (n + 7) &^ 7
	}
	return h.parseBackingName(name, c)
}

// extension takes in one header extension's data.
func (h *Header) extension(name string, typ uint32, data []byte) error {
	switch typ {
	case extBackingFormat:
		h.BackingFormat = Format(cString(data))
	case extDataFile:
		h.DataFile = cString(data)
	case extCrypto:
		h.HasCryptoExtension = true
	case extFeatureTable:
		if h.FeatureNames == nil {
			h.FeatureNames = map[featureKey]string{}
		}
		for ; len(data) >= featureEntryLen; data = data[featureEntryLen:] {
			h.FeatureNames[featureKey{data[0], data[1]}] = cString(data[2:featureEntryLen])
		}
	}
	return nil
}

// parseBackingName reads the backing file name, which QEMU keeps in the
// first cluster.
func (h *Header) parseBackingName(name string, c []byte) error {
	if h.BackingFileOffset == 0 {
		return nil
	}
	off, n := h.BackingFileOffset, uint64(h.BackingFileSize)
	if n > maxBackingName || off >= uint64(len(c)) || n > uint64(len(c))-off {
		return malformed(name, "backing file name of %d bytes at %#x lies outside the first cluster", n, off)
	}
	h.BackingFile = string(c[off : off+n])
	return nil
}

// cString is b up to its first NUL.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// checkFeatures refuses what cannot be read: encryption, incompatible
// features unknown here, the dirty and corrupt bits.
func (h *Header) checkFeatures(name string) error {
	switch {
	case h.CryptMethod == 1:
		return &Error{Name: name, Cause: ErrEncrypted, What: "AES encryption (crypt_method 1)",
			Hint: "decrypt it with qemu-img convert --object secret,... --image-opts first"}
	case h.CryptMethod == 2 || h.HasCryptoExtension:
		return &Error{Name: name, Cause: ErrEncrypted, What: "LUKS encryption",
			Hint: "decrypt it with qemu-img convert --object secret,... --image-opts first"}
	case h.CryptMethod != 0:
		return &Error{Name: name, Cause: ErrEncrypted, What: fmt.Sprintf("crypt_method %d", h.CryptMethod)}
	}
	if unknown := h.Incompatible &^ incompatKnown; unknown != 0 {
		return &Error{Name: name, Cause: ErrUnsupported,
			What: "unknown incompatible features: " + h.featureList(0, unknown),
			Hint: "convert it with the qemu-img that wrote it (qemu-img convert -O qcow2 -o compat=1.1)"}
	}
	if h.Incompatible&incompatCorrupt != 0 {
		return &Error{Name: name, Cause: ErrCorruptBit, What: "QEMU marked the image corrupt",
			Hint: "repair it with qemu-img check -r all, then try again"}
	}
	if h.Incompatible&incompatDirty != 0 {
		return &Error{Name: name, Cause: ErrDirty, What: "the dirty bit is set (QEMU did not close it cleanly)",
			Hint: "run qemu-img check -r all on it, then try again"}
	}
	if h.Incompatible&incompatDataFile != 0 && h.DataFile == "" {
		return malformed(name, "external data file feature without a data file name")
	}
	return nil
}

// featureList names the set bits of mask: from the image's feature name
// table when it has one, else "bit N".
func (h *Header) featureList(kind uint8, mask uint64) string {
	var names []string
	for bit := uint8(0); bit < 64; bit++ {
		if mask&(1<<bit) == 0 {
			continue
		}
		if n := h.FeatureNames[featureKey{kind, bit}]; n != "" {
			names = append(names, fmt.Sprintf("%q (bit %d)", n, bit))
		} else {
			names = append(names, fmt.Sprintf("bit %d", bit))
		}
	}
	return strings.Join(names, ", ")
}
