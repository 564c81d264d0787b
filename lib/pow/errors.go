package pow

import "errors"

// Sentinel errors. Errors returned by this package wrap one of them; match
// with errors.Is.
var (
	// ErrNegativeTarget reports a compact target with the sign bit set.
	ErrNegativeTarget = errors.New("pow: negative target")
	// ErrOverflowTarget reports a compact target that does not fit in 256 bits.
	ErrOverflowTarget = errors.New("pow: target overflows 256 bits")
	// ErrZeroTarget reports a target of zero.
	ErrZeroTarget = errors.New("pow: zero target")
	// ErrTargetAboveLimit reports a target above the network's pow limit.
	ErrTargetAboveLimit = errors.New("pow: target above pow limit")
	// ErrHighHash reports a block hash above its target.
	ErrHighHash = errors.New("pow: block hash above target")
)
