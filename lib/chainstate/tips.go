package chainstate

import "slices"

// ChainTip is the end of a branch of the block index (getchaintips): a block without
// children, or the main chain's tip.
type ChainTip struct {
	Node *BlockNode
	// BranchLen is the number of blocks from the branch's fork with the main chain to the tip
	// (0 for the main chain's own tip).
	BranchLen uint64
	// Status is Bitcoin Core's: "active" (the main chain's tip), "valid-fork" (every block
	// of the branch connected once: fully valid), "valid-headers" (blocks stored, not all
	// checked in full), "headers-only" (some blocks are not stored) or "invalid".
	Status string
}

// ChainTips lists the ends of the index's branches, the highest first. It visits the whole
// index (a few milliseconds a million blocks), as Bitcoin Core's getchaintips does.
func (c *Chain) ChainTips() []ChainTip {
	c.mu.RLock()
	defer c.mu.RUnlock()
	tip := c.main[len(c.main)-1]
	var out []ChainTip
	for _, n := range c.index.slots {
		if n == nil || (n.kid != nil && n != tip) {
			continue
		}
		t := ChainTip{Node: n}
		fork := n
		for fork != nil && !(fork.Height < uint64(len(c.main)) && c.main[fork.Height] == fork) {
			fork = fork.Parent
		}
		if fork != nil {
			t.BranchLen = n.Height - fork.Height
		}
		t.Status = tipStatus(n, t.BranchLen == 0)
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b ChainTip) int {
		switch {
		case a.Node.Height != b.Node.Height:
			if a.Node.Height > b.Node.Height {
				return -1
			}
			return 1
		case a.BranchLen != b.BranchLen:
			if a.BranchLen < b.BranchLen {
				return -1
			}
			return 1
		}
		return 0
	})
	return out
}

// tipStatus is the status of the branch ending in n, whose blocks back to the main chain are
// valid, stored or missing as their nodes say.
func tipStatus(n *BlockNode, main bool) string {
	if main {
		return "active"
	}
	status := "valid-fork"
	for b := n; b != nil; b = b.Parent {
		switch {
		case b.status >= StatusInvalid:
			return "invalid"
		case b.headerOnly:
			status = "headers-only"
		case b.status == StatusStored && status == "valid-fork":
			status = "valid-headers"
		}
		if b.status == StatusValid && !b.headerOnly {
			break
		}
	}
	return status
}
