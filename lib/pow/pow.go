package pow

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/big"
)

// HeaderSize is the length in bytes of a serialized block header.
const HeaderSize = 88

// DoubleSHA256 returns SHA-256(SHA-256(data)). Applied to the HeaderSize-byte
// header it gives the block hash. It does not allocate.
func DoubleSHA256(data []byte) [32]byte {
	first := sha256.Sum256(data)
	return sha256.Sum256(first[:])
}

// HashToBig reads a hash as a big-endian 256-bit unsigned integer.
func HashToBig(h [32]byte) *big.Int {
	return new(big.Int).SetBytes(h[:])
}

// TargetBytes returns t as 32 big-endian bytes, the form [HashMeetsTarget]
// takes. A t of 2^256 or more saturates to 32 0xff bytes; a nil or negative t
// gives 32 zero bytes.
func TargetBytes(t *big.Int) [32]byte {
	var out [32]byte
	switch {
	case t == nil || t.Sign() <= 0:
	case t.BitLen() > 256:
		for i := range out {
			out[i] = 0xff
		}
	default:
		t.FillBytes(out[:])
	}
	return out
}

// HashMeetsTarget reports whether hash ≤ target, both read as big-endian
// 256-bit unsigned integers. It does not allocate. Both pointers must be
// non-nil.
func HashMeetsTarget(hash *[32]byte, target *[32]byte) bool {
	for i := 0; i < 32; i += 8 {
		h := binary.BigEndian.Uint64(hash[i : i+8])
		t := binary.BigEndian.Uint64(target[i : i+8])
		if h != t {
			return h < t
		}
	}
	return true
}

// CheckProofOfWork checks that compact is a usable target (see
// [TargetFromCompact]) and that hash, read as a big-endian integer, is at most
// that target. A nil powLimit means no limit other than 256 bits. Errors wrap
// [ErrNegativeTarget], [ErrOverflowTarget], [ErrZeroTarget],
// [ErrTargetAboveLimit] or [ErrHighHash].
func CheckProofOfWork(hash [32]byte, compact uint32, powLimit *big.Int) error {
	target, err := TargetFromCompact(compact, powLimit)
	if err != nil {
		return err
	}
	tb := TargetBytes(target)
	if !HashMeetsTarget(&hash, &tb) {
		return fmt.Errorf("%w: hash %x, target %x (compact 0x%08x)",
			ErrHighHash, hash[:], tb[:], compact)
	}
	return nil
}

// Work returns the work of a block with the given compact target:
// 2^256 / (target+1), rounded down, as Bitcoin Core's GetBlockProof computes
// it. It returns 0 when the compact value is negative, overflows or decodes to
// zero. The pow limit is not checked. The result is a new *big.Int that the
// caller may modify.
func Work(compact uint32) *big.Int {
	target, negative, overflow := CompactToBig(compact)
	if negative || overflow {
		return new(big.Int)
	}
	return WorkFromTarget(target)
}

// WorkFromTarget returns 2^256 / (target+1), rounded down, for a target in
// [1, 2^256). It returns 0 for a nil, zero, negative or too large target.
func WorkFromTarget(target *big.Int) *big.Int {
	if target == nil || target.Sign() <= 0 || target.BitLen() > 256 {
		return new(big.Int)
	}
	d := new(big.Int).Add(target, big.NewInt(1))
	return d.Quo(twoTo256, d)
}
