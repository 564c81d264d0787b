package consensus_test

import (
	"math"
	"math/big"
	"testing"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
)

const coin = amount.Coin

func TestSubsidy(t *testing.T) {
	tests := []struct {
		height uint64
		want   uint64
	}{
		{0, 50 * coin},
		{1, 50 * coin},
		{209_999, 50 * coin},
		{210_000, 25 * coin},
		{419_999, 25 * coin},
		{420_000, 1_250_000_000},  // 12.5
		{630_000, 625_000_000},    // 6.25
		{840_000, 312_500_000},    // 3.125
		{1_050_000, 156_250_000},  // 1.5625
		{1_260_000, 78_125_000},   // 0.78125
		{33 * 210_000, 0},         // 5e9 >> 33 = 0 (all shifted out)
		{32 * 210_000, 1},         // 5e9 >> 32 = 1 subunit
		{63*210_000 + 209_999, 0}, // last era before the cut-off
		{64 * 210_000, 0},
		{64*210_000 + 1, 0},
		{math.MaxUint64, 0},
	}
	for _, tc := range tests {
		if got := consensus.Subsidy(tc.height); got != tc.want {
			t.Errorf("Subsidy(%d) = %d, want %d", tc.height, got, tc.want)
		}
	}
}

func TestTotalSupplyBound(t *testing.T) {
	// Σ over all heights of the subsidy, by eras: each era is HalvingInterval blocks of one value.
	total := new(big.Int)
	for era := uint64(0); era < 70; era++ {
		first, last := era*consensus.HalvingInterval, (era+1)*consensus.HalvingInterval-1
		s := consensus.Subsidy(first)
		if consensus.Subsidy(last) != s {
			t.Fatalf("subsidy changes inside era %d", era)
		}
		if era > 0 && s > consensus.Subsidy(first-1) {
			t.Fatalf("subsidy rises at era %d", era)
		}
		if era >= 64 && s != 0 {
			t.Fatalf("era %d pays %d", era, s)
		}
		total.Add(total, new(big.Int).Mul(new(big.Int).SetUint64(s), big.NewInt(consensus.HalvingInterval)))
	}
	if total.Cmp(new(big.Int).SetUint64(amount.MaxMoney)) > 0 {
		t.Fatalf("total subsidy %s exceeds %d", total, amount.MaxMoney)
	}
	// 20,999,999.9769 COIN, the same schedule as Bitcoin's.
	if total.Uint64() != 2_099_999_997_690_000 {
		t.Fatalf("total subsidy %s", total)
	}
	if amount.MaxMoney != 21_000_000*coin {
		t.Fatalf("MaxMoney %d", amount.MaxMoney)
	}
}

func TestPoolRelease(t *testing.T) {
	tests := []struct{ pool, want uint64 }{
		{0, 0},
		{1, 0},
		{99, 0},
		{100, 1},
		{199, 1},
		{200, 2},
		{10_000, 100},
		{123_456_789, 1_234_567},
		{amount.MaxMoney, amount.MaxMoney / 100},
		// pool × 100 overflows 64 bits; the 128-bit product must not.
		{math.MaxUint64, math.MaxUint64 / 100},
		{math.MaxUint64 - 50, (math.MaxUint64 - 50) / 100},
		{1 << 63, (1 << 63) / 100},
	}
	for _, tc := range tests {
		if got := consensus.PoolRelease(tc.pool); got != tc.want {
			t.Errorf("PoolRelease(%d) = %d, want %d", tc.pool, got, tc.want)
		}
		// Cross-check against big integers: ⌊pool × 100 / 10,000⌋.
		want := new(big.Int).SetUint64(tc.pool)
		want.Mul(want, big.NewInt(consensus.PoolReleaseBasisPoints)).Quo(want, big.NewInt(10_000))
		if want.Uint64() != consensus.PoolRelease(tc.pool) {
			t.Errorf("PoolRelease(%d) disagrees with big.Int %s", tc.pool, want)
		}
	}
}

func TestMaxCoinbaseValue(t *testing.T) {
	v, err := consensus.MaxCoinbaseValue(0, 0, 0)
	noErr(t, err)
	if v != 50*coin {
		t.Fatalf("got %d", v)
	}
	v, err = consensus.MaxCoinbaseValue(210_000, 1234, 10_000)
	noErr(t, err)
	if v != 25*coin+1234+100 {
		t.Fatalf("got %d", v)
	}
	v, err = consensus.MaxCoinbaseValue(64*210_000, 7, 99)
	noErr(t, err)
	if v != 7 {
		t.Fatalf("got %d", v)
	}
	v, err = consensus.MaxCoinbaseValue(64*210_000, math.MaxUint64, 99)
	noErr(t, err)
	if v != math.MaxUint64 {
		t.Fatalf("got %d", v)
	}
	_, err = consensus.MaxCoinbaseValue(0, math.MaxUint64-50*coin+1, 0)
	wantKind(t, err, consensus.ErrValueOverflow)
	_, err = consensus.MaxCoinbaseValue(64*210_000, math.MaxUint64, 100)
	wantKind(t, err, consensus.ErrValueOverflow)
}

func TestSumOutputs(t *testing.T) {
	vals := []uint64{1, 2, 3}
	s, err := consensus.SumOutputs(func(i int) uint64 { return vals[i] }, len(vals))
	noErr(t, err)
	if s != 6 {
		t.Fatalf("sum %d", s)
	}
	s, err = consensus.SumOutputs(nil, 0)
	noErr(t, err)
	if s != 0 {
		t.Fatalf("empty sum %d", s)
	}
	vals = []uint64{amount.MaxMoney - 1, 1}
	s, err = consensus.SumOutputs(func(i int) uint64 { return vals[i] }, len(vals))
	noErr(t, err)
	if s != amount.MaxMoney {
		t.Fatalf("sum %d", s)
	}
	for _, bad := range [][]uint64{
		{amount.MaxMoney + 1},
		{amount.MaxMoney, 1},
		{math.MaxUint64},
		{1, math.MaxUint64},
	} {
		_, err := consensus.SumOutputs(func(i int) uint64 { return bad[i] }, len(bad))
		wantKind(t, err, consensus.ErrValueOverflow)
	}
}
