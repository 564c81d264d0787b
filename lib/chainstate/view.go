package chainstate

import (
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// The chain's consensus.StateView, in two forms: the Chain itself (each call takes the read
// lock, for the mempool and the RPC handlers) and connectView (no locking, for connecting a
// block under the write lock). Both answer through the same functions below, so what a
// block is checked against and what the mempool is checked against cannot differ.
var (
	_ consensus.StateView = (*Chain)(nil)
	_ consensus.StateView = connectView{}
)

// slotGet reads a key through the write cache's slots (connecting a block, c.mu held for
// writing).
func (c *Chain) slotGet(k []byte) (any, error) {
	s, err := c.slotLocked(k)
	if err != nil {
		return nil, err
	}
	return s.val, nil
}

// ClusterOf is the cluster the address pkh belongs to at the tip.
func (c *Chain) ClusterOf(pkh types.Hash) (types.Hash, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ci, err := findCluster(c.getLocked, pkh)
	return ci.Name, err
}

// InputValue is what the output e is worth when spent in a block at height, with the chain
// at the tip as that block's parent: the one pricing of a spent output (protocol §8), for the
// mempool here and for blocks through connectView.
func (c *Chain) InputValue(e *consensus.UtxoEntry, height uint64) (uint64, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.inputValue(c.getLocked, nil, e, height)
}

// inputValue values e by the concentration of its owner's cluster in the supply and the
// owner's tier, all as of the tip (the parent of the block at height).
// m, when set, memoises the finds of one block.
func (c *Chain) inputValue(get stateGet, m *viewMemo, e *consensus.UtxoEntry, height uint64) (uint64, error) {
	if e.Locked || height <= e.Height {
		return e.Value, nil
	}
	if c.opts.Values != nil {
		return c.opts.Values.EffectiveValue(e, height), nil
	}
	var ci clusterInfo
	var err error
	var k *keyBuf
	if m != nil {
		k = &m.k
		ci, err = m.find(get, k, e.PubKeyHash)
	} else {
		k = new(keyBuf)
		ci, err = findNode(get, k, consensus.ClusterIDOf(e.PubKeyHash))
	}
	if err != nil {
		return 0, err
	}
	bal, err := balanceAt(get, k, ci.Name)
	if err != nil {
		return 0, err
	}
	supply := c.stats.UtxoTotal
	// The observer's multiplier is the largest: a rate of 0 for it is 0 for every tier, and
	// the owner's agent record need not be read.
	if consensus.DecayRate(consensus.Concentration(bal, supply), consensus.TierObserver) == 0 {
		return e.Value, nil // below the threshold whatever the owner's tier
	}
	tier := consensus.TierNone
	if v, err := get(k.of(pfxAgent, e.PubKeyHash)); err != nil {
		return 0, err
	} else if v != nil {
		tier = consensus.TierOf(v.(*consensus.AgentRecord).Score)
	}
	return consensus.DecayedValue(e, height, bal, supply, tier), nil
}

// connectView is the view one block connects against: its UTXOs through chainView, its
// cluster finds memoised in the cluster memo it shares with the block's clusterBlock.
type connectView struct {
	chainView
	m *viewMemo
}

// viewMemo is a connectView's state: the cluster memo, the slot reader made once and scratch
// space for keys.
type viewMemo struct {
	*clusterMemo
	get     stateGet
	k       keyBuf
	conduct consensus.ConductView // a conductReader with scratch keys, made once
}

func newConnectView(c *Chain, m *clusterMemo) connectView {
	get := c.slotGet
	return connectView{chainView{c}, &viewMemo{clusterMemo: m, get: get,
		conduct: conductReader{get: get, keys: new(conductKeys)}}}
}

func (v connectView) ClusterOf(pkh types.Hash) (types.Hash, error) {
	ci, err := v.m.find(v.m.get, &v.m.k, pkh)
	return ci.Name, err
}

func (v connectView) InputValue(e *consensus.UtxoEntry, height uint64) (uint64, error) {
	return v.c.inputValue(v.m.get, v.m, e, height)
}
