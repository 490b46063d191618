package ring

import (
	"unsafe"
)

// Probe says which opcodes this kernel supports.
type Probe struct {
	lastOp    uint8
	supported [probeMaxOps]bool
}

// probeOp is struct io_uring_probe_op.
type probeOp struct {
	Op    uint8
	_     uint8
	Flags uint16
	_     uint32
}

// probeBuf is struct io_uring_probe followed by room for every opcode.
type probeBuf struct {
	LastOp uint8
	OpsLen uint8
	_      uint16
	_      [3]uint32
	Ops    [probeMaxOps]probeOp
}

var _ [probeHeaderSize + probeOpSize*probeMaxOps - unsafe.Sizeof(probeBuf{})]struct{}

// Probe asks the kernel which opcodes it supports (REGISTER_PROBE, 5.6+).
// An EINVAL error means an older kernel: assume the 5.1 opcodes only.
func (r *Ring) Probe() (*Probe, error) {
	var buf probeBuf
	if _, err := r.register("probe", registerProbe, unsafe.Pointer(&buf), probeMaxOps); err != nil {
		return nil, err
	}
	p := &Probe{lastOp: buf.LastOp}
	for _, op := range buf.Ops[:buf.OpsLen] {
		p.supported[op.Op] = op.Flags&probeOpSupported != 0
	}
	return p, nil
}

// Supports reports whether op is supported.
func (p *Probe) Supports(op uint8) bool {
	return p != nil && p.supported[op]
}

// LastOp is the highest opcode this kernel knows.
func (p *Probe) LastOp() uint8 { return p.lastOp }
