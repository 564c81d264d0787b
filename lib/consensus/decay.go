package consensus

import (
	"fmt"
	"math/bits"
)

// Concentration decay (protocol §8), as pure integer arithmetic. The chain state decides which
// outputs decay (locked outputs never do), finds the cluster balance, the circulating supply
// and the owner's tier as of the parent block, and calls these functions; they know nothing
// of the chain. lib/consensus/testdata/decay_vectors.json, written by the independent
// Python implementation scripts/decay_vectors.py, fixes their results.
const (
	// DecayThresholdPPB is T: a cluster holding at most this share of the circulating supply
	// (parts per billion; 0.1%) does not decay.
	DecayThresholdPPB = 1_000_000
	// DecayScalePPB is S: the excess over the threshold at which the rate is half of
	// DecayRateMax (1%, so half the maximum at a concentration of 1.1%).
	DecayScalePPB = 10_000_000
	// DecayRateMax is R_MAX, the rate (parts per DecayRateOne per block) that the rate of a
	// non-agent approaches as its concentration grows: about 15% a year.
	DecayRateMax = 309_000
	// DecayRateOne is the fixed-point one of rates and of EffectiveValue's arithmetic: 10^12.
	DecayRateOne = 1_000_000_000_000
	// BlocksPerYear is 365.25 days of 1,440 one-minute blocks.
	BlocksPerYear = 525_960

	// concentrationOne is the whole supply in parts per billion.
	concentrationOne = 1_000_000_000
	// multiplierOne is the tier multiplier that leaves a rate as it is.
	multiplierOne = 10_000
)

// Tier is an agent's Proof of Conduct reputation tier (protocol §9); TierNone is an owner that
// is not an agent. Its only consensus effect here is the decay multiplier (protocol §8).
type Tier uint8

// The tiers, lowest first.
const (
	TierNone Tier = iota
	TierObserver
	TierParticipant
	TierContributor
	TierTrusted
	TierExemplary
)

// tierTable is protocol §9's score ranges and protocol §8's decay multipliers, one row per tier: an
// agent's rate is the non-agent rate × multiplier / 10,000, so a trusted agent decays at 75%
// of the non-agent rate and an observer at 300%.
var tierTable = [...]struct {
	name       string
	minScore   uint32 // lowest conduct score of the tier (TierOf)
	multiplier uint64 // out of 10,000
}{
	TierNone:        {"", 0, 10_000},
	TierObserver:    {"observer", 0, 30_000},
	TierParticipant: {"participant", 350, 15_000},
	TierContributor: {"contributor", 550, 10_000},
	TierTrusted:     {"trusted", 700, 7_500},
	TierExemplary:   {"exemplary", 900, 5_000},
}

// String is the tier's name as the faucet API and the RPC write it (observer, participant,
// contributor, trusted, exemplary), "" for TierNone and Tier(n) for a value that is no tier.
func (t Tier) String() string {
	if int(t) < len(tierTable) {
		return tierTable[t].name
	}
	return fmt.Sprintf("Tier(%d)", uint8(t))
}

// TierOf is the tier of an agent's conduct score (protocol §9): observer 0–349, participant
// 350–549, contributor 550–699, trusted 700–899, exemplary 900–1000. Scores are clamped to
// 0…1000, but a score above 1000 is exemplary rather than an error.
func TierOf(score uint32) Tier {
	for t := TierExemplary; t > TierObserver; t-- {
		if score >= tierTable[t].minScore {
			return t
		}
	}
	return TierObserver
}

// DecayMultiplier is the tier's factor on the decay rate, out of 10,000 (protocol §8): exemplary
// 5,000, trusted 7,500, contributor 10,000, participant 15,000, observer 30,000, and 10,000
// for TierNone (and for any value that is no tier).
func (t Tier) DecayMultiplier() uint64 {
	if int(t) < len(tierTable) {
		return tierTable[t].multiplier
	}
	return multiplierOne
}

// Concentration is protocol §8's c: clusterBalance × 10^9 / supply in parts per billion, rounded
// down, with both amounts taken before the block. A supply of 0 gives 0 (nothing can decay
// when nothing circulates), and a balance above the supply (impossible on a chain, where the
// cluster's outputs are part of the supply) gives 10^9, the whole supply. The product is
// 128 bits, so any uint64 amounts are exact.
func Concentration(clusterBalance, supply uint64) uint64 {
	if supply == 0 {
		return 0
	}
	if clusterBalance >= supply {
		return concentrationOne
	}
	hi, lo := bits.Mul64(clusterBalance, concentrationOne)
	q, _ := bits.Div64(hi, lo, supply) // hi < supply because clusterBalance < supply
	return q
}

// DecayRate is protocol §8's rate per block in parts per 10^12 (DecayRateOne) for an output whose
// cluster has the given concentration and whose owner has the given tier (TierNone for a
// non-agent): 0 when c ≤ T; otherwise base = R_MAX × d / (d + S) with d = c − T, rounded
// down, and then base × multiplier / 10,000, rounded down again (the two divisions are
// separate, in this order), capped at 10^12.
//
// A concentration above 10^9 (more than the whole supply, which Concentration never returns)
// counts as 10^9. The cap is part of the rule but no input reaches it: base < R_MAX and the
// largest multiplier is 30,000, so the rate stays below 3 × R_MAX = 927,000.
func DecayRate(concentrationPPB uint64, tier Tier) uint64 {
	if concentrationPPB <= DecayThresholdPPB {
		return 0
	}
	d := min(concentrationPPB, concentrationOne) - DecayThresholdPPB
	base := DecayRateMax * d / (d + DecayScalePPB) // ≤ 309,000 × 10^9: no overflow
	return min(base*tier.DecayMultiplier()/multiplierOne, DecayRateOne)
}

// EffectiveValue is what an output of nominal value v is worth after blocks = h − h0 blocks
// of decay at rate (parts per 10^12) per block: v × (1 − rate/10^12)^blocks, computed exactly
// as protocol §8's fixed-point binary exponentiation at 10^12 precision, every division rounding
// down:
//
//	f = 10^12 − rate; n = blocks; acc = 10^12
//	while n > 0: if n & 1: acc = acc × f / 10^12
//	             f = f × f / 10^12; n >>= 1
//	effective = v × acc / 10^12
//
// The decay that goes to the pool is v − EffectiveValue(v, rate, blocks). A rate above 10^12
// counts as 10^12 (everything decays in the first block). Products are 128 bits (acc × f ≤
// 10^24, v × acc < 2^64 × 10^12), so no input overflows or panics, and the loop runs at most
// 64 times.
//
// The result never exceeds v, and it never increases with blocks: the rounded squares
// F_k (f^(2^k)) never increase with k, and the rounded product P_j of F_0…F_(j−1) is at least
// F_j (by induction: P_(j+1) = P_j × F_j / 10^12 ≥ F_j × F_j / 10^12 = F_(j+1)); n + 1 differs
// from n by replacing the factors F_0…F_(j−1) of n's trailing ones with F_j, and every step
// after that is monotone in acc.
func EffectiveValue(v, rate, blocks uint64) uint64 {
	if rate == 0 || blocks == 0 || v == 0 {
		return v // the loop would multiply by exactly 10^12 / 10^12
	}
	f := DecayRateOne - min(rate, DecayRateOne)
	acc := uint64(DecayRateOne)
	for n := blocks; n > 0; n >>= 1 {
		if n&1 != 0 {
			acc = mulDivOne(acc, f)
		}
		f = mulDivOne(f, f)
	}
	return mulDivOne(v, acc)
}

// mulDivOne is a × b / 10^12 rounded down, with a 128-bit product. It needs b ≤ 10^12 (then
// the high word is below 10^12 and the quotient fits in 64 bits).
func mulDivOne(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	q, _ := bits.Div64(hi, lo, DecayRateOne)
	return q
}

// YearlyDecayPPM is the share of an output's value that decays in BlocksPerYear blocks at
// rate, in parts per million, rounded down: (10^12 − EffectiveValue(10^12, rate,
// BlocksPerYear)) / 10^6. It is what getclusterinfo and wallets show as "decays X% a year";
// consensus never uses it.
func YearlyDecayPPM(rate uint64) uint64 {
	return (DecayRateOne - EffectiveValue(DecayRateOne, rate, BlocksPerYear)) / 1_000_000
}
