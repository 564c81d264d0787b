package mempool

import (
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// What the pool tells of its changes (Options.OnChange), for the node's notifications
// (docs/operations.md, "Notifications"): every transaction that enters the pool, and every one
// that leaves it with the reason it left. A transaction a connected block mined leaves with
// RemovedBlock, like Bitcoin Core's mempool removal for a block, which its ZMQ "sequence"
// topic leaves implied by the block: a follower of the pool alone needs no block decoding.

// RemoveReason is why a transaction left the pool.
type RemoveReason string

// The reasons.
const (
	// RemovedBlock: a connected block holds it.
	RemovedBlock RemoveReason = "block"
	// RemovedConflict: it (or an ancestor) spends an output a connected block spent.
	RemovedConflict RemoveReason = "conflict"
	// RemovedEvicted: the pool was over its size and its fee rate was the lowest.
	RemovedEvicted RemoveReason = "evicted"
	// RemovedInvalid: the chain made it invalid (a reorganisation, conduct rules, inputs
	// that decayed below its outputs or its fee), or an ancestor left for that reason.
	RemovedInvalid RemoveReason = "invalid"
)

// Change is one transaction entering (Added) or leaving the pool (Reason).
type Change struct {
	TxID   types.Hash
	Added  bool
	Reason RemoveReason // of a removal
}

// reorganizedChanges tells the changes of a rebuild (reorganizedLocked): the transactions of
// old that are gone, then those that came in (from the disconnected blocks).
func (p *Pool) reorganizedChanges(old []*Entry) {
	p.rebuilding = false
	if p.onChange == nil {
		return
	}
	had := make(map[types.Hash]struct{}, len(old))
	for _, e := range old {
		had[e.TxID] = struct{}{}
		if _, ok := p.txs[e.TxID]; !ok {
			p.onChange(Change{TxID: e.TxID, Reason: RemovedInvalid})
		}
	}
	in := make([]*Entry, 0, len(p.txs))
	for _, e := range p.txs {
		if _, ok := had[e.TxID]; !ok {
			in = append(in, e)
		}
	}
	sortBySeq(in)
	for _, e := range in {
		p.onChange(Change{TxID: e.TxID, Added: true})
	}
}

// TestAccept runs every check of Accept on tx without adding it (testmempoolaccept): it
// returns the txid, the fee and the size the pool would record, or the refusal Accept would
// give. It does not foresee an eviction from a full pool, which Accept decides once the
// transaction is in.
func (p *Pool) TestAccept(tx *types.Transaction) (txid types.Hash, fee uint64, size int, err error) {
	txid = tx.TxID()
	size = tx.SerializeSize()
	if err := precheck(tx, size); err != nil {
		return txid, 0, size, err
	}
	if p.sigs == nil || !p.sigs.Has(consensus.SigCacheKey(tx)) {
		if err := consensus.VerifySignatures(tx, txid, p.magic); err != nil {
			return txid, 0, size, ruleRefusal(err)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fee, _, _, err = p.checkLocked(tx, txid, size)
	return txid, fee, size, err
}
