package nbd

import (
	"encoding/binary"
	"fmt"
)

// Pure encoding and decoding of NBD messages. Nothing here does I/O, so
// every function is tested on bytes alone (wire_test.go, fuzz_test.go).

var be = binary.BigEndian

// request is one transmission request header.
type request struct {
	flags  uint16
	cmd    uint16
	cookie uint64
	off    uint64
	length uint32
}

// putRequest encodes r into b, which has requestHeaderLen bytes.
func putRequest(b []byte, r request) {
	be.PutUint32(b[0:], magicRequest)
	be.PutUint16(b[4:], r.flags)
	be.PutUint16(b[6:], r.cmd)
	be.PutUint64(b[8:], r.cookie)
	be.PutUint64(b[16:], r.off)
	be.PutUint32(b[24:], r.length)
}

// chunk is a structured reply chunk header (after its magic).
type chunk struct {
	flags  uint16
	typ    uint16
	cookie uint64
	length uint32
}

// parseChunk decodes the 16 bytes that follow a structured reply's magic.
func parseChunk(b []byte) chunk {
	return chunk{
		flags:  be.Uint16(b[0:]),
		typ:    be.Uint16(b[2:]),
		cookie: be.Uint64(b[4:]),
		length: be.Uint32(b[12:]),
	}
}

// appendOption encodes one option request: IHAVEOPT, option, length, data.
func appendOption(b []byte, opt uint32, data []byte) []byte {
	b = be.AppendUint64(b, magicOpt)
	b = be.AppendUint32(b, opt)
	b = be.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

// goData is the payload of NBD_OPT_GO: the export name and the
// information requests.
func goData(export string, infos ...uint16) []byte {
	b := be.AppendUint32(nil, uint32(len(export)))
	b = append(b, export...)
	b = be.AppendUint16(b, uint16(len(infos)))
	for _, i := range infos {
		b = be.AppendUint16(b, i)
	}
	return b
}

// metaData is the payload of NBD_OPT_SET_META_CONTEXT.
func metaData(export string, queries ...string) []byte {
	b := be.AppendUint32(nil, uint32(len(export)))
	b = append(b, export...)
	b = be.AppendUint32(b, uint32(len(queries)))
	for _, q := range queries {
		b = be.AppendUint32(b, uint32(len(q)))
		b = append(b, q...)
	}
	return b
}

// optReply is an option reply header (magicOptReply checked by the parser).
type optReply struct {
	opt    uint32
	typ    uint32
	length uint32
}

// parseOptReply decodes an option reply header of optReplyHeadLen bytes.
func parseOptReply(b []byte) (optReply, error) {
	if m := be.Uint64(b); m != magicOptReply {
		return optReply{}, protoErrorf("option reply magic 0x%x, want 0x%x", m, uint64(magicOptReply))
	}
	r := optReply{opt: be.Uint32(b[8:]), typ: be.Uint32(b[12:]), length: be.Uint32(b[16:])}
	if r.length > maxOptReply {
		return r, protoErrorf("option reply of %d bytes (more than %d)", r.length, maxOptReply)
	}
	return r, nil
}

// exportInfo is what NBD_INFO_EXPORT (or NBD_OPT_EXPORT_NAME) says.
type exportInfo struct {
	size  uint64
	flags uint16
}

// parseInfo decodes an NBD_REP_INFO payload into ei or bs; info types we
// did not ask for are ignored, as the spec requires.
func parseInfo(p []byte, ei *exportInfo, bs *BlockSize) (gotExport bool, err error) {
	if len(p) < 2 {
		return false, protoErrorf("NBD_REP_INFO of %d bytes", len(p))
	}
	switch typ := be.Uint16(p); typ {
	case infoExport:
		if len(p) != 12 {
			return false, protoErrorf("NBD_INFO_EXPORT of %d bytes, want 12", len(p))
		}
		ei.size, ei.flags = be.Uint64(p[2:]), be.Uint16(p[10:])
		return true, nil
	case infoBlockSize:
		if len(p) != 14 {
			return false, protoErrorf("NBD_INFO_BLOCK_SIZE of %d bytes, want 14", len(p))
		}
		*bs = BlockSize{Min: be.Uint32(p[2:]), Preferred: be.Uint32(p[6:]), Max: be.Uint32(p[10:]), Advertised: true}
		return false, bs.check()
	}
	return false, nil
}

// parseMetaContext decodes an NBD_REP_META_CONTEXT payload.
func parseMetaContext(p []byte) (id uint32, name string, err error) {
	if len(p) < 4 {
		return 0, "", protoErrorf("NBD_REP_META_CONTEXT of %d bytes", len(p))
	}
	return be.Uint32(p), string(p[4:]), nil
}

// errorChunk is an error chunk's payload.
type errorChunk struct {
	errno     uint32
	msg       string
	off       uint64
	hasOffset bool
}

// parseErrorChunk decodes an error chunk of type typ (bit 15 set). Types
// we do not know are read like NBD_REPLY_TYPE_ERROR, as the spec says.
func parseErrorChunk(typ uint16, p []byte) (errorChunk, error) {
	if len(p) < 6 {
		return errorChunk{}, protoErrorf("error chunk of %d bytes (less than 6)", len(p))
	}
	e := errorChunk{errno: be.Uint32(p)}
	n := int(be.Uint16(p[4:]))
	rest := p[6:]
	if n > len(rest) {
		return e, protoErrorf("error message of %d bytes in a %d-byte chunk", n, len(p))
	}
	e.msg, rest = string(rest[:n]), rest[n:]
	if e.errno == 0 {
		return e, protoErrorf("error chunk with error 0")
	}
	if typ == chunkErrorOffset {
		if len(rest) != 8 {
			return e, protoErrorf("NBD_REPLY_TYPE_ERROR_OFFSET with %d bytes after the message, want 8", len(rest))
		}
		e.off, e.hasOffset = be.Uint64(rest), true
	}
	return e, nil
}

// statusExtent is one raw block status descriptor.
type statusExtent struct {
	length uint32
	flags  uint32
}

// parseBlockStatus decodes a NBD_REPLY_TYPE_BLOCK_STATUS payload for a
// request of reqLen bytes. The sum of every extent but the last must stay
// below reqLen (the last may reach past it); lengths are nonzero.
func parseBlockStatus(p []byte, reqLen uint32) (id uint32, ext []statusExtent, err error) {
	if len(p) < 12 || (len(p)-4)%8 != 0 {
		return 0, nil, protoErrorf("block status chunk of %d bytes (want 4 + a positive multiple of 8)", len(p))
	}
	id = be.Uint32(p)
	var sum uint64
	for q := p[4:]; len(q) > 0; q = q[8:] {
		if sum >= uint64(reqLen) {
			return id, nil, protoErrorf("block status extents go past the %d bytes asked for", reqLen)
		}
		e := statusExtent{length: be.Uint32(q), flags: be.Uint32(q[4:])}
		if e.length == 0 {
			return id, nil, protoErrorf("block status extent of length 0")
		}
		sum += uint64(e.length)
		ext = append(ext, e)
	}
	return id, ext, nil
}

// within reports whether [off, off+n) lies inside [reqOff, reqOff+reqLen),
// without overflow.
func within(off, n, reqOff uint64, reqLen uint32) bool {
	if off < reqOff {
		return false
	}
	rel := off - reqOff
	return rel <= uint64(reqLen) && n <= uint64(reqLen)-rel
}

// cmdName names a command for errors.
func cmdName(cmd uint16) string {
	switch cmd {
	case cmdRead:
		return "read"
	case cmdWrite:
		return "write"
	case cmdDisc:
		return "disconnect"
	case cmdFlush:
		return "flush"
	case cmdTrim:
		return "trim"
	case cmdWriteZeroes:
		return "write zeroes"
	case cmdBlockStatus:
		return "block status"
	}
	return fmt.Sprintf("command %d", cmd)
}
