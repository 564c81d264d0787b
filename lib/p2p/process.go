package p2p

import (
	"errors"
	"runtime"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// Block processing: downloaded blocks have their signatures verified ahead on the spare
// cores (preverify), then one processor goroutine hands them to the node's SubmitBlock in
// path order; submit deals with the outcome (orphans waiting for the block, transactions of
// disconnected blocks, rejections and the ban score).

// preverifyLoop checks the signatures of received blocks ahead of their turn and records them
// in the chain's signature cache, so that while one block connects (storage work that uses one
// core) the next blocks' signatures are verified on the others. The server runs one per core;
// they share the cache's queue (consensus.PreverifyQueue), which cuts the blocks' signatures
// into batches and hands out the oldest first, so every core works on the block the processor
// waits for, and goroutines are let in between batches (the processor, the peers' readers).
func (s *syncManager) preverifyLoop() {
	q := s.chain.SigCache().Queue(s.net.Magic)
	for s.ctx.Err() == nil {
		// Queue what arrived, in order, before taking work.
		for drained := false; !drained; {
			select {
			case job := <-s.preverifyQ:
				q.Add(job.block, job.done)
			default:
				drained = true
			}
		}
		if q.Step() {
			runtime.Gosched()
			continue
		}
		select {
		case <-s.ctx.Done():
			return
		case job := <-s.preverifyQ:
			q.Add(job.block, job.done)
		case <-q.Wake():
		}
	}
}

type preverifyJob struct {
	block *types.Block
	done  chan struct{}
}

// preverify queues a received block for preverifyLoop and returns a channel closed when it is
// done, or nil when nothing was queued (no cache, or the queue is full: the block's connect
// then verifies its own signatures).
func (s *syncManager) preverify(b *types.Block) chan struct{} {
	if s.chain.SigCache() == nil || len(b.Transactions) < 2 {
		return nil
	}
	job := preverifyJob{b, make(chan struct{})}
	select {
	case s.preverifyQ <- job:
		return job.done
	default:
		return nil
	}
}

// processLoop feeds downloaded blocks to the node in path order.
func (s *syncManager) processLoop() {
	var q *consensus.PreverifyQueue
	if c := s.chain.SigCache(); c != nil {
		q = c.Queue(s.net.Magic)
	}
	sinceFlush := 0 // transactions submitted since this loop last had the chain write
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.wakeProc:
		}
		for s.ctx.Err() == nil {
			s.mu.Lock()
			if s.pathDirty {
				s.mu.Unlock()
				s.refreshPath()
				s.mu.Lock()
			}
			if len(s.path) == 0 || s.received[s.path[0].Hash] == nil {
				s.mu.Unlock()
				break
			}
			// The block stays in received until it is processed, so that the scheduler does
			// not fetch it again while it waits for its signatures.
			n := s.path[0]
			rb := s.received[n.Hash]
			s.processing++
			allReceived := len(s.received) >= len(s.path) // the rest is only verification
			s.mu.Unlock()

			// Connect only once the block's own signatures are checked (on the other cores
			// while the previous block connected), so no signature is verified twice.
			if rb.verified != nil {
				select {
				case <-rb.verified:
				default:
					// Near the end of a catch-up, write the chain's cache while the last
					// blocks are verified rather than after them, so that the write at the
					// end is of the last few blocks only: once every block is downloaded
					// and the signatures left are few against what the write holds (a
					// transaction costs the write about a fifth of what verifying a
					// signature costs, and the write shares the cores with it).
					if allReceived && q != nil && sinceFlush > 0 && q.Pending() <= sinceFlush/4 {
						s.flushChain()
						sinceFlush = 0
					}
					if q != nil {
						q.Urge(rb.verified) // started even if the cache is full
					}
					select {
					case <-rb.verified:
					case <-s.ctx.Done():
					}
				}
			}
			stored, err := s.submit(rb.from, rb.block, n.Hash)
			sinceFlush += len(rb.block.Transactions)

			unknownParent := errors.Is(err, consensus.ErrUnknownParent)
			s.mu.Lock()
			s.processing--
			if s.received[n.Hash] == rb { // not dropped by a path reload meanwhile
				delete(s.received, n.Hash)
				s.receivedBytes -= rb.size
			}
			if stored && len(s.path) > 0 && s.path[0] == n {
				s.path = s.path[1:]
			} else {
				s.markPathDirtyLocked()
			}
			if unknownParent {
				// The chain dropped an ancestor we thought stored: load the path again and
				// ask for headers.
				s.log.Info("sync: block parent unknown to the chain; fetching headers again", "hash", n.Hash)
			}
			s.scheduleLocked()
			announce, ok := s.checkSyncLocked()
			syncing, dirty := s.wasSyncing, s.pathDirty
			s.mu.Unlock()
			if dirty { // the block failed or the chain moved elsewhere: ask for what is next now
				s.schedule()
			}
			s.afterSyncCheck(announce, ok, syncing)
			if unknownParent {
				for _, ps := range s.peerList() {
					s.requestHeaders(ps, types.ZeroHash)
				}
			}
		}
	}
}

// submit hands a block to the node and deals with the outcome. It reports whether the block
// is stored now and the node's error.
func (s *syncManager) submit(from *peerState, b *types.Block, hash types.Hash) (bool, error) {
	res, err := s.b.SubmitBlock(s.ctx, b)
	fresh := err == nil // stored now, not before
	stored := false
	switch {
	case err == nil || errors.Is(err, consensus.ErrDuplicateBlock):
		stored, err = true, nil
	case errors.Is(err, consensus.ErrUnknownParent):
	case errors.Is(err, consensus.ErrTimeTooNew):
		s.log.Info("block ahead of our clock ignored", "hash", hash, "err", err)
	case consensus.IsRuleError(err):
		s.blockRejected(from, hash, err)
	case s.ctx.Err() != nil && errors.Is(err, s.ctx.Err()):
		// Shutting down: the block is stored, the chain resumes its reorganisation at the
		// next start.
	default:
		s.log.Error("block not stored", "hash", hash, "err", err)
	}
	if res != nil && len(res.Disconnected) > 0 {
		s.relayReturned(res)
	}
	if fresh && res != nil && !res.IsTip && len(res.Connected) == 0 {
		// A valid block off our best chain (another miner's block of the same height, seen
		// second): the node has it, and connects it if its branch wins. The network lab
		// counts a block as arrived at this line too (docs/network.md).
		s.log.Debug("block stored off the best chain", "height", res.Height, "hash", hash)
	}
	t := s.chain.Tip()
	s.mu.Lock()
	s.setTipLocked(t)
	var children []*orphanBlock
	if stored {
		children = s.orphanBlocks.takeChildren(hash)
	}
	s.mu.Unlock()
	if fresh && from != nil && t.Hash == hash {
		s.hbDelivered(from) // the first to bring us a new tip
	}
	for _, c := range children {
		s.submit(c.from, c.block, c.hash)
	}
	return stored, err
}

// blockRejected bans the peer that sent an invalid block and has the download path follow
// the chain's verdict. A block the chain did not keep (its body does not match the header,
// or a signature is bad, which the hash does not commit to) may be fetched again from another
// peer, up to three times; then sync gives up on its header.
func (s *syncManager) blockRejected(from *peerState, hash types.Hash, err error) {
	addr := "?"
	if from != nil {
		addr = from.p.Addr()
	}
	s.log.Info("invalid block from peer", "peer", addr, "hash", hash, "err", err)
	st := s.chain.HeaderState(hash)
	invalid := st.Invalid || errors.Is(err, consensus.ErrKnownInvalid) || errors.Is(err, consensus.ErrInvalidAncestor)
	giveUp, refetch := false, false
	s.mu.Lock()
	// The processor submits the path's first block; others reach here unasked.
	onPath := len(s.path) > 0 && s.path[0].Hash == hash
	if !invalid && !st.HaveBlock && (onPath || st.Node != nil) {
		s.bodyFailures[hash]++
		giveUp = s.bodyFailures[hash] >= 3
		// A forgotten block takes its header with it: the header must come again.
		refetch = st.Node == nil && !giveUp
	}
	s.mu.Unlock()
	if giveUp && st.Node != nil {
		if err := s.chain.InvalidateHeader(hash); err != nil {
			s.log.Error("giving up on a header", "hash", hash, "err", err)
		}
	}
	if invalid || giveUp || refetch {
		// The chain's best header may have moved: load the path again (after the chain
		// changed, so that the path cannot be loaded from before).
		s.mu.Lock()
		s.markPathDirtyLocked()
		s.mu.Unlock()
	}
	s.misbehave(from, 100, "invalid block "+hash.String()+": "+err.Error())
	if refetch {
		for _, ps := range s.peerList() {
			if ps != from {
				s.requestHeaders(ps, types.ZeroHash)
			}
		}
	}
}

// relayReturned announces the transactions of disconnected blocks that went back to the
// mempool, so the winning side's miners can include them.
func (s *syncManager) relayReturned(res *chainstate.Result) {
	for _, d := range res.Disconnected {
		for i, id := range d.TxIDs {
			if i == 0 {
				continue
			}
			if _, ok := s.pool.Get(id); ok {
				s.RelayTransaction(id)
			}
		}
	}
}
