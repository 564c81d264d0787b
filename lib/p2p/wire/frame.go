package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"lukechampine.com/blake3"
)

// Frame layout: magic (4) ‖ command (12, ASCII, NUL padded) ‖ payload length (u32 LE) ‖
// checksum (the first 4 bytes of BLAKE3(payload)) ‖ payload.
const (
	HeaderSize     = 24
	CommandSize    = 12
	MaxPayloadSize = 4 << 20
)

// Frame errors. A peer that sends any of them is misbehaving.
var (
	ErrBadMagic    = errors.New("wire: wrong network magic")
	ErrBadCommand  = errors.New("wire: malformed command")
	ErrOversize    = errors.New("wire: payload too large")
	ErrBadChecksum = errors.New("wire: bad checksum")
)

// FrameHeader is a decoded frame header.
type FrameHeader struct {
	Magic    [4]byte
	Command  string
	Length   uint32
	Checksum [4]byte
}

// Checksum is the first 4 bytes of BLAKE3(payload).
func Checksum(payload []byte) [4]byte {
	sum := blake3.Sum256(payload)
	return [4]byte(sum[:4])
}

// EncodeFrameRaw builds a frame around an already encoded payload.
func EncodeFrameRaw(magic [4]byte, cmd string, payload []byte) []byte {
	if len(cmd) == 0 || len(cmd) > CommandSize {
		panic("wire: bad command " + cmd)
	}
	f := make([]byte, HeaderSize+len(payload))
	copy(f[0:4], magic[:])
	copy(f[4:16], cmd)
	binary.LittleEndian.PutUint32(f[16:20], uint32(len(payload)))
	sum := Checksum(payload)
	copy(f[20:24], sum[:])
	copy(f[HeaderSize:], payload)
	return f
}

// ParseHeader decodes and checks a 24-byte frame header: the magic must be want, the command
// lowercase ASCII letters and digits followed only by NULs, the length within
// MaxPayloadSize and within the command's own bound.
func ParseHeader(b []byte, want [4]byte) (FrameHeader, error) {
	var h FrameHeader
	if len(b) != HeaderSize {
		return h, fmt.Errorf("%w: header of %d bytes", ErrBadCommand, len(b))
	}
	copy(h.Magic[:], b[0:4])
	if h.Magic != want {
		return h, fmt.Errorf("%w: got %q, want %q", ErrBadMagic, Printable(h.Magic[:]), Printable(want[:]))
	}
	cmd, err := parseCommand(b[4:16])
	if err != nil {
		return h, err
	}
	h.Command = cmd
	h.Length = binary.LittleEndian.Uint32(b[16:20])
	copy(h.Checksum[:], b[20:24])
	if limit := MaxPayload(cmd); h.Length > limit {
		return h, fmt.Errorf("%w: %s of %d bytes (limit %d)", ErrOversize, cmd, h.Length, limit)
	}
	return h, nil
}

func parseCommand(b []byte) (string, error) {
	n := 0
	for n < len(b) && b[n] != 0 {
		c := b[n]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return "", fmt.Errorf("%w: byte 0x%02x", ErrBadCommand, c)
		}
		n++
	}
	if n == 0 {
		return "", fmt.Errorf("%w: empty", ErrBadCommand)
	}
	for _, c := range b[n:] {
		if c != 0 {
			return "", fmt.Errorf("%w: data after the NUL padding", ErrBadCommand)
		}
	}
	return string(b[:n]), nil
}

// Printable shows bytes (a magic, say) as ASCII, '?' for anything unprintable.
func Printable(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			c = '?'
		}
		out[i] = c
	}
	return string(out)
}

// VerifyChecksum checks a payload against its frame header.
func VerifyChecksum(h FrameHeader, payload []byte) error {
	if uint32(len(payload)) != h.Length {
		return fmt.Errorf("%w: %d payload bytes, header says %d", ErrBadChecksum, len(payload), h.Length)
	}
	if Checksum(payload) != h.Checksum {
		return fmt.Errorf("%w: %s payload", ErrBadChecksum, h.Command)
	}
	return nil
}

// ReadFrame reads one whole frame from r and checks it. The payload buffer grows with the
// bytes that actually arrive, so a length prefix alone allocates nothing large.
func ReadFrame(r io.Reader, magic [4]byte) (FrameHeader, []byte, error) {
	var hb [HeaderSize]byte
	if _, err := io.ReadFull(r, hb[:]); err != nil {
		return FrameHeader{}, nil, err
	}
	h, err := ParseHeader(hb[:], magic)
	if err != nil {
		return h, nil, err
	}
	payload, err := ReadPayload(r, h.Length)
	if err != nil {
		return h, nil, err
	}
	return h, payload, VerifyChecksum(h, payload)
}

// ReadPayload reads exactly n bytes, growing its buffer in steps of at most 64 KiB.
func ReadPayload(r io.Reader, n uint32) ([]byte, error) {
	const step = 64 << 10
	buf := make([]byte, 0, min(int(n), step))
	for len(buf) < int(n) {
		if len(buf) == cap(buf) {
			nb := make([]byte, len(buf), min(int(n), 2*cap(buf)+step))
			copy(nb, buf)
			buf = nb
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err != nil && len(buf) < int(n) {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	return buf, nil
}
