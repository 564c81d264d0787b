package pow

import (
	"fmt"
	"math/big"
)

// Compact is a target in Bitcoin's compact "nBits" form: the top byte is a
// base-256 exponent (the length of the number in bytes), bit 0x00800000 is a
// sign bit and the low 23 bits are the mantissa.
type Compact uint32

const (
	compactSignBit  = 0x00800000
	compactMantissa = 0x007fffff
)

// String formats c as 0x followed by 8 lowercase hex digits.
func (c Compact) String() string { return fmt.Sprintf("0x%08x", uint32(c)) }

// Big decodes c; see [CompactToBig].
func (c Compact) Big() (target *big.Int, negative, overflow bool) {
	return CompactToBig(uint32(c))
}

// Target decodes and checks c; see [TargetFromCompact].
func (c Compact) Target(powLimit *big.Int) (*big.Int, error) {
	return TargetFromCompact(uint32(c), powLimit)
}

// Work returns the work of a block with target c; see [Work].
func (c Compact) Work() *big.Int { return Work(uint32(c)) }

var (
	// twoTo256 is 2^256. Never modified.
	twoTo256 = new(big.Int).Lsh(big.NewInt(1), 256)
	// maxUint256 is 2^256-1. Never modified.
	maxUint256 = new(big.Int).Sub(twoTo256, big.NewInt(1))
)

// CompactToBig decodes a compact target the way Bitcoin Core's
// arith_uint256::SetCompact does. It returns the magnitude of the number (never
// negative) and the two flags SetCompact reports:
//
//   - negative: the sign bit is set and the mantissa, after shifting, is not
//     zero;
//   - overflow: the mantissa is not zero and the number is 2^256 or more.
//
// When overflow is set the magnitude is reduced modulo 2^256, as Core's
// 256-bit arithmetic does; such a value must not be used as a target.
func CompactToBig(c uint32) (target *big.Int, negative, overflow bool) {
	size := c >> 24
	word := c & compactMantissa
	target = new(big.Int)
	if size <= 3 {
		word >>= 8 * (3 - size)
		target.SetUint64(uint64(word))
	} else if shift := 8 * (size - 3); shift < 256 {
		target.SetUint64(uint64(word))
		target.Lsh(target, uint(shift))
		if target.BitLen() > 256 {
			target.And(target, maxUint256)
		}
	}
	negative = word != 0 && c&compactSignBit != 0
	overflow = word != 0 && (size > 34 ||
		(word > 0xff && size > 33) ||
		(word > 0xffff && size > 32))
	return target, negative, overflow
}

// BigToCompact encodes t the way Bitcoin Core's arith_uint256::GetCompact
// does: the mantissa keeps the three most significant bytes of |t| (the rest is
// truncated, i.e. rounded down) and never has bit 0x00800000 set. If t is
// negative and the mantissa is not zero, the sign bit is set, as
// GetCompact(fNegative=true) does. A nil or zero t encodes as 0.
//
// Numbers too long to encode (an exponent above 255, i.e. |t| of 2^2032 or
// more, impossible for 256-bit targets) encode as 0xff7fffff, with the sign
// bit added when t is negative.
func BigToCompact(t *big.Int) uint32 {
	if t == nil || t.Sign() == 0 {
		return 0
	}
	negative := t.Sign() < 0
	mag := t
	if negative {
		mag = new(big.Int).Neg(t)
	}
	size := uint32((mag.BitLen() + 7) / 8)
	var compact uint32
	if size <= 3 {
		compact = uint32(mag.Uint64()) << (8 * (3 - size))
	} else {
		compact = uint32(new(big.Int).Rsh(mag, uint(8*(size-3))).Uint64())
	}
	if compact&compactSignBit != 0 {
		compact >>= 8
		size++
	}
	if size > 0xff {
		compact = 0xff<<24 | compactMantissa
	} else {
		compact |= size << 24
	}
	if negative && compact&compactMantissa != 0 {
		compact |= compactSignBit
	}
	return compact
}

// TargetFromCompact decodes c and checks that it is a usable target: not
// negative ([ErrNegativeTarget]), not overflowing ([ErrOverflowTarget]), not
// zero ([ErrZeroTarget]) and not above powLimit ([ErrTargetAboveLimit]), in
// that order. A nil powLimit means no limit other than 256 bits.
func TargetFromCompact(c uint32, powLimit *big.Int) (*big.Int, error) {
	target, negative, overflow := CompactToBig(c)
	switch {
	case negative:
		return nil, fmt.Errorf("%w: compact 0x%08x", ErrNegativeTarget, c)
	case overflow:
		return nil, fmt.Errorf("%w: compact 0x%08x", ErrOverflowTarget, c)
	case target.Sign() == 0:
		return nil, fmt.Errorf("%w: compact 0x%08x", ErrZeroTarget, c)
	case powLimit != nil && target.Cmp(powLimit) > 0:
		return nil, fmt.Errorf("%w: compact 0x%08x, target %064x, limit %064x",
			ErrTargetAboveLimit, c, target, powLimit)
	}
	return target, nil
}
