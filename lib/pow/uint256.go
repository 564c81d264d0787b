package pow

import (
	"encoding/binary"
	"math/big"
	"math/bits"
)

// Uint256 is an unsigned 256-bit integer held inline (no heap), least significant word
// first: the cumulative work of a chain without a *big.Int per block.
type Uint256 [4]uint64

// uint256Max is 2^256 − 1.
var uint256Max = Uint256{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}

// Uint256FromBig is x as a Uint256: 0 for a nil or negative x, 2^256 − 1 for x ≥ 2^256.
func Uint256FromBig(x *big.Int) Uint256 {
	var u Uint256
	if x == nil || x.Sign() <= 0 {
		return u
	}
	if x.BitLen() > 256 {
		return uint256Max
	}
	var b [32]byte
	x.FillBytes(b[:])
	for i := range 4 {
		u[i] = binary.BigEndian.Uint64(b[24-8*i:])
	}
	return u
}

// Big is u as a new *big.Int.
func (u Uint256) Big() *big.Int {
	var b [32]byte
	for i := range 4 {
		binary.BigEndian.PutUint64(b[24-8*i:], u[i])
	}
	return new(big.Int).SetBytes(b[:])
}

// Add is u + v, exact below 2^256; a sum of 2^256 or more saturates to 2^256 − 1 (cumulative
// work never comes near it: a single block's work is below 2^256 and 2^256 hashes are out of
// reach).
func (u Uint256) Add(v Uint256) Uint256 {
	var s Uint256
	var c uint64
	s[0], c = bits.Add64(u[0], v[0], 0)
	s[1], c = bits.Add64(u[1], v[1], c)
	s[2], c = bits.Add64(u[2], v[2], c)
	s[3], c = bits.Add64(u[3], v[3], c)
	if c != 0 {
		return uint256Max
	}
	return s
}

// Cmp compares u and v: -1 when u < v, 0 when equal, +1 when u > v.
func (u Uint256) Cmp(v Uint256) int {
	for i := 3; i >= 0; i-- {
		switch {
		case u[i] < v[i]:
			return -1
		case u[i] > v[i]:
			return 1
		}
	}
	return 0
}

// IsZero reports whether u is 0.
func (u Uint256) IsZero() bool { return u == Uint256{} }

// String is u in decimal.
func (u Uint256) String() string { return u.Big().String() }

// Work256 is Work(compact) as a Uint256 (exact: Work is below 2^256 for every compact value).
func Work256(compact uint32) Uint256 { return Uint256FromBig(Work(compact)) }
