package p2p

import (
	"errors"
	"time"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/types"
)

// Relay: new tips are announced with their header to every peer not known to have them
// (held back while syncing, then the tip once caught up); mempool transactions are announced
// by inv, batched for RelayDelay; peers fetch what they lack with getdata. Each peer's known
// inventory is a bounded set, so nothing is announced twice to the same peer.

type txReq struct {
	peer  uint64
	sent  time.Time
	burst *txBurst // the getdata it was asked in
}

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
func releaseLocked(r txReq) []burstTx {
	if r.burst == nil {
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
func (s *Server) acceptBurst(b []burstTx) {
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
	maxTxInflight     = 50_000
	maxPendingTxInv   = 50_000
	maxBlocksPerGet   = 1024
	txRequestTimeout  = 30 * time.Second
	orphanTxLifetime  = 20 * time.Minute
	maxAddrsPerAnswer = wire.MaxAddrs
)

// RelayBlock announces a new tip (the node calls it after a block became the tip).
func (s *Server) RelayBlock(hash types.Hash) {
	s.refreshTip()
	s.recentRejects.Reset() // what was rejected may be valid on the new tip
	s.mu.Lock()
	if s.syncingLocked() {
		s.announcePending = true
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.announce(hash)
}

func (s *Server) announce(hash types.Hash) {
	st := s.chain.HeaderState(hash)
	if !st.HaveBlock {
		return
	}
	msg := &wire.MsgHeaders{Headers: []types.BlockHeader{st.Node.BlockHeader()}}
	for _, ps := range s.peerList() {
		if ps.p.KnownBlocks().Add(hash) {
			ps.p.TrySend(msg)
		}
	}
}

// RelayTransaction queues an inv of a mempool transaction for every peer not known to have
// it (the node calls it after accepting one).
func (s *Server) RelayTransaction(txid types.Hash) {
	s.mu.Lock()
	for _, ps := range s.peers {
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

func (s *Server) flushTxInv() {
	s.txMu.Lock()
	s.flushPending = false
	s.txMu.Unlock()
	type batch struct {
		ps  *peerState
		ids []types.Hash
	}
	var batches []batch
	s.mu.Lock()
	for _, ps := range s.peers {
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
func (s *Server) haveTx(txid types.Hash) bool {
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
func (s *Server) onInv(ps *peerState, m *wire.MsgInv) {
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

func (s *Server) requestTxs(ps *peerState, txids []types.Hash) {
	var (
		want  []wire.InvVect
		ready [][]burstTx // bursts completed by asking again for one of their transactions
		burst = &txBurst{}
	)
	now := time.Now()
	for _, id := range txids {
		if s.haveTx(id) {
			continue
		}
		s.txMu.Lock()
		r, busy := s.txInflight[id]
		ok := (!busy || now.Sub(r.sent) > txRequestTimeout) && len(s.txInflight) < maxTxInflight
		if ok {
			if busy {
				ready = append(ready, releaseLocked(r))
			}
			if burst.waiting == maxTxBurst {
				burst = &txBurst{}
			}
			burst.waiting++
			s.txInflight[id] = txReq{peer: ps.p.ID(), sent: now, burst: burst}
		}
		s.txMu.Unlock()
		if ok {
			want = append(want, wire.InvVect{Type: wire.InvTx, Hash: id})
		}
	}
	if len(want) > 0 && !ps.p.TrySend(&wire.MsgGetData{Inv: want}) {
		s.txMu.Lock()
		for _, iv := range want {
			if r, ok := s.txInflight[iv.Hash]; ok && r.peer == ps.p.ID() {
				delete(s.txInflight, iv.Hash)
				ready = append(ready, releaseLocked(r))
			}
		}
		s.txMu.Unlock()
	}
	for _, b := range ready {
		s.acceptBurst(b)
	}
}

// onGetData serves stored blocks and mempool transactions, waiting for room in the peer's
// send queue (so a peer is served at the pace it reads), and notfound for the rest.
func (s *Server) onGetData(ps *peerState, m *wire.MsgGetData) {
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
func (s *Server) onNotFound(ps *peerState, m *wire.MsgNotFound) {
	released := false
	var ready [][]burstTx
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
			if r, ok := s.txInflight[iv.Hash]; ok && r.peer == ps.p.ID() {
				delete(s.txInflight, iv.Hash)
				ready = append(ready, releaseLocked(r))
			}
			s.txMu.Unlock()
		}
	}
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
	for _, k := range []error{consensus.ErrTxVersion, consensus.ErrTxTooLarge, consensus.ErrNoInputs,
		consensus.ErrNoOutputs, consensus.ErrTooManyInputs, consensus.ErrTooManyOutputs, consensus.ErrZeroOutput,
		consensus.ErrValueOverflow, consensus.ErrDuplicateInput, consensus.ErrCoinbaseInputs,
		consensus.ErrCoinbasePayload, consensus.ErrTransferPayload, consensus.ErrUnexpectedCoinbase,
		consensus.ErrBadSignature, consensus.ErrPubKeyMismatch, mempool.ErrCoinbase} {
		if errors.Is(err, k) {
			return 100
		}
	}
	return 0
}

// onTx hands a transaction to the node; one with missing inputs waits in the orphan pool
// while its parents are requested. A requested transaction waits for the rest of its burst
// (txBurst), which is handed to the node when complete.
func (s *Server) onTx(ps *peerState, tx *types.Transaction) {
	txid := tx.TxID()
	ps.p.KnownTxs().Add(txid)
	s.txMu.Lock()
	r, requested := s.txInflight[txid]
	requested = requested && r.peer == ps.p.ID()
	var ready []burstTx
	if requested {
		delete(s.txInflight, txid)
		if r.burst != nil {
			r.burst.got = append(r.burst.got, burstTx{ps, tx, txid})
			ready = releaseLocked(r)
		}
	}
	s.txMu.Unlock()
	switch {
	case requested && r.burst != nil:
		s.acceptBurst(ready)
	case requested || s.unrequested(ps, "transactions"):
		s.acceptTx(ps, tx, txid)
	}
}

func (s *Server) acceptTx(ps *peerState, tx *types.Transaction, txid types.Hash) {
	if s.haveTx(txid) {
		return
	}
	_, err := s.b.SubmitTransaction(tx)
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
	case errors.Is(err, mempool.ErrAlreadyInPool), errors.Is(err, mempool.ErrAlreadyInChain):
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
func (s *Server) acceptOrphansOf(parent types.Hash) {
	queue := []types.Hash{parent}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		s.txMu.Lock()
		children := s.orphanTxs.takeChildren(id)
		s.txMu.Unlock()
		for _, o := range children {
			_, err := s.b.SubmitTransaction(o.tx)
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

func (s *Server) expireTxState() {
	now := time.Now()
	var ready [][]burstTx
	s.txMu.Lock()
	for id, r := range s.txInflight {
		if now.Sub(r.sent) > txRequestTimeout {
			delete(s.txInflight, id)
			ready = append(ready, releaseLocked(r))
		}
	}
	s.orphanTxs.expire(now.Add(-orphanTxLifetime))
	s.txMu.Unlock()
	for _, b := range ready {
		s.acceptBurst(b)
	}
}
