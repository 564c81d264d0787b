package types

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"lukechampine.com/blake3"
)

// Hash is a 32-byte hash: a txid, a block hash, a pubkey hash or a cluster id.
type Hash [32]byte

// ZeroHash is the all-zero hash.
var ZeroHash Hash

// String is the lowercase hex of the bytes in order.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// MarshalText implements encoding.TextMarshaler (JSON strings of hex).
func (h Hash) MarshalText() ([]byte, error) {
	b := make([]byte, 64)
	hex.Encode(b, h[:])
	return b, nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (h *Hash) UnmarshalText(b []byte) error {
	p, err := ParseHash(string(b))
	if err != nil {
		return err
	}
	*h = p
	return nil
}

// IsZero reports whether every byte is zero.
func (h Hash) IsZero() bool { return h == ZeroHash }

// ParseHash parses 64 hex characters (either case).
func ParseHash(s string) (Hash, error) {
	var h Hash
	if len(s) != 64 {
		return h, fmt.Errorf("invalid hash: want 64 hex characters, got %d", len(s))
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, fmt.Errorf("invalid hash: not hex")
	}
	return h, nil
}

// Blake3 is BLAKE3-256 of b.
func Blake3(b []byte) Hash { return blake3.Sum256(b) }

// DoubleSHA256 is SHA-256(SHA-256(b)).
func DoubleSHA256(b []byte) Hash {
	first := sha256.Sum256(b)
	return sha256.Sum256(first[:])
}
