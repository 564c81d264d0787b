package chainstate

import (
	"context"
	"errors"
	"fmt"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb"
)

// ConnectedBlock is a block that joined or left the main chain.
type ConnectedBlock struct {
	Block  *types.Block
	Hash   types.Hash
	Height uint64
	TxIDs  []types.Hash
}

// Result tells what ProcessBlock did to the main chain, in order: first the blocks
// disconnected (tip first), then those connected (lowest first).
type Result struct {
	Hash         types.Hash
	Height       uint64
	IsTip        bool // the block is the new tip
	Disconnected []ConnectedBlock
	Connected    []ConnectedBlock
}

func ruleErr(kind consensus.ErrorKind, format string, args ...any) error {
	return consensus.RuleError{Err: kind, Description: fmt.Sprintf(format, args...)}
}

// ProcessBlock validates a block, stores it and moves the tip to the most-work valid chain.
// A block whose parent is not stored fails with consensus.ErrUnknownParent (the caller may
// keep it as an orphan); one already stored fails with consensus.ErrDuplicateBlock. A block
// whose header was accepted before (ProcessBlockHeader) fills that header-only node in: its
// header's context was checked then.
//
// ctx bounds the reorganisation: when it ends, ProcessBlock stops between two blocks (each
// block is connected or disconnected whole), writes what it did, and returns the Result so
// far with ctx's error. The chain is then on a consistent tip that may have less work than
// a stored branch; the next ProcessBlock or Open moves on to it. ctx also bounds the wait
// for the chain's lock, which a reorganisation may hold for long: a ctx that ends before
// the lock is taken changes nothing, and ProcessBlock returns its error (wrapped: errors.Is
// matches it) as soon as it ends.
func (c *Chain) ProcessBlock(ctx context.Context, b *types.Block) (*Result, error) {
	return c.ProcessBlockWaiting(ctx, ctx, b)
}

// ProcessBlockWaiting is ProcessBlock with the wait for the chain's lock bounded by wait
// and the work by ctx: for a caller (lib/node's SubmitBlock) whose client may stop waiting
// but must not stop a reorganisation once it started. When wait ends before the lock is
// taken, nothing changes and its error is returned.
func (c *Chain) ProcessBlockWaiting(wait, ctx context.Context, b *types.Block) (*Result, error) {
	hash := b.Hash()
	size := b.SerializeSize()
	if err := c.lockCtx(wait); err != nil {
		return nil, err
	}
	defer c.unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := c.index.get(hash)
	if n != nil && n.status >= StatusInvalid {
		return nil, ruleErr(consensus.ErrKnownInvalid, "block %s is known to be invalid", hash)
	}
	if n != nil && !n.headerOnly {
		return nil, ruleErr(consensus.ErrDuplicateBlock, "block %s is already known", hash)
	}
	ids, err := consensus.CheckBlockSanity(b, hash, size, c.net.PowLimit)
	if err != nil {
		return nil, err
	}
	if n == nil {
		if n, err = c.newBlockNode(b, hash); err != nil {
			return nil, err
		}
	} else if n.Parent.headerOnly {
		return nil, ruleErr(consensus.ErrUnknownParent, "block %s: parent %s is not stored", hash, n.Parent.Hash)
	}
	c.seq++
	n.seq, n.size, n.txCount = c.seq, uint32(size), uint32(len(b.Transactions))
	fill := n.headerOnly
	n.headerOnly = false // for indexRecord; restored below when the write fails
	batch := new(leveldb.Batch)
	if err := c.storeBlock(batch, hash, b.Bytes()); err != nil {
		n.headerOnly = fill
		return nil, err
	}
	batch.Put(hashKey(pfxIndex, hash), indexRecord(n))
	if err := c.writeBatch(batch, c.wo); err != nil {
		n.headerOnly = fill
		return nil, storageErr("store block", err)
	}
	if fill {
		delete(c.hdrs, n)
		c.addTip(n)
	} else {
		c.addNode(n)
	}
	res := &Result{Hash: hash, Height: n.Height}
	cache := map[types.Hash]blockWithIDs{hash: {b, ids}}
	err = c.activateBestChain(ctx, res, cache)
	if ferr := c.flushDue(); ferr != nil {
		err = ferr
	}
	res.IsTip = c.main[len(c.main)-1] == n
	if err == nil && n.status >= StatusInvalid {
		err = errors.New("block is invalid") // cannot happen: its own failure is returned
	}
	return res, err
}

// newBlockNode checks a new block's header in its place (the parent stored and valid, target,
// timestamps) and returns its node, not yet in the index.
func (c *Chain) newBlockNode(b *types.Block, hash types.Hash) (*BlockNode, error) {
	parent := c.index.get(b.Header.PrevHash)
	if parent == nil || parent.headerOnly {
		return nil, ruleErr(consensus.ErrUnknownParent, "block %s: parent %s is unknown", hash, b.Header.PrevHash)
	}
	if parent.status >= StatusInvalid {
		return nil, ruleErr(consensus.ErrInvalidAncestor, "block %s builds on invalid block %s", hash, parent.Hash)
	}
	if err := c.checkHeaderContext(&b.Header, parent); err != nil {
		return nil, err
	}
	n := &BlockNode{Hash: hash, Height: parent.Height + 1, status: StatusStored, Parent: parent,
		Work: parent.Work.Add(workOf(b.Header.DifficultyTarget))}
	n.setHeader(&b.Header)
	return n, nil
}

// checkHeaderContext applies the rules of a header's place on parent: the target the
// retarget rule expects, a timestamp after the median time past and not too far ahead of
// the clock.
func (c *Chain) checkHeaderContext(h *types.BlockHeader, parent *BlockNode) error {
	hc := consensus.HeaderContext{Height: parent.Height + 1, ExpectedTarget: c.nextTarget(parent),
		MedianTimePast: medianTimePast(parent), Now: uint64(c.opts.Now().Unix()), MaxFutureDrift: c.net.MaxFutureDrift}
	return consensus.CheckHeaderContext(h, hc)
}

type blockWithIDs struct {
	b   *types.Block
	ids []types.Hash
}

// activateBestChain reorganises to the most-work valid chain. When a block on the way fails,
// it and its descendants are marked invalid and the search starts again; the error of the
// first failure is returned. It looks at ctx before each block it disconnects or connects
// and returns ctx's error when ctx has ended (what it did so far stays: see ProcessBlock).
func (c *Chain) activateBestChain(ctx context.Context, res *Result, cache map[types.Hash]blockWithIDs) error {
	var firstErr error
	for {
		target := c.bestCandidate()
		tip := c.main[len(c.main)-1]
		if target == tip {
			return firstErr
		}
		// Find the fork point.
		fork := c.ancestor(target, min(target.Height, tip.Height))
		for fork != nil && (fork.Height >= uint64(len(c.main)) || c.main[fork.Height] != fork) {
			fork = fork.Parent
		}
		for c.main[len(c.main)-1] != fork {
			if err := ctx.Err(); err != nil {
				return err
			}
			cb, err := c.disconnectTip()
			if err != nil {
				return err
			}
			res.Disconnected = append(res.Disconnected, cb)
		}
		path := make([]*BlockNode, 0, target.Height-fork.Height)
		for n := target; n != fork; n = n.Parent {
			path = append(path, n)
		}
		failed := false
		for i := len(path) - 1; i >= 0; i-- {
			if err := ctx.Err(); err != nil {
				return err
			}
			cb, err := c.connect(path[i], cache)
			if err != nil {
				if !consensus.IsRuleError(err) {
					return err
				}
				mark := c.markInvalid
				if witnessFailure(err) {
					mark = c.forget
				}
				if markErr := mark(path[i]); markErr != nil {
					return markErr
				}
				if firstErr == nil {
					firstErr = err
				}
				failed = true
				break
			}
			res.Connected = append(res.Connected, cb)
		}
		if !failed {
			return firstErr
		}
	}
}
