// Package vmdk reads VMware's sparse disk images without QEMU: the two
// kinds an OVA carries and qemu-img makes with -O vmdk -o
// subformat=monolithicSparse|streamOptimized. Both are one file: a
// sparse extent header (KDMV), a grain directory of grain tables, and
// grains of the guest's bytes; a streamOptimized image compresses each
// grain (deflate in zlib framing) behind a marker, and keeps its header
// with the real grain directory in a footer at the end of the file.
//
// Open reads the header (the footer's for streamOptimized) and the whole
// grain directory and grain tables, each checked against the file's size
// before it is read, so memory stays in proportion to the file; a grain
// outside the file is refused at Open. The *Image gives the guest's
// bytes (ReadAt, safe for many goroutines: grains that follow one
// another in the file are read at once, compressed grains decompress on
// the calling goroutine) and where the data is (Data: unallocated grains
// and zeroed grains are not data).
//
// Refusals are *Error values that unwrap to ErrNotVMDK, ErrUnsupported
// or ErrMalformed and say what to do: descriptor files with extents of
// their own (monolithicFlat, twoGbMaxExtent*, vmfs), ESX COWD images,
// images with a parent, and unclean images are refused with the
// qemu-img convert line that reads them.
//
// The format is VMware's Virtual Disk Format 5.0 specification, as
// QEMU's block/vmdk.c reads it.
package vmdk
