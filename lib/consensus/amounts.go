package consensus

import (
	"math/bits"

	"github.com/cointoolkit/coin/lib/amount"
)

// Amounts, in subunits. The unit (amount.Coin) and the supply cap that bounds any single
// amount and any sum (amount.MaxMoney) are lib/amount's, the one leaf package that owns units.
const (
	InitialSubsidy   = 50 * amount.Coin
	HalvingInterval  = 210_000
	CoinbaseMaturity = 100
	// PoolReleaseBasisPoints of the decay pool (out of 10,000) are released per block.
	PoolReleaseBasisPoints = 100

	MaxTxSize      = 100_000
	MaxTxInputs    = 1_000
	MaxTxOutputs   = 1_000
	MaxBlockSize   = 1_048_576
	MaxFutureDrift = 15 * 60 // seconds, on mainnet and testnet (params.Network.MaxFutureDrift)
	MedianTimeSpan = 11
	// LockTimeThreshold separates lock times that are heights from unix times.
	LockTimeThreshold = 500_000_000
	BlockVersion      = 1
	TxVersion         = 1
)

// Subsidy is 50 COIN shifted right once per 210,000 blocks, zero from 64 halvings on.
func Subsidy(height uint64) uint64 {
	halvings := height / HalvingInterval
	if halvings >= 64 {
		return 0
	}
	return InitialSubsidy >> halvings
}

// PoolRelease is what a block may take from the decay pool: pool × 100 / 10,000 of the pool
// after the parent block.
func PoolRelease(pool uint64) uint64 {
	hi, lo := bits.Mul64(pool, PoolReleaseBasisPoints)
	q, _ := bits.Div64(hi, lo, 10_000)
	return q
}

// MaxCoinbaseValue is subsidy + fees + release, the most a coinbase may pay.
func MaxCoinbaseValue(height, fees, pool uint64) (uint64, error) {
	v, ok := addChecked(Subsidy(height), fees)
	if ok {
		v, ok = addChecked(v, PoolRelease(pool))
	}
	if !ok {
		return 0, ruleError(ErrValueOverflow, "coinbase limit overflows")
	}
	return v, nil
}

func addChecked(a, b uint64) (uint64, bool) {
	s, carry := bits.Add64(a, b, 0)
	return s, carry == 0
}

// SumOutputs adds the outputs' values, failing with ErrValueOverflow past amount.MaxMoney.
func SumOutputs(values func(i int) uint64, n int) (uint64, error) {
	var total uint64
	for i := 0; i < n; i++ {
		v := values(i)
		if v > amount.MaxMoney {
			return 0, ruleError(ErrValueOverflow, "output %d value %d exceeds the maximum", i, v)
		}
		var ok bool
		if total, ok = addChecked(total, v); !ok || total > amount.MaxMoney {
			return 0, ruleError(ErrValueOverflow, "total output value exceeds the maximum")
		}
	}
	return total, nil
}
