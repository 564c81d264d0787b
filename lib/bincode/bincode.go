package bincode

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Errors of the decoder; every error a Reader returns wraps one of them.
var (
	ErrTruncated  = errors.New("bincode: unexpected end of input")
	ErrNonMinimal = errors.New("bincode: non-minimal varint")
	ErrOverflow   = errors.New("bincode: integer overflows its type")
	ErrBool       = errors.New("bincode: invalid bool")
	ErrLength     = errors.New("bincode: length exceeds remaining input")
	ErrTrailing   = errors.New("bincode: trailing bytes")
	ErrInvalid    = errors.New("bincode: invalid value")
)

const (
	marker16 = 251
	marker32 = 252
	marker64 = 253
)

// VarintSize is the number of bytes the varint form of v takes.
func VarintSize(v uint64) int {
	switch {
	case v < marker16:
		return 1
	case v <= math.MaxUint16:
		return 3
	case v <= math.MaxUint32:
		return 5
	default:
		return 9
	}
}

// Writer appends bincode to a buffer.
type Writer struct {
	buf []byte
}

// NewWriter returns a Writer that appends to buf (which may be nil).
func NewWriter(buf []byte) *Writer { return &Writer{buf: buf} }

// Bytes returns the encoded bytes.
func (w *Writer) Bytes() []byte { return w.buf }

// Len is the number of bytes written so far.
func (w *Writer) Len() int { return len(w.buf) }

// Reset empties the buffer, keeping its capacity.
func (w *Writer) Reset() { w.buf = w.buf[:0] }

// U8 writes one byte.
func (w *Writer) U8(v uint8) { w.buf = append(w.buf, v) }

// Bool writes 0 or 1.
func (w *Writer) Bool(v bool) {
	if v {
		w.buf = append(w.buf, 1)
	} else {
		w.buf = append(w.buf, 0)
	}
}

// Varint writes v in its minimal varint form.
func (w *Writer) Varint(v uint64) { w.buf = AppendVarint(w.buf, v) }

// U16 writes a varint.
func (w *Writer) U16(v uint16) { w.Varint(uint64(v)) }

// U32 writes a varint.
func (w *Writer) U32(v uint32) { w.Varint(uint64(v)) }

// U64 writes a varint.
func (w *Writer) U64(v uint64) { w.Varint(v) }

// Raw writes fixed-size bytes without a length.
func (w *Writer) Raw(b []byte) { w.buf = append(w.buf, b...) }

// VarBytes writes a length and then the bytes.
func (w *Writer) VarBytes(b []byte) {
	w.Varint(uint64(len(b)))
	w.buf = append(w.buf, b...)
}

// AppendVarint appends the minimal varint form of v to buf.
func AppendVarint(buf []byte, v uint64) []byte {
	switch {
	case v < marker16:
		return append(buf, byte(v))
	case v <= math.MaxUint16:
		return binary.LittleEndian.AppendUint16(append(buf, marker16), uint16(v))
	case v <= math.MaxUint32:
		return binary.LittleEndian.AppendUint32(append(buf, marker32), uint32(v))
	default:
		return binary.LittleEndian.AppendUint64(append(buf, marker64), v)
	}
}

// Reader decodes bincode from a byte slice. The first error sticks: later reads return
// zero values and Err reports it.
type Reader struct {
	b   []byte
	off int
	err error
}

// NewReader returns a Reader over b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Err is the first error met, or nil.
func (r *Reader) Err() error { return r.err }

// Remaining is the number of unread bytes.
func (r *Reader) Remaining() int { return len(r.b) - r.off }

// Offset is the number of bytes read so far.
func (r *Reader) Offset() int { return r.off }

// Fail records err (wrapped with the offset) unless an error is already recorded.
func (r *Reader) Fail(err error) {
	if r.err == nil {
		r.err = fmt.Errorf("%w (at byte %d)", err, r.off)
	}
}

// Finish returns the sticky error, or ErrTrailing when bytes remain.
func (r *Reader) Finish() error {
	if r.err != nil {
		return r.err
	}
	if r.off != len(r.b) {
		return fmt.Errorf("%w: %d bytes after the value", ErrTrailing, len(r.b)-r.off)
	}
	return nil
}

func (r *Reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.off {
		r.Fail(ErrTruncated)
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

// U8 reads one byte.
func (r *Reader) U8() uint8 {
	s := r.take(1)
	if s == nil {
		return 0
	}
	return s[0]
}

// Bool reads a byte that must be 0 or 1.
func (r *Reader) Bool() bool {
	s := r.take(1)
	if s == nil {
		return false
	}
	switch s[0] {
	case 0:
		return false
	case 1:
		return true
	}
	r.off--
	r.Fail(ErrBool)
	return false
}

// Varint reads a minimal varint of at most max.
func (r *Reader) Varint(max uint64) uint64 {
	s := r.take(1)
	if s == nil {
		return 0
	}
	var v, min uint64
	switch m := s[0]; m {
	case marker16:
		b := r.take(2)
		if b == nil {
			return 0
		}
		v, min = uint64(binary.LittleEndian.Uint16(b)), marker16
	case marker32:
		b := r.take(4)
		if b == nil {
			return 0
		}
		v, min = uint64(binary.LittleEndian.Uint32(b)), math.MaxUint16+1
	case marker64:
		b := r.take(8)
		if b == nil {
			return 0
		}
		v, min = binary.LittleEndian.Uint64(b), math.MaxUint32+1
	default:
		if m > marker64 {
			r.off--
			r.Fail(ErrInvalid)
			return 0
		}
		v, min = uint64(m), 0
	}
	if v < min {
		r.Fail(ErrNonMinimal)
		return 0
	}
	if v > max {
		r.Fail(ErrOverflow)
		return 0
	}
	return v
}

// U16 reads a varint that must fit a u16.
func (r *Reader) U16() uint16 { return uint16(r.Varint(math.MaxUint16)) }

// U32 reads a varint that must fit a u32.
func (r *Reader) U32() uint32 { return uint32(r.Varint(math.MaxUint32)) }

// U64 reads a varint.
func (r *Reader) U64() uint64 { return r.Varint(math.MaxUint64) }

// Raw reads n bytes into dst (a fixed array's slice).
func (r *Reader) Raw(dst []byte) {
	s := r.take(len(dst))
	if s != nil {
		copy(dst, s)
	}
}

// Len reads a vector length and checks, before anything is allocated, that the remaining
// input can hold that many elements of at least minElem bytes each.
func (r *Reader) Len(minElem int) int {
	n := r.U64()
	if r.err != nil {
		return 0
	}
	if minElem < 1 {
		minElem = 1
	}
	if n > uint64(r.Remaining()/minElem) {
		r.Fail(fmt.Errorf("%w: %d elements", ErrLength, n))
		return 0
	}
	return int(n)
}

// VarBytes reads a length-prefixed byte string of at most max bytes; the result is a
// fresh copy.
func (r *Reader) VarBytes(max int) []byte {
	n := r.Len(1)
	if r.err != nil {
		return nil
	}
	if n > max {
		r.Fail(fmt.Errorf("%w: byte string of %d exceeds %d", ErrOverflow, n, max))
		return nil
	}
	s := r.take(n)
	if s == nil {
		return nil
	}
	out := make([]byte, n)
	copy(out, s)
	return out
}
