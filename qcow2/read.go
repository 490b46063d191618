package qcow2

import (
	"errors"
	"io"
)

// maxCompressedBatch bounds one host read that gathers the compressed
// clusters of a request (QEMU packs them one after another).
const maxCompressedBatch = 8 << 20

// ReadAt reads the guest's bytes at off, as io.ReaderAt does (n <
// len(p) only at the end of the virtual size, with io.EOF). It is safe
// for many goroutines at once. It reads each run of clusters that lie one
// after another in the host file with one host read, so a large request
// over a freshly converted image is a few large reads; compressed
// clusters are read in batches, and a batch's clusters are decompressed
// by the calling goroutine and by idle cores (inflate.go): one reader
// decompresses on every core, many readers each on their own.
func (im *Image) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("qcow2: negative offset")
	}
	if off >= im.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), im.size-off)
	if err := im.readAt(p[:n], off); err != nil {
		return 0, err
	}
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

// readAt fills p with the guest's bytes at off; off+len(p) <= size.
func (im *Image) readAt(p []byte, off int64) error {
	var batch compressedBatch
	err := im.runs(off, off+int64(len(p)), func(r run) (bool, error) {
		dst := p[r.off-off : r.off-off+r.n]
		if r.kind == runCompressed {
			return true, batch.add(im, r, dst)
		}
		if err := batch.flush(im); err != nil {
			return false, err
		}
		return true, im.readRun(r, dst)
	})
	if err != nil {
		return err
	}
	return batch.flush(im)
}

// readRun fills dst with the bytes of a run that is not compressed.
func (im *Image) readRun(r run, dst []byte) error {
	switch r.kind {
	case runZero:
		clear(dst)
		return nil
	case runData:
		return im.readData(dst, r.host)
	}
	return im.readBacking(dst, r.off)
}

// readBacking fills dst with the backing file's bytes at off, and zeros
// past its end or where there is none.
func (im *Image) readBacking(dst []byte, off int64) error {
	if im.backing == nil || off >= im.backing.Size() {
		clear(dst)
		return nil
	}
	n := min(int64(len(dst)), im.backing.Size()-off)
	clear(dst[n:])
	return im.backing.readAt(dst[:n], off)
}

// compressedBatch gathers the compressed runs of a request whose host
// bytes lie close together, to read them with one host read.
type compressedBatch struct {
	runs  []run
	dsts  [][]byte
	start int64 // host span of the batch
	end   int64
}

// add puts a compressed run in the batch, flushing the batch first when
// the run's bytes are not near it.
func (b *compressedBatch) add(im *Image, r run, dst []byte) error {
	coff, cn := im.compressedSpan(r.desc)
	cend := min(coff+cn, im.fileSize)
	if len(b.runs) > 0 && (coff < b.start || coff > b.end+im.cs || max(b.end, cend)-b.start > maxCompressedBatch) {
		if err := b.flush(im); err != nil {
			return err
		}
	}
	if len(b.runs) == 0 {
		b.start = coff
	}
	b.runs = append(b.runs, r)
	b.dsts = append(b.dsts, dst)
	b.end = max(b.end, cend)
	return nil
}

// flush reads the batch's host span and decompresses each run.
func (b *compressedBatch) flush(im *Image) error {
	if len(b.runs) == 0 {
		return nil
	}
	defer func() { b.runs, b.dsts, b.end = b.runs[:0], b.dsts[:0], 0 }()
	buf, release, err := im.readCompressed(b.start, b.end)
	if err != nil {
		return err
	}
	defer release()
	return inflateAll(len(b.runs), func(i int) error {
		r := b.runs[i]
		coff, cn := im.compressedSpan(r.desc)
		src := buf[coff-b.start : min(coff+cn, b.end)-b.start]
		return im.inflateRun(r, src, b.dsts[i])
	})
}

// inflateRun decompresses one cluster and keeps the part of it r covers.
func (im *Image) inflateRun(r run, src, dst []byte) error {
	start := r.off - r.off%im.cs
	if r.off == start && r.n == im.cs {
		return im.decompress(dst, src, start)
	}
	whole := getBuf(int(im.cs))
	defer putBuf(whole)
	if err := im.decompress(whole, src, start); err != nil {
		return err
	}
	copy(dst, whole[r.off-start:])
	return nil
}

// decompress fills a cluster, naming the image and guest offset on error.
func (im *Image) decompress(dst, src []byte, guest int64) error {
	if err := im.dec.decompress(dst, src); err != nil {
		return &IOError{Op: "decompress cluster", Name: im.name, Off: guest, Err: err}
	}
	return nil
}
