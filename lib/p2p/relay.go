package p2p

import (
	"errors"
	"time"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/types"
)

// Relay: new tips are pushed whole to the peers that asked for it (push.go) and announced
// with their header to every other peer not known to have them (held back while syncing,
// then the tip once caught up); mempool transactions are announced
// by inv, batched for RelayDelay; peers fetch what they lack with getdata. Each peer's known
// inventory is a bounded set, so nothing is announced twice to the same peer.

// txBurst is the transactions of one getdata to one peer. They are held as they arrive and
// handed to the node together once the last one arrived (or was not found, or timed out):
// their signatures are first verified together, in batches on every CPU, into the chain's
// signature cache (consensus.SigCache.PreverifyTransactions), which the node's mempool
// shares, so its Accept finds each one verified. A burst whose peer disconnects before it is
// complete is dropped with the peer.
type txBurst struct {
	waiting int // requests neither answered nor given up
	got     []burstTx
}

type burstTx struct {
	from *peerState
	tx   *types.Transaction
	txid types.Hash
}

// maxTxBurst bounds the transactions of one burst (a getdata asking for more makes several).
const maxTxBurst = 1000

// releaseLocked ends the request r (answered, not found, timed out or asked again): when it
// was the last its burst waited for, it returns the burst's transactions to hand to the node.
// The caller holds txMu.
func releaseLocked(r *txReq) []burstTx {
	if r == nil || r.burst == nil {
		return nil
	}
	r.burst.waiting--
	if r.burst.waiting > 0 {
		return nil
	}
	got := r.burst.got
	r.burst.got = nil
	return got
}

// acceptBurst hands a burst's transactions to the node in arrival order, their signatures
// verified together first.
func (s *syncManager) acceptBurst(b []burstTx) {
	if cache := s.chain.SigCache(); cache != nil && len(b) > 1 {
		txs := make([]*types.Transaction, 0, len(b))
		ids := make([]types.Hash, 0, len(b))
		for _, t := range b {
			if !s.haveTx(t.txid) {
				txs = append(txs, t.tx)
				ids = append(ids, t.txid)
			}
		}
		v := cache.PreverifyTransactions(txs, ids, s.net.Magic, 0)
		s.log.Debug("transaction burst: signatures verified together", "txs", len(b), "verified", v)
	}
	for _, t := range b {
		s.acceptTx(t.from, t.tx, t.txid)
	}
}

const (
	maxPendingTxInv   = 50_000
	maxBlocksPerGet   = 1024
	txRequestTimeout  = 30 * time.Second
	orphanTxLifetime  = 20 * time.Minute
	maxAddrsPerAnswer = wire.MaxAddrs
)

// maxAnnounceQueue bounds the tips waiting for announceLoop; past it the oldest are not
// announced (peers fetch them with the next tip's headers).
const maxAnnounceQueue = 1024

// RelayBlock queues a new tip to announce (the node calls it after a block became the tip,
// from inside SubmitBlock): it only records the hash, so a block the processor submits makes
// no further calls into the server from inside the node; announceLoop does the work.
func (s *syncManager) RelayBlock(hash types.Hash) {
	s.announceMu.Lock()
	if len(s.announceQueue) >= maxAnnounceQueue {
		s.announceQueue = s.announceQueue[1:]
	}
	s.announceQueue = append(s.announceQueue, hash)
	s.announceMu.Unlock()
	select {
	case s.announceWake <- struct{}{}:
	default:
	}
}

// announceLoop announces the queued tips in order (held back while syncing: then the tip
// once caught up, checkSyncLocked).
func (s *syncManager) announceLoop() {
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.announceWake:
		}
		s.announceMu.Lock()
		queue := s.announceQueue
		s.announceQueue = nil
		s.announceMu.Unlock()
		if len(queue) == 0 {
			continue
		}
		s.refreshTip()
		s.recentRejects.Reset() // what was rejected may be valid on the new tip
		s.mu.Lock()
		syncing := s.syncingLocked()
		if syncing {
			s.announcePending = true
		}
		s.mu.Unlock()
		if syncing {
			continue
		}
		for _, h := range queue {
			s.announce(h)
		}
	}
}

func (s *syncManager) announce(hash types.Hash) {
	st := s.chain.HeaderState(hash)
	if !st.HaveBlock {
		return
	}
	push, others := s.pushTargets(st.Node)
	if len(push) > 0 {
		raw, err := s.chain.BlockBytes(hash)
		for _, ps := range push {
			if err == nil && ps.p.TrySendRaw(wire.CmdBlock, raw) {
				s.blocksPushed.Add(1)
				ps.p.SetHeight(st.Node.Height)
			} else {
				others = append(others, ps)
			}
		}
	}
	msg := &wire.MsgHeaders{Headers: []types.BlockHeader{st.Node.BlockHeader()}}
	for _, ps := range others {
		ps.p.TrySend(msg)
	}
}

// RelayTransaction queues an inv of a mempool transaction for every peer not known to have
// it (the node calls it after accepting one).
func (s *syncManager) RelayTransaction(txid types.Hash) {
	s.mu.Lock()
	for ps := range s.peers {
		if len(ps.pendingTx) < maxPendingTxInv && ps.p.KnownTxs().Add(txid) {
			ps.pendingTx = append(ps.pendingTx, txid)
		}
	}
	s.mu.Unlock()
	s.txMu.Lock()
	schedule := !s.flushPending
	s.flushPending = true
	s.txMu.Unlock()
	if schedule {
		time.AfterFunc(s.cfg.RelayDelay, s.flushTxInv)
	}
}

func (s *syncManager) flushTxInv() {
	s.txMu.Lock()
	s.flushPending = false
	s.txMu.Unlock()
	type batch struct {
		ps  *peerState
		ids []types.Hash
	}
	var batches []batch
	s.mu.Lock()
	for ps := range s.peers {
		if len(ps.pendingTx) > 0 {
			batches = append(batches, batch{ps, ps.pendingTx})
			ps.pendingTx = nil
		}
	}
	s.mu.Unlock()
	for _, b := range batches {
		inv := make([]wire.InvVect, len(b.ids))
		for i, id := range b.ids {
			inv[i] = wire.InvVect{Type: wire.InvTx, Hash: id}
		}
		b.ps.p.TrySend(&wire.MsgInv{Inv: inv})
	}
}

// haveTx reports whether a transaction needs no fetching: in the mempool, an orphan, just
// rejected, or confirmed.
func (s *syncManager) haveTx(txid types.Hash) bool {
	if _, ok := s.pool.Get(txid); ok {
		return true
	}
	s.txMu.Lock()
	known := s.orphanTxs.has(txid) || s.recentRejects.Has(txid)
	s.txMu.Unlock()
	if known {
		return true
	}
	_, err := s.chain.TxLocation(txid)
	return err == nil
}

// onInv handles announcements: unknown blocks make us ask for headers, unknown transactions
// are requested (each from one peer at a time).
func (s *syncManager) onInv(ps *peerState, m *wire.MsgInv) {
	if !s.unrequested(ps, "inv") {
		return
	}
	var txids []types.Hash
	unknownBlock := false
	for _, iv := range m.Inv {
		switch iv.Type {
		case wire.InvBlock:
			ps.p.KnownBlocks().Add(iv.Hash)
			switch st := s.chain.HeaderState(iv.Hash); {
			case st.Node == nil:
				unknownBlock = true
			case !st.HaveBlock:
				s.mu.Lock()
				s.updatePeerBestLocked(ps, st.Node)
				s.mu.Unlock()
			default:
				ps.p.SetHeight(st.Node.Height)
			}
		case wire.InvTx:
			ps.p.KnownTxs().Add(iv.Hash)
			txids = append(txids, iv.Hash)
		}
	}
	if unknownBlock {
		s.requestHeaders(ps, types.ZeroHash)
	}
	s.requestTxs(ps, txids)
}

// requestTxs notes that ps announced txids (or has them: the parents of its orphan) and
// asks it for those we lack, within its bounds (txrequest.go).
func (s *syncManager) requestTxs(ps *peerState, txids []types.Hash) {
	s.txMu.Lock()
	room := s.txReqs.room(ps)
	s.txMu.Unlock()
	var lack []types.Hash
	for _, id := range txids {
		if len(lack) >= room {
			break // past the peer's bound: ignored, and not even looked up
		}
		if !s.haveTx(id) {
			lack = append(lack, id)
		}
	}
	if len(lack) == 0 {
		return
	}
	s.txMu.Lock()
	ids := s.txReqs.announce(ps, lack, time.Now())
	s.txMu.Unlock()
	s.sendTxRequests(map[*peerState][]types.Hash{ps: ids})
}

// sendTxRequests sends getdata for the transactions marked in flight from each peer. When a
// peer's send queue is full they are given up as not found, and the next announcers asked.
func (s *syncManager) sendTxRequests(ask map[*peerState][]types.Hash) {
	var ready [][]burstTx
	for len(ask) > 0 {
		next := make(map[*peerState][]types.Hash)
		for ps, ids := range ask {
			if len(ids) == 0 {
				continue
			}
			inv := make([]wire.InvVect, len(ids))
			for i, id := range ids {
				inv[i] = wire.InvVect{Type: wire.InvTx, Hash: id}
			}
			if ps.p.TrySend(&wire.MsgGetData{Inv: inv}) {
				continue
			}
			now := time.Now()
			s.txMu.Lock()
			for _, id := range ids {
				r, other := s.txReqs.failed(ps, id, now)
				ready = append(ready, releaseLocked(r))
				if other != nil {
					next[other] = append(next[other], id)
				}
			}
			s.txMu.Unlock()
		}
		ask = next
	}
	for _, b := range ready {
		s.acceptBurst(b)
	}
}

// onGetData serves stored blocks and mempool transactions, waiting for room in the peer's
// send queue (so a peer is served at the pace it reads), and notfound for the rest.
func (s *syncManager) onGetData(ps *peerState, m *wire.MsgGetData) {
	var missing []wire.InvVect
	blocks := 0
	for _, iv := range m.Inv {
		switch iv.Type {
		case wire.InvBlock:
			blocks++
			if blocks > maxBlocksPerGet {
				missing = append(missing, iv)
				continue
			}
			st := s.chain.HeaderState(iv.Hash)
			if !st.HaveBlock || st.Invalid {
				missing = append(missing, iv)
				continue
			}
			raw, err := s.chain.BlockBytes(iv.Hash)
			if err != nil {
				missing = append(missing, iv)
				continue
			}
			ps.p.KnownBlocks().Add(iv.Hash)
			if ps.p.SendRaw(wire.CmdBlock, raw) != nil {
				return
			}
			ps.p.SetHeight(st.Node.Height)
		case wire.InvTx:
			e, ok := s.pool.Get(iv.Hash)
			if !ok {
				missing = append(missing, iv)
				continue
			}
			ps.p.KnownTxs().Add(iv.Hash)
			if ps.p.Send(&wire.MsgTx{Tx: e.Tx}) != nil {
				return
			}
		}
	}
	if len(missing) > 0 {
		ps.p.Send(&wire.MsgNotFound{Inv: missing})
	}
}

// onNotFound releases requests the peer cannot serve, so another peer is asked.
func (s *syncManager) onNotFound(ps *peerState, m *wire.MsgNotFound) {
	released := false
	var ready [][]burstTx
	ask := make(map[*peerState][]types.Hash)
	for _, iv := range m.Inv {
		switch iv.Type {
		case wire.InvBlock:
			s.mu.Lock()
			if r := s.inflight[iv.Hash]; r != nil && r.ps == ps {
				delete(s.inflight, iv.Hash)
				ps.inflight--
				ps.notFound.Add(iv.Hash)
				released = true
			}
			s.mu.Unlock()
		case wire.InvTx:
			s.txMu.Lock()
			if r, other := s.txReqs.failed(ps, iv.Hash, time.Now()); r != nil {
				ready = append(ready, releaseLocked(r))
				if other != nil {
					ask[other] = append(ask[other], iv.Hash)
				}
			}
			s.txMu.Unlock()
		}
	}
	s.txMu.Lock()
	ask[ps] = append(ask[ps], s.txReqs.more(ps, time.Now())...)
	s.txMu.Unlock()
	s.sendTxRequests(ask)
	for _, b := range ready {
		s.acceptBurst(b)
	}
	if released {
		s.mu.Lock()
		s.scheduleLocked()
		s.mu.Unlock()
	}
}

// txBanScore is the ban score of sending a transaction the mempool rejected with err: full
// for what is invalid whatever the chain (sanity, signatures, a coinbase), none for policy
// and for what depends on the chain state.
func txBanScore(err error) int {
	for _, k := range []error{consensus.ErrBadTxVersion, consensus.ErrTxTooLarge, consensus.ErrNoInputs,
		consensus.ErrNoOutputs, consensus.ErrTooManyInputs, consensus.ErrTooManyOutputs, consensus.ErrZeroOutput,
		consensus.ErrValueOverflow, consensus.ErrDuplicateInput, consensus.ErrBadCoinbaseInputs,
		consensus.ErrBadCoinbasePayload, consensus.ErrBadTransferPayload, consensus.ErrUnexpectedCoinbase,
		consensus.ErrBadSignature, consensus.ErrPubKeyMismatch, mempool.ErrCoinbaseInMempool} {
		if errors.Is(err, k) {
			return 100
		}
	}
	return 0
}

// onTx hands a transaction to the node; one with missing inputs waits in the orphan pool
// while its parents are requested. A requested transaction waits for the rest of its burst
// (txBurst), which is handed to the node when complete.
func (s *syncManager) onTx(ps *peerState, tx *types.Transaction) {
	txid := tx.TxID()
	ps.p.KnownTxs().Add(txid)
	s.txMu.Lock()
	r, requested := s.txReqs.requested(ps, txid)
	var ready []burstTx
	var more []types.Hash
	if requested {
		s.txReqs.have(txid)
		if r.burst != nil {
			r.burst.got = append(r.burst.got, burstTx{ps, tx, txid})
			ready = releaseLocked(r)
		}
		more = s.txReqs.more(ps, time.Now())
	}
	s.txMu.Unlock()
	if len(more) > 0 {
		s.sendTxRequests(map[*peerState][]types.Hash{ps: more})
	}
	switch {
	case requested && r.burst != nil:
		s.acceptBurst(ready)
	case requested || s.unrequested(ps, "transactions"):
		s.acceptTx(ps, tx, txid)
	}
}

func (s *syncManager) acceptTx(ps *peerState, tx *types.Transaction, txid types.Hash) {
	if s.haveTx(txid) {
		return
	}
	_, err := s.b.SubmitTransaction(s.ctx, tx)
	switch {
	case err == nil:
		s.noteUseful(ps, false)
		s.acceptOrphansOf(txid)
	case errors.Is(err, consensus.ErrMissingInputs):
		s.txMu.Lock()
		s.orphanTxs.add(&orphanTx{tx: tx, txid: txid, from: ps, added: time.Now()})
		s.txMu.Unlock()
		var parents []types.Hash
		for i := range tx.Inputs {
			parents = append(parents, tx.Inputs[i].PrevTxID)
		}
		s.requestTxs(ps, parents)
	case errors.Is(err, mempool.ErrAlreadyInMempool), errors.Is(err, mempool.ErrAlreadyInChain):
	default:
		s.txMu.Lock()
		s.recentRejects.Add(txid)
		s.txMu.Unlock()
		if score := txBanScore(err); score > 0 {
			s.misbehave(ps, score, "invalid transaction "+txid.String()+": "+err.Error())
		} else {
			s.log.Debug("transaction from peer rejected", "peer", ps.p.Addr(), "txid", txid, "err", err)
		}
	}
}

// acceptOrphansOf retries the orphans that spend a newly accepted transaction, and theirs.
func (s *syncManager) acceptOrphansOf(parent types.Hash) {
	queue := []types.Hash{parent}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		s.txMu.Lock()
		children := s.orphanTxs.takeChildren(id)
		s.txMu.Unlock()
		for _, o := range children {
			_, err := s.b.SubmitTransaction(s.ctx, o.tx)
			switch {
			case err == nil:
				queue = append(queue, o.txid)
			case errors.Is(err, consensus.ErrMissingInputs):
				s.txMu.Lock()
				s.orphanTxs.add(o)
				s.txMu.Unlock()
			default:
				s.txMu.Lock()
				s.recentRejects.Add(o.txid)
				s.txMu.Unlock()
				if score := txBanScore(err); score > 0 {
					s.misbehave(o.from, score, "invalid transaction "+o.txid.String()+": "+err.Error())
				}
			}
		}
	}
}

// txPeerGone forgets a disconnected peer's transaction announcements and requests; those in
// flight are asked of their next announcers.
func (s *syncManager) txPeerGone(ps *peerState) {
	s.txMu.Lock()
	ask := s.txReqs.removePeer(ps, time.Now())
	s.txMu.Unlock()
	s.sendTxRequests(ask)
}

func (s *syncManager) expireTxState() {
	now := time.Now()
	var ready [][]burstTx
	s.txMu.Lock()
	ended, ask := s.txReqs.expire(now, txRequestTimeout)
	for _, r := range ended {
		ready = append(ready, releaseLocked(r))
	}
	s.orphanTxs.expire(now.Add(-orphanTxLifetime))
	s.txMu.Unlock()
	s.sendTxRequests(ask)
	for _, b := range ready {
		s.acceptBurst(b)
	}
}
