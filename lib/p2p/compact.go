package p2p

import (
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/types"
)

// Compact pushes (after BIP 152, with whole transaction ids rather than short ones, so no
// collision can make a block rebuild wrongly): a block pushed to a high-bandwidth peer goes
// as a cmpctblock holding its header, every transaction id, and the transactions the peer is
// not known to have (the coinbase, and those neither side announced to the other); the
// receiver takes the rest from its mempool and asks for what it still lacks with one
// getblocktxn, answered by blocktxn. The rebuilt block is handled as a pushed block
// (onUnsolicitedBlock): validated once, relayed once it is our tip.

// partialBlock is a compact block waiting for the transactions asked of its sender (one per
// peer; a newer one replaces it).
type partialBlock struct {
	header  types.BlockHeader
	ids     []types.Hash
	txs     []*types.Transaction
	missing []uint32
}

// maxHasTxs bounds each peer's hasTxs set.
const maxHasTxs = 10_000

// noteHasTx records that the peer has the transaction for sure.
func (ps *peerState) noteHasTx(txid types.Hash) {
	if ps.hasTxs != nil {
		ps.hasTxs.Add(txid)
	}
}

// compactFor is the compact form of b for ps: the transactions ps does not have for sure
// (hasTxs: announced or sent to us, or fetched from us) are sent whole, so that the peer
// rarely needs a round trip, even for a transaction we announced and it did not fetch yet.
func compactFor(ps *peerState, b *types.Block, ids []types.Hash) *wire.MsgCmpctBlock {
	m := &wire.MsgCmpctBlock{Header: b.Header, TxIDs: ids}
	for i, tx := range b.Transactions {
		if i == 0 || ps.hasTxs == nil || !ps.hasTxs.Has(ids[i]) {
			m.Prefilled = append(m.Prefilled, wire.PrefilledTx{Index: uint32(i), Tx: tx})
		}
	}
	return m
}

// onCmpctBlock rebuilds a compact block from the mempool, or asks for what is missing. One
// whose parent we do not have is taken as an announcement of its header.
func (s *syncManager) onCmpctBlock(ps *peerState, m *wire.MsgCmpctBlock) {
	hash := m.Header.Hash()
	ps.p.KnownBlocks().Add(hash)
	if err := consensus.CheckProofOfWork(&m.Header, hash, s.net.PowLimit); err != nil {
		s.misbehave(ps, 100, "compact block "+hash.String()+": "+err.Error())
		return
	}
	if s.chain.HeaderState(hash).HaveBlock {
		s.unrequested(ps, "blocks")
		return
	}
	if !s.chain.HeaderState(m.Header.PrevHash).HaveBlock {
		s.onHeaders(ps, &wire.MsgHeaders{Headers: []types.BlockHeader{m.Header}})
		return
	}
	if len(m.TxIDs) == 0 || types.MerkleRoot(m.TxIDs) != m.Header.MerkleRoot {
		s.misbehave(ps, 100, "compact block "+hash.String()+": transaction ids do not match the header")
		return
	}
	pb := &partialBlock{header: m.Header, ids: m.TxIDs, txs: make([]*types.Transaction, len(m.TxIDs))}
	for _, p := range m.Prefilled {
		if int(p.Index) >= len(pb.txs) || pb.txs[p.Index] != nil || p.Tx.TxID() != m.TxIDs[p.Index] {
			s.misbehave(ps, 100, "compact block "+hash.String()+": a prefilled transaction does not match")
			return
		}
		pb.txs[p.Index] = p.Tx
	}
	for i, id := range pb.ids {
		if pb.txs[i] != nil {
			continue
		}
		if e, ok := s.pool.Get(id); ok {
			pb.txs[i] = e.Tx
		} else {
			pb.missing = append(pb.missing, uint32(i))
		}
	}
	if len(pb.missing) == 0 {
		s.completeCompact(ps, pb)
		return
	}
	s.mu.Lock()
	ps.partial = pb
	s.mu.Unlock()
	s.blockTxnRequests.Add(1)
	ps.p.TrySend(&wire.MsgGetBlockTxn{Hash: hash, Indexes: pb.missing})
}

// onBlockTxn completes the compact block waiting for these transactions.
func (s *syncManager) onBlockTxn(ps *peerState, m *wire.MsgBlockTxn) {
	s.mu.Lock()
	pb := ps.partial
	if pb != nil && pb.header.Hash() == m.Hash {
		ps.partial = nil
	} else {
		pb = nil
	}
	s.mu.Unlock()
	if pb == nil {
		s.unrequested(ps, "blocktxn")
		return
	}
	if len(m.Txs) != len(pb.missing) {
		s.misbehave(ps, 100, "blocktxn "+m.Hash.String()+": not the transactions asked for")
		return
	}
	for k, i := range pb.missing {
		if m.Txs[k].TxID() != pb.ids[i] {
			s.misbehave(ps, 100, "blocktxn "+m.Hash.String()+": not the transactions asked for")
			return
		}
		pb.txs[i] = m.Txs[k]
	}
	s.completeCompact(ps, pb)
}

func (s *syncManager) completeCompact(ps *peerState, pb *partialBlock) {
	b := &types.Block{Header: pb.header, Transactions: pb.txs}
	s.onUnsolicitedBlock(ps, b, b.Hash(), b.SerializeSize())
}

// onGetBlockTxn serves transactions of a stored block by index.
func (s *syncManager) onGetBlockTxn(ps *peerState, m *wire.MsgGetBlockTxn) {
	raw, err := s.chain.BlockBytes(m.Hash)
	if err != nil {
		s.unrequested(ps, "getblocktxn")
		return
	}
	b, err := types.DecodeBlock(raw)
	if err != nil {
		return
	}
	out := &wire.MsgBlockTxn{Hash: m.Hash}
	for _, i := range m.Indexes {
		if int(i) >= len(b.Transactions) {
			s.misbehave(ps, 100, "getblocktxn "+m.Hash.String()+": index out of range")
			return
		}
		out.Txs = append(out.Txs, b.Transactions[i])
	}
	ps.p.Send(out)
}
