package qcow2

import (
	"bytes"
	"io"

	"github.com/ringcp/ringcp/internal/zeros"
)

// zeroCluster is read-only zeros for the zero pieces of partly written
// clusters (never written to: it stays in the zero page).
var zeroCluster [1 << maxClusterBits]byte

// span is guest clusters ci0, ci0+1, ... whose bytes data holds, to be
// stored as they are in consecutive host clusters with one write.
type span struct {
	ci0  int64
	data []byte
}

// write stores p at off: whole clusters through full, in spans; the
// pieces of clusters it covers in part through part.
func (w *Writer) write(p []byte, off int64) error {
	var spans []span
	end := off + int64(len(p))
	for pos := off; pos < end; {
		ci := pos / w.cs
		start := ci * w.cs
		stop := min(start+w.clusterLen(ci), end)
		piece := p[pos-off : stop-off]
		if pos == start && stop == start+w.clusterLen(ci) {
			store, err := w.full(ci, piece)
			if err != nil {
				return err
			}
			if store {
				spans = w.addSpan(spans, ci, piece)
			}
		} else if err := w.part(ci, pos-start, piece); err != nil {
			return err
		}
		pos = stop
	}
	return w.storeSpans(spans)
}

// addSpan appends cluster ci, to the last span when it follows it (its
// bytes then follow the span's in p: the caller adds pieces of one p in
// order).
func (w *Writer) addSpan(spans []span, ci int64, data []byte) []span {
	if n := len(spans); n > 0 {
		last := &spans[n-1]
		if last.ci0+int64(len(last.data))/w.cs == ci && int64(len(last.data))%w.cs == 0 {
			last.data = last.data[:len(last.data)+len(data)]
			return spans
		}
	}
	return append(spans, span{ci, data})
}

// full decides what becomes of a whole cluster of guest bytes: nothing
// (zeros without a backing file, or the same as the backing file), a
// zero cluster, a compressed cluster (stored here), or a cluster stored
// as it is (store: the caller stores it, with its neighbours).
func (w *Writer) full(ci int64, data []byte) (store bool, err error) {
	zero := zeros.Is(data)
	if w.opt.Backing == nil && zero {
		return false, nil
	}
	if w.opt.Backing != nil && !w.opt.TrustWrites {
		same, err := w.sameAsBacking(ci, data)
		if err != nil || same {
			return false, err
		}
	}
	if zero {
		w.setEntry(ci, entryZero)
		return false, nil
	}
	if w.comp != nil {
		return w.storeCompressed(ci, data)
	}
	return true, nil
}

// sameAsBacking compares a cluster with the backing file's (zeros past
// its end).
func (w *Writer) sameAsBacking(ci int64, data []byte) (bool, error) {
	b := getBuf(len(data))
	defer putBuf(b)
	if err := readGuest(w.opt.Backing, b, ci*w.cs); err != nil {
		return false, err
	}
	return bytes.Equal(b, data), nil
}

// readGuest fills p from r at off, zeros past its end.
func readGuest(r GuestReader, p []byte, off int64) error {
	n := max(0, min(int64(len(p)), r.Size()-off))
	clear(p[n:])
	if n == 0 {
		return nil
	}
	got, err := r.ReadAt(p[:n], off)
	if int64(got) == n {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &IOError{Op: "read backing", Name: "backing file", Off: off + int64(got), Err: err}
}

// storeCompressed compresses a cluster (the last one padded with zeros,
// as QEMU does) and stores it, unless it does not shrink: then the caller
// stores it as it is.
func (w *Writer) storeCompressed(ci int64, data []byte) (store bool, err error) {
	src := data
	if int64(len(data)) < w.cs {
		pad := getBuf(int(w.cs))
		defer putBuf(pad)
		clear(pad[copy(pad, data):])
		src = pad
	}
	buf := getBuf(int(w.cs))
	defer putBuf(buf)
	out, err := w.comp.compress(buf[:0], src)
	if err != nil {
		return false, &IOError{Op: "compress cluster", Name: w.name, Off: ci * w.cs, Err: err}
	}
	if int64(len(out)) >= w.cs {
		return true, nil
	}
	host := w.allocCompressed(int64(len(out)))
	if _, err := w.t.WriteAt(out, host); err != nil {
		return false, &IOError{Op: "write", Name: w.name, Off: host, Err: err}
	}
	shift := 62 - (w.cbits - 8)
	sectors := uint64((host+int64(len(out))-1)>>9 - host>>9)
	w.setEntry(ci, entryCompressed|sectors<<shift|uint64(host))
	return false, nil
}

// storeSpans gives each span host clusters under the lock, consecutive
// ones where it can (a free run too short takes the span's first
// clusters, the rest go on elsewhere), then writes each piece with one
// write, outside it.
func (w *Writer) storeSpans(spans []span) error {
	if len(spans) == 0 {
		return nil
	}
	type piece struct {
		host int64
		data []byte
	}
	var pieces []piece
	w.mu.Lock()
	for _, s := range spans {
		for ci, data := s.ci0, s.data; len(data) > 0; {
			n := ceilDiv(int64(len(data)), w.cs)
			host, got := w.allocRun(n)
			for k := range got {
				w.setEntryLocked(ci+k, uint64(host+k*w.cs)|entryCopied)
			}
			cut := min(int64(len(data)), got*w.cs)
			pieces = append(pieces, piece{host, data[:cut]})
			ci, data = ci+got, data[cut:]
		}
	}
	w.mu.Unlock()
	for _, p := range pieces {
		if _, err := w.t.WriteAt(p.data, p.host); err != nil {
			return &IOError{Op: "write", Name: w.name, Off: p.host, Err: err}
		}
	}
	return nil
}

// partial is a cluster written in part, waiting for the rest.
type partial struct {
	buf     []byte     // the cluster's bytes so far (zeros elsewhere)
	n       int64      // bytes written so far
	written [][2]int64 // the ranges written, to fill the rest at Close
}

// part stores a piece of cluster ci at offset at in it. Uncompressed
// without a backing file, it goes to the cluster's host cluster straight
// away (the rest of a new host cluster reads as zeros); else the piece
// waits in memory for the rest of its cluster (or Close).
func (w *Writer) part(ci, at int64, piece []byte) error {
	if !w.buffered {
		if zeros.Is(piece) {
			return nil
		}
		host := w.hostCluster(ci)
		if _, err := w.t.WriteAt(piece, host+at); err != nil {
			return &IOError{Op: "write", Name: w.name, Off: host + at, Err: err}
		}
		return nil
	}
	w.mu.Lock()
	pc := w.pending[ci]
	if pc == nil {
		pc = &partial{buf: make([]byte, w.clusterLen(ci))}
		w.pending[ci] = pc
	}
	copy(pc.buf[at:], piece)
	pc.n += int64(len(piece))
	pc.written = append(pc.written, [2]int64{at, at + int64(len(piece))})
	done := pc.n >= int64(len(pc.buf))
	if done {
		delete(w.pending, ci)
	}
	w.mu.Unlock()
	if done {
		return w.finishPartial(ci, pc)
	}
	return nil
}

// finishPartial stores a cluster gathered in memory; what was not
// written is read from the backing file (zeros without one).
func (w *Writer) finishPartial(ci int64, pc *partial) error {
	if w.opt.Backing != nil && pc.n < int64(len(pc.buf)) {
		b := getBuf(len(pc.buf))
		defer putBuf(b)
		if err := readGuest(w.opt.Backing, b, ci*w.cs); err != nil {
			return err
		}
		for _, r := range pc.written {
			copy(b[r[0]:r[1]], pc.buf[r[0]:r[1]])
		}
		copy(pc.buf, b)
	}
	store, err := w.full(ci, pc.buf)
	if err != nil || !store {
		return err
	}
	return w.storeSpans([]span{{ci, pc.buf}})
}

// zeroes marks [off, off+n) as zeros.
func (w *Writer) zeroes(off, n int64) error {
	if w.opt.Backing == nil && !w.buffered {
		return nil
	}
	end := off + n
	for pos := off; pos < end; {
		ci := pos / w.cs
		start := ci * w.cs
		stop := min(start+w.clusterLen(ci), end)
		var err error
		if pos == start && stop == start+w.clusterLen(ci) {
			if w.opt.Backing == nil {
				// Whole clusters of zeros store nothing: on to the
				// last cluster, which the range may cover in part.
				pos = max(stop, end/w.cs*w.cs)
				continue
			}
			_, err = w.full(ci, zeroCluster[:stop-start])
		} else {
			err = w.part(ci, pos-start, zeroCluster[:stop-pos])
		}
		if err != nil {
			return err
		}
		pos = stop
	}
	return nil
}
