// Package wire is the P2P wire format of protocol §12: frames and the messages they carry. It is
// pure (no I/O beyond reading one frame from an io.Reader) and knows only hashes, headers,
// blocks and transactions.
//
// # Overview
//
// A frame is magic (4) ‖ command (12, ASCII, NUL padded) ‖ payload length (u32 LE) ‖
// checksum (the first 4 bytes of BLAKE3(payload)) ‖ payload. The payload is the bincode
// (lib/bincode, strict) of one message; no payload exceeds MaxPayloadSize (4 MiB), and each
// command has its own tighter bound (MaxPayload), checked from the header before the payload
// is read. The messages are version/verack (handshake), ping/pong, getaddr/addr,
// inv/getdata/notfound (InvTx, InvBlock), getheaders/headers (block locator and stop hash,
// at most MaxHeaders headers) and block and tx.
//
// # Errors
//
// ParseHeader and ReadFrame return ErrBadMagic, ErrBadCommand, ErrOversize or
// ErrBadChecksum (wrapped, with details); Decode returns ErrMalformed for a payload that does
// not decode strictly and ErrUnknownCommand for a command it does not know. Every one of
// them but ErrUnknownCommand means the sender misbehaved.
package wire
