package chainstate

import (
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// The chain's consensus.StateView, in two forms: the Chain itself (each call takes the read
// lock, for the mempool and the RPC handlers) and chainView (no locking, for connecting a
// block under the write lock). Both answer through the same functions below, so what a
// block is checked against and what the mempool is checked against cannot differ.
var (
	_ consensus.StateView = (*Chain)(nil)
	_ consensus.StateView = chainView{}
)

// clusterOfLocked is the one lookup of an address's cluster. Until clusters merge (DESIGN 8,
// the concentration-decay issue) every address is its own cluster.
func (c *Chain) clusterOfLocked(pkh types.Hash) (types.Hash, error) {
	return consensus.ClusterIDOf(pkh), nil
}

// ClusterOf is the cluster the address pkh belongs to at the tip.
func (c *Chain) ClusterOf(pkh types.Hash) (types.Hash, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.clusterOfLocked(pkh)
}

// InputValue is what the output e is worth when spent in a block at height: the one pricing
// of a spent output, for blocks and the mempool alike. It reads no chain state, so it takes
// no lock.
func (c *Chain) InputValue(e *consensus.UtxoEntry, height uint64) (uint64, error) {
	return c.opts.Values.EffectiveValue(e, height), nil
}

func (v chainView) ClusterOf(pkh types.Hash) (types.Hash, error) { return v.c.clusterOfLocked(pkh) }

func (v chainView) InputValue(e *consensus.UtxoEntry, height uint64) (uint64, error) {
	return v.c.InputValue(e, height)
}
