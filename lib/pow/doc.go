// Package pow implements the pure proof-of-work rules of the coin: the
// compact ("nBits") target encoding, the proof-of-work check, block work and
// the difficulty retarget rule.
//
// The package has no state and depends only on the standard library, so the
// node, the miner and the wallet can all import it.
//
// # Overview
//
// A block hash is SHA-256(SHA-256(header)) of the 88-byte block header (see
// [DoubleSHA256]). It is printed as plain hex in byte order, with no byte
// reversal. For proof of work the 32 hash bytes are read as a big-endian
// 256-bit unsigned integer ([HashToBig]). A block is valid when that integer is
// less than or equal to the block's target.
//
// The target is stored in the header field difficulty_target in Bitcoin's
// compact form ([Compact]). [CompactToBig] and [BigToCompact] follow Bitcoin
// Core's arith_uint256::SetCompact and GetCompact exactly, including the sign
// bit (0x00800000) and the overflow rule. [TargetFromCompact] decodes a compact
// value and checks that it can be used as a target: not negative, no overflow,
// not zero and not above the network's pow_limit. [CheckProofOfWork] combines
// that check with the hash comparison.
//
// Miners compare many hashes against one target. They can convert the target
// once with [TargetBytes] and then call [HashMeetsTarget], which compares two
// 32-byte big-endian values without allocating.
//
// The work of a block is 2^256 / (target+1), as Bitcoin's GetBlockProof
// computes it ([Work], [WorkFromTarget]). Chain work is the sum of the block
// works, kept as a *big.Int by the caller.
//
// The target changes every [RetargetInterval] blocks. For a block at height h
// with h > 0 and h % 60 == 0 the new target is
//
//	old_target × clamp(ts(h−1) − ts(max(0, h−61)), 900, 14400) / 3600
//
// computed exactly with big integers, saturated at 2^256−1, capped at
// pow_limit and stored in compact form. A timestamp difference that would be
// negative counts as 0 before clamping. At any other height, and on networks
// that never retarget (regtest), the new block uses its parent's compact
// target. See [NextCompact], [IsRetargetHeight], [RetargetWindowStart] and
// [ClampedTimespan].
//
// A nil pow limit means "no limit other than 256 bits" in every function that
// takes one. Consensus code should always pass the network's limit.
//
// # Errors
//
// Target and proof-of-work failures are reported with these sentinel errors.
// Returned errors wrap them with details (the compact value, the hash), so
// match them with [errors.Is]:
//
//   - [ErrNegativeTarget]: the compact value has the sign bit set and a
//     non-zero mantissa.
//   - [ErrOverflowTarget]: the compact value encodes a number of 2^256 or more.
//   - [ErrZeroTarget]: the target decodes to zero.
//   - [ErrTargetAboveLimit]: the target is larger than pow_limit.
//   - [ErrHighHash]: the hash, read as a big-endian integer, is larger than
//     the target.
//
// The checks run in that order, so a compact value that is both negative and
// overflowing reports [ErrNegativeTarget].
//
// Functions that cannot fail do not return errors: [Work] returns 0 for a
// compact value that is negative, overflows or decodes to zero, and
// [NextCompact] never fails.
package pow
