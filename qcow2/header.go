package qcow2

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// The on-disk header, as docs/interop/qcow2.txt of QEMU describes it. All
// numbers are big-endian.
const (
	magic = 0x514649fb // "QFI\xfb"

	headerV2Len = 72  // a version 2 header ends at the features of version 3
	headerV3Min = 104 // a version 3 header is at least this long
	headerV3Len = 112 // with the compression type byte, padded to 8

	minClusterBits = 9  // 512 B, as QEMU allows
	maxClusterBits = 21 // 2 MiB
	// minExtendedL2Bits: 32 subclusters of at least 512 B.
	minExtendedL2Bits = 14

	// maxL1Bytes and maxRefTableBytes are QEMU's limits
	// (QCOW_MAX_L1_SIZE, QCOW_MAX_REFTABLE_SIZE): an image past them is
	// one QEMU would not open either.
	maxL1Bytes       = 32 << 20
	maxRefTableBytes = 8 << 20
	maxBackingName   = 1023 // QEMU's limit on the backing file name
)

// Incompatible, compatible and autoclear feature bits.
const (
	incompatDirty       = 1 << 0
	incompatCorrupt     = 1 << 1
	incompatDataFile    = 1 << 2
	incompatCompression = 1 << 3
	incompatExtendedL2  = 1 << 4
	incompatKnown       = incompatDirty | incompatCorrupt | incompatDataFile | incompatCompression | incompatExtendedL2

	compatLazyRefcounts = 1 << 0

	autoclearBitmaps = 1 << 0
	autoclearRawData = 1 << 1
)

// Compression types (the compression_type header byte).
const (
	compressZlib = 0
	compressZstd = 1
)

// Header is an image's header, decoded and range-checked against the
// file, with its extensions.
type Header struct {
	Version            int
	BackingFileOffset  uint64
	BackingFileSize    uint32
	ClusterBits        uint32
	Size               uint64 // virtual size as written
	CryptMethod        uint32 // 0 none, 1 AES, 2 LUKS
	L1Size             uint32 // entries
	L1TableOffset      uint64
	RefTableOffset     uint64
	RefTableClusters   uint32
	NbSnapshots        uint32
	SnapshotsOffset    uint64
	Incompatible       uint64
	Compatible         uint64
	Autoclear          uint64
	RefcountOrder      uint32
	HeaderLength       uint32
	CompressionType    uint8
	BackingFile        string // name as written; "" when none
	BackingFormat      Format // from the backing format extension; "" when none
	DataFile           string // external data file name; "" when none
	FeatureNames       map[featureKey]string
	HasCryptoExtension bool
}

// featureKey is a feature's type (0 incompatible, 1 compatible, 2
// autoclear) and bit number, as the feature name table keys them.
type featureKey struct {
	kind uint8
	bit  uint8
}

func (h *Header) clusterSize() int64 { return 1 << h.ClusterBits }

// l2Entries is the number of entries of an L2 table.
func (h *Header) l2Entries() int64 {
	if h.extendedL2() {
		return h.clusterSize() / 16
	}
	return h.clusterSize() / 8
}

func (h *Header) extendedL2() bool { return h.Incompatible&incompatExtendedL2 != 0 }

// parseHeader decodes the fixed part of the header from b (at least
// headerV2Len bytes, the first cluster or the file when shorter) and
// checks each field against the file's size.
func parseHeader(name string, b []byte, fileSize int64) (*Header, error) {
	if len(b) < 4 || binary.BigEndian.Uint32(b) != magic {
		return nil, &Error{Name: name, Cause: ErrNotQcow2, What: "no QFI\\xfb magic"}
	}
	if len(b) < headerV2Len {
		return nil, malformed(name, "file of %d bytes is shorter than a header", len(b))
	}
	be := binary.BigEndian
	h := &Header{
		Version:           int(be.Uint32(b[4:])),
		BackingFileOffset: be.Uint64(b[8:]),
		BackingFileSize:   be.Uint32(b[16:]),
		ClusterBits:       be.Uint32(b[20:]),
		Size:              be.Uint64(b[24:]),
		CryptMethod:       be.Uint32(b[32:]),
		L1Size:            be.Uint32(b[36:]),
		L1TableOffset:     be.Uint64(b[40:]),
		RefTableOffset:    be.Uint64(b[48:]),
		RefTableClusters:  be.Uint32(b[56:]),
		NbSnapshots:       be.Uint32(b[60:]),
		SnapshotsOffset:   be.Uint64(b[64:]),
		RefcountOrder:     4,
		HeaderLength:      headerV2Len,
	}
	if h.Version != 2 && h.Version != 3 {
		return nil, &Error{Name: name, Cause: ErrUnsupported, What: fmt.Sprintf("version %d", h.Version),
			Hint: "only versions 2 and 3 exist"}
	}
	if h.ClusterBits < minClusterBits || h.ClusterBits > maxClusterBits {
		return nil, malformed(name, "cluster_bits %d (QEMU allows 9 to 21)", h.ClusterBits)
	}
	if h.Version == 3 {
		if err := h.parseV3(name, b); err != nil {
			return nil, err
		}
	}
	if h.extendedL2() && h.ClusterBits < minExtendedL2Bits {
		// Subclusters would be smaller than a sector: QEMU refuses it.
		return nil, malformed(name, "extended L2 entries with %d-byte clusters (QEMU requires at least 16 KiB)", h.clusterSize())
	}
	if int64(h.HeaderLength) > h.clusterSize() {
		return nil, malformed(name, "header of %d bytes is longer than a cluster", h.HeaderLength)
	}
	return h, h.checkTables(name, fileSize)
}

// parseV3 decodes the fields version 3 adds.
func (h *Header) parseV3(name string, b []byte) error {
	if len(b) < headerV3Min {
		return malformed(name, "version 3 header cut short at %d bytes", len(b))
	}
	be := binary.BigEndian
	h.Incompatible = be.Uint64(b[72:])
	h.Compatible = be.Uint64(b[80:])
	h.Autoclear = be.Uint64(b[88:])
	h.RefcountOrder = be.Uint32(b[96:])
	h.HeaderLength = be.Uint32(b[100:])
	if h.HeaderLength < headerV3Min {
		return malformed(name, "header_length %d (at least %d)", h.HeaderLength, headerV3Min)
	}
	if h.RefcountOrder > 6 {
		return malformed(name, "refcount_order %d (at most 6)", h.RefcountOrder)
	}
	if h.HeaderLength > headerV3Min && len(b) > headerV3Min {
		h.CompressionType = b[headerV3Min]
	}
	if h.Incompatible&incompatCompression == 0 && h.CompressionType != compressZlib {
		return malformed(name, "compression_type %d without the compression type feature bit", h.CompressionType)
	}
	if h.CompressionType > compressZstd {
		return &Error{Name: name, Cause: ErrUnsupported, What: fmt.Sprintf("compression_type %d", h.CompressionType),
			Hint: "only zlib (0) and zstd (1) exist"}
	}
	return nil
}

// checkTables range-checks the L1 and refcount tables and the virtual
// size against what the file can hold.
func (h *Header) checkTables(name string, fileSize int64) error {
	cs := h.clusterSize()
	if h.L1Size > maxL1Bytes/8 {
		return malformed(name, "L1 table of %d entries (QEMU's limit is %d)", h.L1Size, maxL1Bytes/8)
	}
	// The guest clusters the L1 table can map must cover the size.
	maxSize := uint64(h.L1Size) * uint64(h.l2Entries()) * uint64(cs)
	if h.Size > maxSize {
		return malformed(name, "L1 table of %d entries maps %d bytes, less than the virtual size %d",
			h.L1Size, maxSize, h.Size)
	}
	if h.L1Size > 0 {
		if err := inFile(name, "L1 table", h.L1TableOffset, uint64(h.L1Size)*8, cs, fileSize); err != nil {
			return err
		}
	}
	if uint64(h.RefTableClusters)*uint64(cs) > maxRefTableBytes {
		return malformed(name, "refcount table of %d clusters (QEMU's limit is %d bytes)", h.RefTableClusters, maxRefTableBytes)
	}
	if h.RefTableClusters == 0 {
		return malformed(name, "no refcount table")
	}
	return inFile(name, "refcount table", h.RefTableOffset, uint64(h.RefTableClusters)*uint64(cs), cs, fileSize)
}

// inFile checks that a table of n bytes at off is cluster-aligned and
// lies inside the file.
func inFile(name, what string, off, n uint64, cs, fileSize int64) error {
	if off%uint64(cs) != 0 {
		return malformed(name, "%s at offset %#x is not cluster-aligned", what, off)
	}
	end, carry := bits.Add64(off, n, 0)
	if carry != 0 || end > uint64(fileSize) || off == 0 {
		return malformed(name, "%s at [%#x, +%d) lies outside the file of %d bytes", what, off, n, fileSize)
	}
	return nil
}
