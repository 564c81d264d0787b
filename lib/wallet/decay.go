package wallet

import (
	"context"
	"slices"
	"sort"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// DecayMarginBlocks is how many blocks after the next one a transaction the wallet builds
// may wait in the mempool and still be mined (protocol §8): the fee covers fee rate × size
// plus what the selected inputs would lose to decay over these extra blocks, so neither
// the outputs nor the relay fee end up uncovered when the inputs decay further before the
// transaction is mined. Six blocks (about six minutes) cover a few busy blocks at a cost
// of at most about 1.9 × 10^-6 of the inputs' value (at the highest non-agent rate); the
// surplus over the decay actually paid goes to the miner as fee.
const DecayMarginBlocks = 6

// maxDecayRate is the highest per-block rate consensus gives any output: a cluster holding
// the whole supply, owned by an observer agent (rate × 3).
var maxDecayRate = consensus.DecayRate(1_000_000_000, consensus.TierObserver)

// ClusterNode is the optional part of a NodeClient that describes a decay cluster
// (getclusterinfo, implemented by *rpcapi.Client). Spend, SpendAgent and GetBalance use it
// when the node has it.
type ClusterNode interface {
	GetClusterInfo(ctx context.Context, addressOrID string) (*rpcapi.ClusterInfo, error)
}

var _ ClusterNode = (*rpcapi.Client)(nil)

// ImpliedDecayRate is the highest per-block rate r (parts per 10^12, at most the highest
// rate consensus gives any output) with consensus.EffectiveValue(nominal, r, blocks) ≥
// effective: an upper bound of the rate at which an output of nominal value decayed to
// effective over blocks blocks, since a spend's rate applies to the output's whole age
// (protocol §8). It is 0 when nothing decayed or blocks is 0. For outputs of a few COIN or
// more the bound is within a few parts per 10^12 of the rate itself; for tiny outputs it
// may be much higher, which costs at most a few subunits of margin.
func ImpliedDecayRate(nominal, effective, blocks uint64) uint64 {
	if blocks == 0 || effective >= nominal {
		return 0
	}
	lo, hi := uint64(0), maxDecayRate // EffectiveValue(nominal, lo, blocks) = nominal ≥ effective
	if consensus.EffectiveValue(nominal, hi, blocks) >= effective {
		return hi
	}
	for hi-lo > 1 { // EffectiveValue never increases with the rate
		mid := lo + (hi-lo)/2
		if consensus.EffectiveValue(nominal, mid, blocks) >= effective {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// DecayMargin is what c may lose to decay, beyond its Value (its effective value at the
// next block), if the transaction spending it is mined up to DecayMarginBlocks blocks
// after the next block. c.Confirmations is the output's age in blocks at the next block
// (0 for an output of a mempool transaction). It is the larger of:
//
//   - c.Value − EffectiveValue(nominal, r, age + DecayMarginBlocks), with r the
//     ImpliedDecayRate of c's nominal and effective values: exact, rounding included, for
//     an output whose rate does not change in these blocks (r is an upper bound of the
//     rate, and a higher rate never gives a higher value);
//   - EffectiveValue(nominal, c.DecayRate, age) − EffectiveValue(nominal, c.DecayRate,
//     age + DecayMarginBlocks): the decay over the margin's blocks at the rate the node
//     gives for c's cluster (getclusterinfo) or at the rate the owner's confirmed outputs
//     show. This is what covers an unconfirmed output, whose parent may be mined in the
//     next block and the spend only later.
//
// An output that does not decay (a locked output, a cluster at or below 0.1% of the
// supply, c.Nominal and c.DecayRate 0) has a margin of 0.
func DecayMargin(c *Coin) uint64 {
	nominal := max(c.Nominal, c.Value)
	age := c.Confirmations
	later := age + DecayMarginBlocks
	var m uint64
	if r := ImpliedDecayRate(nominal, c.Value, age); r > 0 {
		if v := consensus.EffectiveValue(nominal, r, later); v < c.Value {
			m = c.Value - v
		}
	}
	if c.DecayRate > 0 {
		m = max(m, consensus.EffectiveValue(nominal, c.DecayRate, age)-consensus.EffectiveValue(nominal, c.DecayRate, later))
	}
	return m
}

// decayMargins sums DecayMargin over coins.
func decayMargins(coins []Coin) uint64 {
	var m uint64
	for i := range coins {
		m += DecayMargin(&coins[i])
	}
	return m
}

// AddDecayRates sets each listed output's DecayRate, the per-block rate its margin assumes
// besides its own implied rate (see DecayMargin): the highest of the rate getclusterinfo
// gives for its cluster (when node is a ClusterNode; one call per cluster) and the
// ImpliedDecayRate of any confirmed output of the same address (which includes an agent
// tier's multiplier, which getclusterinfo leaves out). A node that cannot say
// (getclusterinfo fails) leaves the cluster rates at 0: the margins then rest on the
// outputs' own values.
func AddDecayRates(ctx context.Context, node NodeClient, us []UTXO) {
	byAddr := map[string]uint64{}
	for i := range us {
		u := &us[i]
		if u.Locked {
			continue
		}
		if r := ImpliedDecayRate(u.Value, CoinValue(&u.UTXO), u.Confirmations); r > byAddr[u.Address] {
			byAddr[u.Address] = r
		}
	}
	byCluster := map[string]uint64{}
	if cn, ok := node.(ClusterNode); ok {
		for i := range us {
			u := &us[i]
			if _, done := byCluster[u.ClusterID]; done || u.ClusterID == "" || u.Locked {
				continue
			}
			byCluster[u.ClusterID] = 0
			if info, err := cn.GetClusterInfo(ctx, u.Address); err == nil {
				byCluster[u.ClusterID] = info.RatePerBlock
			}
		}
	}
	for i := range us {
		u := &us[i]
		if u.Locked {
			u.DecayRate = 0 // locked outputs do not decay
			continue
		}
		u.DecayRate = max(byAddr[u.Address], byCluster[u.ClusterID])
	}
}

// ClusterDecay is a decay cluster holding some of a wallet's outputs, as getclusterinfo
// describes it. The rate is that of an owner that is no agent; an agent's tier multiplies
// it (protocol §8).
type ClusterDecay struct {
	ClusterID string `json:"cluster_id"`
	// Addresses are the wallet's addresses with outputs in the cluster.
	Addresses []string `json:"addresses"`
	// Balance is the whole cluster's nominal balance, subunits.
	Balance           uint64 `json:"balance"`
	ConcentrationPPB  uint64 `json:"concentration_ppb"`
	RatePerBlock      uint64 `json:"rate_per_block"` // parts per 10^12
	YearlyDecayPPM    uint64 `json:"yearly_decay_ppm"`
	YearlyDecayPct    string `json:"yearly_decay_percent"`
	CirculatingSupply uint64 `json:"circulating_supply"`
}

// Clusters describes the clusters of the listed outputs with getclusterinfo (one call per
// cluster, asked by the address of one of its outputs), highest rate first (then by id).
func Clusters(ctx context.Context, node ClusterNode, us []UTXO) ([]ClusterDecay, error) {
	idx := map[string]int{}
	var out []ClusterDecay
	for i := range us {
		u := &us[i]
		j, ok := idx[u.ClusterID]
		if !ok {
			info, err := node.GetClusterInfo(ctx, u.Address)
			if err != nil {
				return nil, err
			}
			j = len(out)
			idx[u.ClusterID] = j
			if info.ClusterID != u.ClusterID && info.ClusterID != "" {
				idx[info.ClusterID] = j // a merge between the two calls: one cluster
			}
			out = append(out, ClusterDecay{ClusterID: info.ClusterID, Balance: info.Balance,
				ConcentrationPPB: info.ConcentrationPPB, RatePerBlock: info.RatePerBlock,
				YearlyDecayPPM: consensus.YearlyDecayPPM(info.RatePerBlock), YearlyDecayPct: info.YearlyDecayPct,
				CirculatingSupply: info.CirculatingSupply})
		}
		if c := &out[j]; !slices.Contains(c.Addresses, u.Address) {
			c.Addresses = append(c.Addresses, u.Address)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].RatePerBlock != out[j].RatePerBlock {
			return out[i].RatePerBlock > out[j].RatePerBlock
		}
		return out[i].ClusterID < out[j].ClusterID
	})
	return out, nil
}
