package unpack

import "sync"

// buffers recycles the units' compressed and decompressed buffers: a
// stream of same-sized blocks or frames would otherwise allocate (and
// the runtime zero) tens of MiB per unit, which costs as much as the
// decoding of fast formats.
var buffers sync.Pool

// getBuf is a buffer of length n, recycled when one is large enough.
func getBuf(n int) []byte {
	if b, ok := buffers.Get().(*[]byte); ok {
		if cap(*b) >= n {
			return (*b)[:n]
		}
	}
	return make([]byte, n, n+n/4)
}

// putBuf gives b back for reuse; nobody may use it after.
func putBuf(b []byte) {
	if cap(b) > 0 {
		buffers.Put(&b)
	}
}
