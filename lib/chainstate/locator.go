package chainstate

import "github.com/cointoolkit/coin/lib/types"

// Block locators and the main-chain headers that answer them (headers-first sync, lib/p2p).

// Locator is a block locator of the main chain's tip: the tip and the 9 blocks before it,
// then blocks spaced twice as far apart at each step, ending with genesis.
func (c *Chain) Locator() []types.Hash {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.locatorFrom(c.main[len(c.main)-1])
}

// LocatorFrom is the block locator of a block in the index (on the main chain or not,
// header-only or stored), or nil when the block is unknown.
func (c *Chain) LocatorFrom(h types.Hash) []types.Hash {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := c.index.get(h)
	if n == nil {
		return nil
	}
	return c.locatorFrom(n)
}

func (c *Chain) locatorFrom(n *BlockNode) []types.Hash {
	out := make([]types.Hash, 0, 32)
	step := uint64(1)
	for n != nil {
		out = append(out, n.Hash)
		if n.Height == 0 {
			break
		}
		if len(out) >= 10 {
			step *= 2
		}
		h := uint64(0)
		if n.Height > step {
			h = n.Height - step
		}
		n = c.ancestor(n, h)
	}
	return out
}

// FindFork is the first block of the locator that is on the main chain, or genesis when
// none is.
func (c *Chain) FindFork(locator []types.Hash) *BlockNode {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.findFork(locator)
}

func (c *Chain) findFork(locator []types.Hash) *BlockNode {
	for _, h := range locator {
		n := c.index.get(h)
		if n != nil && n.Height < uint64(len(c.main)) && c.main[n.Height] == n {
			return n
		}
	}
	return c.main[0]
}

// HeadersAfter lists the main-chain headers after the locator's fork point (FindFork), up to
// and including stop, at most max of them.
func (c *Chain) HeadersAfter(locator []types.Hash, stop types.Hash, max int) []types.BlockHeader {
	c.mu.RLock()
	defer c.mu.RUnlock()
	fork := c.findFork(locator)
	var out []types.BlockHeader
	for h := fork.Height + 1; h < uint64(len(c.main)) && len(out) < max; h++ {
		out = append(out, c.main[h].BlockHeader())
		if c.main[h].Hash == stop {
			break
		}
	}
	return out
}

// NodeStatus is the block index entry of a stored block with its status read under the lock
// (the status of a *BlockNode changes when blocks connect or fail). It reports false for an
// unknown block and for a header-only node (see HeaderState).
func (c *Chain) NodeStatus(h types.Hash) (*BlockNode, Status, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := c.index.get(h)
	if n == nil || n.headerOnly {
		return nil, 0, false
	}
	return n, n.status, true
}
