package consensus

import (
	"bytes"

	"github.com/cointoolkit/coin/lib/types"
)

// ClusterState is a cluster's id and balance at the moment a rule looks at it.
type ClusterState struct {
	ID      types.Hash
	Balance uint64
}

// Survivor is the index of the cluster whose id survives when clusters merge (protocol §8):
// union by balance, the largest balance wins; on a tie the smaller id. cs is not empty.
func Survivor(cs []ClusterState) int {
	best := 0
	for i := 1; i < len(cs); i++ {
		a, b := cs[i], cs[best]
		if a.Balance > b.Balance || (a.Balance == b.Balance && bytes.Compare(a.ID[:], b.ID[:]) < 0) {
			best = i
		}
	}
	return best
}

// DecayedValue is the effective value of the output e spent in a block at height (protocol §8):
// locked outputs (stake, escrow) and outputs spent in the block that made them keep their
// value; any other decays at the rate of its cluster's concentration (clusterBalance of
// supply, both as of the parent block) and its owner's tier, for every block of its age.
func DecayedValue(e *UtxoEntry, height, clusterBalance, supply uint64, tier Tier) uint64 {
	if e.Locked || height <= e.Height {
		return e.Value
	}
	return EffectiveValue(e.Value, DecayRate(Concentration(clusterBalance, supply), tier), height-e.Height)
}
