package pow

import (
	"math/big"
	"testing"
)

// testLimit is 0x1e0fffff decoded: 0x0fffff << 208.
var testLimit = new(big.Int).Lsh(big.NewInt(0x0fffff), 8*(0x1e-3))

func TestConstants(t *testing.T) {
	if RetargetInterval != 60 || TargetSpacing != 60 || TargetTimespan != 3600 ||
		MinTimespan != 900 || MaxTimespan != 14400 {
		t.Fatal("retarget constants changed")
	}
}

func TestIsRetargetHeight(t *testing.T) {
	for h, want := range map[uint64]bool{
		0: false, 1: false, 59: false, 60: true, 61: false, 119: false, 120: true,
		6000: true, 6001: false, 60 << 57: true, 60<<57 + 1: false, ^uint64(0): false,
	} {
		if got := IsRetargetHeight(h); got != want {
			t.Errorf("IsRetargetHeight(%d) = %v, want %v", h, got, want)
		}
	}
}

func TestRetargetWindowStart(t *testing.T) {
	for h, want := range map[uint64]uint64{
		0: 0, 1: 0, 60: 0, 61: 0, 62: 1, 120: 59, 180: 119, ^uint64(0): ^uint64(0) - 61,
	} {
		if got := RetargetWindowStart(h); got != want {
			t.Errorf("RetargetWindowStart(%d) = %d, want %d", h, got, want)
		}
	}
}

func TestClampedTimespan(t *testing.T) {
	tests := []struct{ prev, start, want uint64 }{
		{1000, 1000, 900},
		{1000, 2000, 900}, // negative counts as 0
		{0, ^uint64(0), 900},
		{1000 + 899, 1000, 900},
		{1000 + 900, 1000, 900},
		{1000 + 3600, 1000, 3600},
		{1000 + 14400, 1000, 14400},
		{1000 + 14401, 1000, 14400},
		{^uint64(0), 0, 14400},
	}
	for _, tc := range tests {
		if got := ClampedTimespan(tc.prev, tc.start); got != tc.want {
			t.Errorf("ClampedTimespan(%d, %d) = %d, want %d", tc.prev, tc.start, got, tc.want)
		}
	}
}

// Expected values below were computed independently (Python integers).
func TestNextCompactTable(t *testing.T) {
	const base = 1_700_000_000
	tests := []struct {
		parent uint32
		actual int64 // tsPrevBlock - tsWindowStart; negative means prev < start
		want   uint32
	}{
		// On schedule: unchanged.
		{0x1b0404cb, 3600, 0x1b0404cb},
		{0x1d00ffff, 3600, 0x1d00ffff},
		{0x1c0ffff0, 3600, 0x1c0ffff0},
		// Lower clamp: ×1/4.
		{0x1b0404cb, 0, 0x1b010132},
		{0x1b0404cb, 899, 0x1b010132},
		{0x1b0404cb, 900, 0x1b010132},
		{0x1b0404cb, -500, 0x1b010132},
		{0x1d00ffff, 0, 0x1c3fffc0},
		{0x1c0ffff0, 0, 0x1c03fffc},
		// In range.
		{0x1b0404cb, 1800, 0x1b020265},
		{0x1b0404cb, 3601, 0x1b040514},
		{0x1b0404cb, 7200, 0x1b080996},
		{0x1d00ffff, 1800, 0x1c7fff80},
		{0x1d00ffff, 3601, 0x1d010011},
		{0x1d00ffff, 7200, 0x1d01fffe},
		{0x1c0ffff0, 3601, 0x1c100113},
		// Upper clamp: ×4.
		{0x1b0404cb, 14400, 0x1b10132c},
		{0x1b0404cb, 1_000_000_000, 0x1b10132c},
		{0x1d00ffff, 1_000_000_000, 0x1d03fffc},
		{0x1c0ffff0, 1_000_000_000, 0x1c3fffc0},
		// Cap at pow limit (0x1e0fffff).
		{0x1e03ffff, 14400, 0x1e0ffffc}, // just below the limit
		{0x1e040000, 14400, 0x1e0fffff}, // would exceed: capped
		{0x1e0fffff, 14400, 0x1e0fffff},
		{0x1e0fffff, 3601, 0x1e0fffff},
		{0x1e040000, 3600, 0x1e040000},
	}
	for _, tc := range tests {
		prev, start := uint64(base), uint64(base)
		if tc.actual >= 0 {
			prev += uint64(tc.actual)
		} else {
			start += uint64(-tc.actual)
		}
		for _, h := range []uint64{60, 120, 600060} {
			got := NextCompact(h, tc.parent, prev, start, testLimit, true)
			if got != tc.want {
				t.Errorf("NextCompact(h=%d, 0x%08x, actual %d) = 0x%08x, want 0x%08x",
					h, tc.parent, tc.actual, got, tc.want)
			}
		}
	}
}

// TestNextCompactOnSchedule checks that an on-schedule window keeps the
// target, modulo compact rounding, for canonical and non-canonical parents.
func TestNextCompactOnSchedule(t *testing.T) {
	for _, parent := range []uint32{0x1d00ffff, 0x1b0404cb, 0x1a05db8b, 0x1e0fffff, 0x04000080, 0x1c00ff00, 0x03123456} {
		got := NextCompact(120, parent, 10_000+TargetTimespan, 10_000, testLimit, true)
		gt, _, _ := CompactToBig(got)
		pt, _, _ := CompactToBig(parent)
		if gt.Cmp(pt) != 0 {
			t.Errorf("parent 0x%08x: on-schedule retarget gave 0x%08x (%x != %x)", parent, got, gt, pt)
		}
		if canonical := BigToCompact(pt); got != canonical {
			t.Errorf("parent 0x%08x: got 0x%08x, want canonical 0x%08x", parent, got, canonical)
		}
	}
}

func TestNextCompactNoRetarget(t *testing.T) {
	parents := []uint32{0x1d00ffff, 0x207fffff, 0x04000080, 0}
	// Off-schedule heights and height 0 return the parent unchanged, whatever
	// the timestamps.
	for _, h := range []uint64{0, 1, 59, 61, 119, 121, 6001} {
		for _, p := range parents {
			if got := NextCompact(h, p, 1_000_000, 0, testLimit, true); got != p {
				t.Errorf("NextCompact(h=%d, 0x%08x) = 0x%08x, want parent", h, p, got)
			}
		}
	}
	// Regtest never retargets, even at retarget heights, and even with a
	// parent above the limit.
	for _, h := range []uint64{60, 120, 6000} {
		for _, p := range parents {
			if got := NextCompact(h, p, 0, 1_000_000, testLimit, false); got != p {
				t.Errorf("regtest NextCompact(h=%d, 0x%08x) = 0x%08x, want parent", h, p, got)
			}
		}
	}
}

func TestNextCompactSaturates(t *testing.T) {
	// 0xffff << 240 × 4 is about 2^258: the result saturates at 2^256−1,
	// which encodes as 0x2100ffff. (Dividing a saturated product by 3600
	// would instead give 0x1f123456, a smaller target.)
	for _, parent := range []uint32{0x2100ffff, 0x207fffff, 0x20400000} {
		for _, limit := range []*big.Int{nil, new(big.Int).Set(maxUint256)} {
			got := NextCompact(60, parent, 14400, 0, limit, true)
			if got != 0x2100ffff {
				t.Errorf("NextCompact(0x%08x ×4, limit %v) = 0x%08x, want 0x2100ffff", parent, limit, got)
			}
		}
		// The pow limit still caps a saturated result.
		if got := NextCompact(60, parent, 14400, 0, testLimit, true); got != 0x1e0fffff {
			t.Errorf("NextCompact(0x%08x ×4, test limit) = 0x%08x, want 0x1e0fffff", parent, got)
		}
	}
	// 0x20400000 × 4 = 2^256 exactly, one above the maximum: saturates
	// (checked above). 0x203fffff × 4 = 0xfffffc << 232 fits and is not
	// saturated.
	exact := new(big.Int).Lsh(big.NewInt(0x3fffff*4), 8*(0x20-3))
	if exact.Cmp(maxUint256) >= 0 {
		t.Fatal("test setup: 0x203fffff × 4 should fit")
	}
	if got, want := NextCompact(60, 0x203fffff, 14400, 0, nil, true), BigToCompact(exact); got != want {
		t.Errorf("NextCompact(0x203fffff ×4) = 0x%08x, want 0x%08x", got, want)
	}
	// Overflowing parent (Core decodes modulo 2^256): no panic, stays in range.
	for _, p := range []uint32{0xff123456, 0x21010000, 0xffffffff} {
		got := NextCompact(60, p, 14400, 0, nil, true)
		if gt, neg, ovf := CompactToBig(got); neg || ovf || gt.Cmp(maxUint256) > 0 {
			t.Errorf("NextCompact(0x%08x) = 0x%08x invalid", p, got)
		}
	}
}
