package pow

import "math/big"

// Retarget parameters.
const (
	// RetargetInterval is the number of blocks between target changes.
	RetargetInterval = 60
	// TargetSpacing is the intended time between blocks, in seconds.
	TargetSpacing = 60
	// TargetTimespan is the intended duration of a retarget window, in
	// seconds (RetargetInterval × TargetSpacing).
	TargetTimespan = RetargetInterval * TargetSpacing
	// MinTimespan is the lower clamp of the measured timespan, in seconds
	// (TargetTimespan / 4).
	MinTimespan = TargetTimespan / 4
	// MaxTimespan is the upper clamp of the measured timespan, in seconds
	// (TargetTimespan × 4).
	MaxTimespan = TargetTimespan * 4
)

// IsRetargetHeight reports whether a block at this height gets a new target:
// height > 0 and height % RetargetInterval == 0.
func IsRetargetHeight(height uint64) bool {
	return height > 0 && height%RetargetInterval == 0
}

// RetargetWindowStart returns the height of the block whose timestamp starts
// the measured window for a block at this height: max(0, height−61).
func RetargetWindowStart(height uint64) uint64 {
	if height < RetargetInterval+1 {
		return 0
	}
	return height - (RetargetInterval + 1)
}

// ClampedTimespan returns tsPrevBlock − tsWindowStart (0 if negative) clamped
// to [MinTimespan, MaxTimespan].
func ClampedTimespan(tsPrevBlock, tsWindowStart uint64) uint64 {
	var actual uint64
	if tsPrevBlock > tsWindowStart {
		actual = tsPrevBlock - tsWindowStart
	}
	return min(max(actual, MinTimespan), MaxTimespan)
}

// NextCompact returns the compact target of a new block at the given height.
//
// When retarget is false (regtest) or the height is not a retarget height (see
// [IsRetargetHeight]) it returns parentCompact unchanged. Otherwise
// tsPrevBlock must be the timestamp of block height−1 and tsWindowStart that of
// block [RetargetWindowStart](height); the new target is
//
//	parent_target × ClampedTimespan(tsPrevBlock, tsWindowStart) / TargetTimespan
//
// computed exactly, saturated at 2^256−1, capped at powLimit (nil: no cap) and
// encoded with [BigToCompact]. The parent target is decoded as Bitcoin Core
// does, ignoring the flags (the parent was validated when it was accepted).
func NextCompact(height uint64, parentCompact uint32, tsPrevBlock, tsWindowStart uint64, powLimit *big.Int, retarget bool) uint32 {
	if !retarget || !IsRetargetHeight(height) {
		return parentCompact
	}
	target, _, _ := CompactToBig(parentCompact)
	target.Mul(target, new(big.Int).SetUint64(ClampedTimespan(tsPrevBlock, tsWindowStart)))
	target.Quo(target, big.NewInt(TargetTimespan))
	if target.Cmp(maxUint256) > 0 {
		target.Set(maxUint256)
	}
	if powLimit != nil && target.Cmp(powLimit) > 0 {
		target.Set(powLimit)
	}
	return BigToCompact(target)
}
