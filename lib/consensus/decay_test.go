package consensus_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
)

// decayVector is one case of testdata/decay_vectors.json, written by
// scripts/decay_vectors.py (an independent implementation in Python's exact integers).
type decayVector struct {
	Note           string  `json:"note"`
	Value          uint64  `json:"value"`
	Created        uint64  `json:"created"`
	Spent          uint64  `json:"spent"`
	ClusterBalance uint64  `json:"cluster_balance"`
	Supply         uint64  `json:"supply"`
	Tier           string  `json:"tier"`
	Score          *uint32 `json:"score"`
	Concentration  uint64  `json:"concentration_ppb"`
	Rate           uint64  `json:"rate"`
	Effective      uint64  `json:"effective"`
}

var allTiers = []consensus.Tier{consensus.TierNone, consensus.TierObserver, consensus.TierParticipant,
	consensus.TierContributor, consensus.TierTrusted, consensus.TierExemplary}

func parseTier(t *testing.T, s string) consensus.Tier {
	t.Helper()
	for _, tier := range allTiers {
		if tier.String() == s {
			return tier
		}
	}
	t.Fatalf("unknown tier %q", s)
	return 0
}

func TestDecayVectors(t *testing.T) {
	raw, err := os.ReadFile("testdata/decay_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []decayVector
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 400 {
		t.Fatalf("%d cases; the script writes more than 400", len(cases))
	}
	seen := map[string]bool{}
	for i, c := range cases {
		name := fmt.Sprintf("case %d (%s)", i, c.Note)
		tier := parseTier(t, c.Tier)
		seen[c.Tier] = true
		if c.Score != nil {
			if got := consensus.TierOf(*c.Score); got != tier {
				t.Errorf("%s: TierOf(%d) = %v, want %q", name, *c.Score, got, c.Tier)
			}
		} else if tier != consensus.TierNone {
			t.Errorf("%s: tier %q without a score", name, c.Tier)
		}
		if got := consensus.Concentration(c.ClusterBalance, c.Supply); got != c.Concentration {
			t.Errorf("%s: Concentration(%d, %d) = %d, want %d", name, c.ClusterBalance, c.Supply, got, c.Concentration)
		}
		if got := consensus.DecayRate(c.Concentration, tier); got != c.Rate {
			t.Errorf("%s: DecayRate(%d, %v) = %d, want %d", name, c.Concentration, tier, got, c.Rate)
		}
		if c.Spent < c.Created {
			t.Fatalf("%s: spent before created", name)
		}
		if got := consensus.EffectiveValue(c.Value, c.Rate, c.Spent-c.Created); got != c.Effective {
			t.Errorf("%s: EffectiveValue(%d, %d, %d) = %d, want %d", name, c.Value, c.Rate, c.Spent-c.Created, got, c.Effective)
		}
	}
	for _, tier := range allTiers {
		if !seen[tier.String()] {
			t.Errorf("no case for tier %q", tier)
		}
	}
}

// TestDecayRateThreshold: no decay up to T, and the rate grows from 0 continuously above it
// (never more than R_MAX × d / S, the slope at the threshold).
func TestDecayRateThreshold(t *testing.T) {
	const T = consensus.DecayThresholdPPB
	for _, tier := range allTiers {
		for _, c := range []uint64{0, 1, T / 2, T - 1, T} {
			if r := consensus.DecayRate(c, tier); r != 0 {
				t.Errorf("DecayRate(%d, %v) = %d, want 0 at or below the threshold", c, tier, r)
			}
		}
	}
	if r := consensus.DecayRate(T+32, consensus.TierNone); r != 0 {
		t.Errorf("DecayRate(T+32) = %d, want 0", r)
	}
	if r := consensus.DecayRate(T+33, consensus.TierNone); r != 1 {
		t.Errorf("DecayRate(T+33) = %d, want 1 (the first non-zero rate)", r)
	}
	prev := uint64(0)
	for d := uint64(0); d <= 200_000; d += 7 {
		r := consensus.DecayRate(T+d, consensus.TierNone)
		if r*consensus.DecayScalePPB > consensus.DecayRateMax*d {
			t.Fatalf("DecayRate(T+%d) = %d, above the slope at the threshold", d, r)
		}
		if r < prev {
			t.Fatalf("DecayRate(T+%d) = %d < %d: not monotonic", d, r, prev)
		}
		prev = r
	}
	// Monotonic over the whole range, sampled.
	prev = 0
	for c := uint64(0); c <= 1_000_000_000; c += 999_983 {
		r := consensus.DecayRate(c, consensus.TierNone)
		if r < prev {
			t.Fatalf("DecayRate(%d) = %d < %d: not monotonic", c, r, prev)
		}
		prev = r
	}
}

// TestDecayRateScale: half of R_MAX at d == S (1.1%), and the rate approaches R_MAX.
func TestDecayRateScale(t *testing.T) {
	c := uint64(consensus.DecayThresholdPPB + consensus.DecayScalePPB)
	if r := consensus.DecayRate(c, consensus.TierNone); r != consensus.DecayRateMax/2 {
		t.Errorf("DecayRate(1.1%%) = %d, want %d", r, consensus.DecayRateMax/2)
	}
	whole := consensus.DecayRate(1_000_000_000, consensus.TierNone)
	if whole != 305_937 {
		t.Errorf("DecayRate(100%%) = %d, want 305,937", whole)
	}
	for _, c := range []uint64{1_000_000_001, 1 << 40, math.MaxUint64} {
		if r := consensus.DecayRate(c, consensus.TierNone); r != whole {
			t.Errorf("DecayRate(%d) = %d, want %d (concentrations above 10^9 count as 10^9)", c, r, whole)
		}
	}
	if r := consensus.DecayRate(math.MaxUint64, consensus.TierObserver); r != 3*whole || r >= consensus.DecayRateOne {
		t.Errorf("largest observer rate %d, want %d", r, 3*whole)
	}
}

// TestTiers: names, score ranges and decay multipliers (protocol §8 and 9).
func TestTiers(t *testing.T) {
	want := []struct {
		tier       consensus.Tier
		name       string
		multiplier uint64
		rateAtS    uint64 // DecayRate at 1.1%: 154,500 × multiplier / 10,000
	}{
		{consensus.TierNone, "", 10_000, 154_500},
		{consensus.TierObserver, "observer", 30_000, 463_500},
		{consensus.TierParticipant, "participant", 15_000, 231_750},
		{consensus.TierContributor, "contributor", 10_000, 154_500},
		{consensus.TierTrusted, "trusted", 7_500, 115_875},
		{consensus.TierExemplary, "exemplary", 5_000, 77_250},
	}
	c := uint64(consensus.DecayThresholdPPB + consensus.DecayScalePPB)
	for _, w := range want {
		if got := w.tier.String(); got != w.name {
			t.Errorf("Tier(%d).String() = %q, want %q", uint8(w.tier), got, w.name)
		}
		if got := w.tier.DecayMultiplier(); got != w.multiplier {
			t.Errorf("%q multiplier %d, want %d", w.name, got, w.multiplier)
		}
		if got := consensus.DecayRate(c, w.tier); got != w.rateAtS {
			t.Errorf("%q rate at 1.1%% %d, want %d", w.name, got, w.rateAtS)
		}
	}
	// Multiplication after the base rate's rounding: base 1 → observer 3, exemplary 0.
	if r := consensus.DecayRate(consensus.DecayThresholdPPB+33, consensus.TierExemplary); r != 0 {
		t.Errorf("exemplary rate from base 1 = %d, want 0", r)
	}
	bogus := consensus.Tier(200)
	if bogus.String() != "Tier(200)" || bogus.DecayMultiplier() != 10_000 {
		t.Errorf("Tier(200): %q, %d", bogus.String(), bogus.DecayMultiplier())
	}

	scores := []struct {
		score uint32
		tier  consensus.Tier
	}{
		{0, consensus.TierObserver}, {349, consensus.TierObserver},
		{350, consensus.TierParticipant}, {549, consensus.TierParticipant},
		{550, consensus.TierContributor}, {699, consensus.TierContributor},
		{700, consensus.TierTrusted}, {899, consensus.TierTrusted},
		{900, consensus.TierExemplary}, {1000, consensus.TierExemplary},
		{1001, consensus.TierExemplary}, {math.MaxUint32, consensus.TierExemplary},
	}
	for _, s := range scores {
		if got := consensus.TierOf(s.score); got != s.tier {
			t.Errorf("TierOf(%d) = %v, want %v", s.score, got, s.tier)
		}
	}
}

func TestConcentration(t *testing.T) {
	max := amount.MaxMoney
	cases := []struct{ balance, supply, want uint64 }{
		{0, 0, 0},
		{5, 0, 0},
		{0, max, 0},
		{max, max, 1_000_000_000},
		{max + 1, max, 1_000_000_000},
		{math.MaxUint64, 1, 1_000_000_000},
		{max - 1, max, 999_999_999},    // needs the 128-bit product
		{max / 1000, max, 1_000_000},   // the threshold
		{max/1000 + 1, max, 1_000_000}, // one subunit above it rounds down to it
		{1, 3, 333_333_333},
		{math.MaxUint64 - 1, math.MaxUint64, 999_999_999},
	}
	for _, c := range cases {
		if got := consensus.Concentration(c.balance, c.supply); got != c.want {
			t.Errorf("Concentration(%d, %d) = %d, want %d", c.balance, c.supply, got, c.want)
		}
	}
}

// effectiveBig is protocol §8's pseudo-code in math/big, a reference for the 128-bit arithmetic.
func effectiveBig(v, rate, n uint64) uint64 {
	one := big.NewInt(consensus.DecayRateOne)
	f := new(big.Int).Sub(one, new(big.Int).SetUint64(min(rate, consensus.DecayRateOne)))
	acc := new(big.Int).Set(one)
	for ; n > 0; n >>= 1 {
		if n&1 != 0 {
			acc.Div(acc.Mul(acc, f), one)
		}
		f.Div(f.Mul(f, f), one)
	}
	return acc.Div(acc.Mul(acc, new(big.Int).SetUint64(v)), one).Uint64()
}

func TestEffectiveValue(t *testing.T) {
	const one = consensus.DecayRateOne
	cases := []struct{ v, rate, blocks, want uint64 }{
		{1000, 0, 1 << 40, 1000},
		{1000, 12345, 0, 1000},
		{1000, one, 1, 0},
		{1000, one + 1, 1, 0},
		{1000, math.MaxUint64, 1, 0},
		{math.MaxUint64, one, 0, math.MaxUint64},
		{math.MaxUint64, 1, 1, math.MaxUint64 - 18_446_745}, // v − ⌈v / 10^12⌉
		{one, one / 2, 1, one / 2},
		{one, one / 2, 2, one / 4},
		{one, one / 2, 40, 0}, // 10^12 / 2^40 < 1
		{100, 309_000, 1, 99},
	}
	for _, c := range cases {
		if got := consensus.EffectiveValue(c.v, c.rate, c.blocks); got != c.want {
			t.Errorf("EffectiveValue(%d, %d, %d) = %d, want %d", c.v, c.rate, c.blocks, got, c.want)
		}
	}

	rng := rand.New(rand.NewPCG(8, 8))
	for i := 0; i < 5000; i++ {
		v := rng.Uint64()
		if i%2 == 0 {
			v = rng.Uint64N(amount.MaxMoney + 1)
		}
		rate := rng.Uint64N(1_000_000)
		if i%5 == 0 {
			rate = rng.Uint64N(one + 2)
		}
		blocks := rng.Uint64() >> rng.IntN(64)
		got := consensus.EffectiveValue(v, rate, blocks)
		if want := effectiveBig(v, rate, blocks); got != want {
			t.Fatalf("EffectiveValue(%d, %d, %d) = %d, math/big says %d", v, rate, blocks, got, want)
		}
		if got > v {
			t.Fatalf("EffectiveValue(%d, %d, %d) = %d > v", v, rate, blocks, got)
		}
	}
}

// TestEffectiveValueMonotonic: more blocks never leave more value, block by block for the
// first few thousand blocks and across powers of two (where the rounding paths differ most).
func TestEffectiveValueMonotonic(t *testing.T) {
	v := amount.MaxMoney
	for _, rate := range []uint64{1, 2, 3, 7, 1000, 154_500, 305_937, 917_811, 10_000_000, consensus.DecayRateOne / 3} {
		prev := v
		for n := uint64(0); n <= 5000; n++ {
			got := consensus.EffectiveValue(v, rate, n)
			if got > prev {
				t.Fatalf("rate %d: %d blocks leave %d, %d blocks left %d", rate, n, got, n-1, prev)
			}
			prev = got
		}
		for k := 1; k < 64; k++ {
			n := uint64(1) << k
			a, b, c := consensus.EffectiveValue(v, rate, n-1), consensus.EffectiveValue(v, rate, n), consensus.EffectiveValue(v, rate, n+1)
			if b > a || c > b {
				t.Fatalf("rate %d around 2^%d: %d, %d, %d", rate, k, a, b, c)
			}
		}
	}
}

func TestYearlyDecayPPM(t *testing.T) {
	cases := []struct{ rate, want uint64 }{
		{0, 0},
		{consensus.DecayRateMax, 150_002}, // "about 15% a year"
		{consensus.DecayRateMax / 2, 78_046},
		{consensus.DecayRateOne, 1_000_000},
	}
	for _, c := range cases {
		if got := consensus.YearlyDecayPPM(c.rate); got != c.want {
			t.Errorf("YearlyDecayPPM(%d) = %d, want %d", c.rate, got, c.want)
		}
	}
}

func FuzzEffectiveValue(f *testing.F) {
	f.Add(uint64(100_000_000_000), uint64(309_000), uint64(1_000_000), uint64(1))
	f.Add(amount.MaxMoney, uint64(917_811), uint64(525_960), uint64(43_830))
	f.Add(uint64(math.MaxUint64), uint64(1), uint64(math.MaxUint64), uint64(0))
	f.Add(uint64(1), uint64(math.MaxUint64), uint64(0), uint64(1))
	f.Add(uint64(0), uint64(0), uint64(0), uint64(0))
	f.Fuzz(func(t *testing.T, v, rate, blocks, more uint64) {
		got := consensus.EffectiveValue(v, rate, blocks)
		if got > v {
			t.Fatalf("EffectiveValue(%d, %d, %d) = %d > v", v, rate, blocks, got)
		}
		later := blocks + more
		if later < blocks {
			later = math.MaxUint64
		}
		if next := consensus.EffectiveValue(v, rate, later); next > got {
			t.Fatalf("EffectiveValue(%d, %d, %d) = %d, but %d blocks leave %d", v, rate, blocks, got, later, next)
		}
		if blocks < math.MaxUint64 {
			if next := consensus.EffectiveValue(v, rate, blocks+1); next > got {
				t.Fatalf("EffectiveValue(%d, %d, %d) = %d, but one block more leaves %d", v, rate, blocks, got, next)
			}
		}
		if want := effectiveBig(v, rate, blocks); got != want {
			t.Fatalf("EffectiveValue(%d, %d, %d) = %d, math/big says %d", v, rate, blocks, got, want)
		}
	})
}

func BenchmarkEffectiveValue(b *testing.B) {
	rate := consensus.DecayRate(50_000_000, consensus.TierNone) // a cluster with 5% of the supply
	var sink uint64
	for b.Loop() {
		sink += consensus.EffectiveValue(1000*amount.Coin, rate, 1_000_000)
	}
	_ = sink
}

// ExampleEffectiveValue is docs/decay.md's worked example: a cluster with 5% of the supply
// holds an output of 1,000 COIN that does not move for a day, a month and a year.
func ExampleEffectiveValue() {
	supply := 20_000 * amount.Coin
	balance := 1_000 * amount.Coin
	c := consensus.Concentration(balance, supply)
	rate := consensus.DecayRate(c, consensus.TierNone)
	fmt.Printf("concentration %d ppb, rate %d per 10^12 per block, %d ppm a year\n", c, rate, consensus.YearlyDecayPPM(rate))
	for _, p := range []struct {
		name   string
		blocks uint64
	}{{"1 day", 1_440}, {"1 month", consensus.BlocksPerYear / 12}, {"1 year", consensus.BlocksPerYear}} {
		eff := consensus.EffectiveValue(balance, rate, p.blocks)
		fmt.Printf("%-7s %6d blocks: effective %s COIN, decay %s COIN\n", p.name, p.blocks, amount.Format(eff), amount.Format(balance-eff))
	}
	for _, tier := range allTiers[1:] {
		r := consensus.DecayRate(c, tier)
		fmt.Printf("%-11s rate %6d, %d ppm a year\n", tier, r, consensus.YearlyDecayPPM(r))
	}
	// Output:
	// concentration 50000000 ppb, rate 256627 per 10^12 per block, 126262 ppm a year
	// 1 day     1440 blocks: effective 999.63052510 COIN, decay 0.36947490 COIN
	// 1 month  43830 blocks: effective 988.81505182 COIN, decay 11.18494818 COIN
	// 1 year  525960 blocks: effective 873.73719478 COIN, decay 126.26280522 COIN
	// observer    rate 769881, 332974 ppm a year
	// participant rate 384940, 183283 ppm a year
	// contributor rate 256627, 126262 ppm a year
	// trusted     rate 192470, 96276 ppm a year
	// exemplary   rate 128313, 65260 ppm a year
}
