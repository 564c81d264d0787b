package mempool

import (
	"container/heap"
	"context"
	"log/slog"
	"math/bits"
	"sort"
	"sync"
	"time"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/policy"
	"github.com/cointoolkit/coin/lib/types"
)

// Chain is what the pool needs from the chain state.
type Chain interface {
	// StateView is the chain state at the tip: the pool checks against it, layered with its
	// own transactions, and prices inputs with it, exactly as the chain will.
	consensus.StateView
	// NextBlockInfo gives the height and median time past of the next block.
	NextBlockInfo() (height, mtp uint64)
	// Confirmed reports whether txid is in the main chain.
	Confirmed(txid types.Hash) bool
}

// DefaultMaxBytes bounds the pool's serialized size (the relay fee and the dust limit are
// lib/policy's, which the wallet reads too).
const DefaultMaxBytes = 64 << 20

// Entry is a transaction in the pool.
type Entry struct {
	Tx     *types.Transaction
	TxID   types.Hash
	Size   int
	Fee    uint64
	Time   time.Time
	Height uint64 // chain height when accepted
	// Conduct is what an agent transaction does to the agent and contract records (nil for
	// other kinds), as of the pending view it was last checked against.
	Conduct  *consensus.ConductChanges
	parents  map[types.Hash]*Entry
	children map[types.Hash]*Entry
	seq      uint64
}

// Pool is the mempool. It is safe for concurrent use.
type Pool struct {
	mu       sync.RWMutex
	chain    Chain
	magic    [4]byte
	sigs     *consensus.SigCache
	maxBytes int
	txs      map[types.Hash]*Entry
	spends   map[types.Outpoint]*Entry
	bytes    int
	fees     uint64
	seq      uint64
	now      func() time.Time
	log      *slog.Logger

	// The pending view of protocol §9.3: the chain's conduct state with the effects of the
	// pool's agent transactions, in arrival order. The writers are the pool transactions
	// whose effect on an agent (by address) or a contract (by id) is the latest; a later
	// transaction that depends on that record becomes their child.
	conduct        *consensus.ConductOverlay
	agentWriter    map[types.Hash]*Entry
	contractWriter map[types.Hash]*Entry
	conductStale   bool // an agent transaction left: the pending view must be rebuilt

	// onChange is Options.OnChange; why is the reason of the removals under way (events.go);
	// rebuilding holds the changes back while a reorganisation rebuilds the pool.
	onChange   func(Change)
	why        RemoveReason
	rebuilding bool
}

// Options tune a Pool.
type Options struct {
	MaxBytes int
	// SigCache records the transactions whose signatures verified, so their block need not
	// verify them again; nil for none.
	SigCache *consensus.SigCache
	// Logger receives a line for every transaction a new block made invalid; nil for none.
	Logger *slog.Logger
	// OnChange, when set, is told of every transaction that enters or leaves the pool
	// (events.go), in order, with the pool's lock held: it must return quickly and must not
	// call the pool.
	OnChange func(Change)
}

// New returns an empty pool over chain for the network magic.
func New(chain Chain, magic [4]byte, opts Options) *Pool {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	p := &Pool{chain: chain, magic: magic, sigs: opts.SigCache, maxBytes: opts.MaxBytes,
		txs: make(map[types.Hash]*Entry), spends: make(map[types.Outpoint]*Entry), now: time.Now, log: opts.Logger,
		onChange: opts.OnChange, why: RemovedInvalid}
	p.resetConduct()
	return p
}

// view is the chain's state plus the pool's outputs and agent effects: clusters and input
// values are the chain's (the embedded StateView), so the pool prices inputs as the next
// block will; conduct is the pending view.
type view struct {
	consensus.StateView
	p      *Pool
	height uint64
}

func (v view) Utxo(op types.Outpoint) (*consensus.UtxoEntry, bool, error) {
	if e, ok := v.p.txs[op.TxID]; ok {
		if int(op.Index) >= len(e.Tx.Outputs) {
			return nil, false, nil
		}
		o := e.Tx.Outputs[op.Index]
		cluster, err := v.ClusterOf(o.PubKeyHash)
		if err != nil {
			return nil, false, err
		}
		return &consensus.UtxoEntry{Value: o.Value, PubKeyHash: o.PubKeyHash, Height: v.height,
			Locked: consensus.LockedOutput(e.Tx, int(op.Index)), ClusterID: cluster}, true, nil
	}
	return v.p.chain.Utxo(op)
}

// Conduct is the pending view.
func (v view) Conduct() consensus.ConductView { return v.p.conduct }

// Accept validates tx and adds it. It returns the txid. When ctx ends before the pool's
// lock is taken (signature checks come first and may take long), Accept returns ctx's error
// and adds nothing.
func (p *Pool) Accept(ctx context.Context, tx *types.Transaction) (types.Hash, error) {
	txid := tx.TxID()
	size := tx.SerializeSize()
	if err := precheck(tx, size); err != nil {
		return txid, err
	}
	// Signatures need no lock; verify first so invalid floods cost no lock time.
	var key types.Hash
	if p.sigs != nil {
		key = consensus.SigCacheKey(tx)
	}
	if p.sigs == nil || !p.sigs.Has(key) {
		if err := consensus.VerifySignatures(tx, txid, p.magic); err != nil {
			return txid, ruleRefusal(err)
		}
		p.sigs.Add(key)
	}
	if err := ctx.Err(); err != nil {
		return txid, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return txid, p.acceptLocked(tx, txid, size)
}

// precheck is what Accept checks of tx before its signatures: no coinbase, sanity.
func precheck(tx *types.Transaction, size int) error {
	if tx.IsCoinbase() {
		return refuse(ErrCoinbaseInMempool)
	}
	if err := consensus.CheckTransactionSanity(tx, size); err != nil {
		return ruleRefusal(err)
	}
	return nil
}

func (p *Pool) acceptLocked(tx *types.Transaction, txid types.Hash, size int) error {
	fee, ch, height, err := p.checkLocked(tx, txid, size)
	if err != nil {
		return err
	}
	p.seq++
	e := &Entry{Tx: tx, TxID: txid, Size: size, Fee: fee, Time: p.now(), Height: height - 1, seq: p.seq,
		Conduct: ch, parents: map[types.Hash]*Entry{}, children: map[types.Hash]*Entry{}}
	p.add(e)
	if ch != nil {
		p.applyConduct(e)
	}
	if p.bytes > p.maxBytes {
		p.trim()
		p.recheckConduct()
		if _, ok := p.txs[txid]; !ok {
			return refuse(ErrMempoolFull)
		}
	}
	return nil
}

// checkLocked is every check of acceptLocked that needs the pool (p.mu held): it returns
// the fee, the conduct changes and the next block's height, and changes nothing.
func (p *Pool) checkLocked(tx *types.Transaction, txid types.Hash, size int) (uint64, *consensus.ConductChanges, uint64, error) {
	fail := func(err error) (uint64, *consensus.ConductChanges, uint64, error) { return 0, nil, 0, err }
	if _, ok := p.txs[txid]; ok {
		return fail(refuse(ErrAlreadyInMempool))
	}
	if p.chain.Confirmed(txid) {
		return fail(refuse(ErrAlreadyInChain))
	}
	height, mtp := p.chain.NextBlockInfo()
	if err := consensus.CheckFinal(tx, height, mtp); err != nil {
		return fail(ruleRefusal(err))
	}
	for i := range tx.Inputs {
		if other, ok := p.spends[tx.Inputs[i].Outpoint()]; ok {
			return fail(&RejectError{Kind: ErrConflict, Input: i, SpentBy: other.TxID})
		}
	}
	for i := range tx.Outputs {
		if tx.Outputs[i].Value < policy.DustLimit {
			return fail(&RejectError{Kind: ErrDust, Output: i, Value: tx.Outputs[i].Value})
		}
	}
	var ch *consensus.ConductChanges
	if consensus.IsAgentKind(tx.Kind) {
		var err error
		if ch, err = consensus.CheckConduct(tx, txid, p.conductContext(height), p.conduct); err != nil {
			return fail(ruleRefusal(err))
		}
	}
	res, err := consensus.CheckTransactionInputs(tx, height, view{p.chain, p, height})
	if err != nil {
		return fail(ruleRefusal(err))
	}
	if min := uint64(size) * policy.MinRelayFeePerByte; res.Fee < min {
		return fail(&RejectError{Kind: ErrFeeTooLow, Fee: res.Fee, MinFee: min, Size: size})
	}
	return res.Fee, ch, height, nil
}

func (p *Pool) add(e *Entry) {
	for i := range e.Tx.Inputs {
		op := e.Tx.Inputs[i].Outpoint()
		p.spends[op] = e
		if parent, ok := p.txs[op.TxID]; ok {
			e.parents[parent.TxID] = parent
			parent.children[e.TxID] = e
		}
	}
	p.txs[e.TxID] = e
	p.bytes += e.Size
	p.fees += e.Fee
	if p.onChange != nil && !p.rebuilding {
		p.onChange(Change{TxID: e.TxID, Added: true})
	}
}

// remove takes e (and, if withDescendants, everything that spends it) out of the pool.
func (p *Pool) remove(e *Entry, withDescendants bool) {
	if _, ok := p.txs[e.TxID]; !ok {
		return
	}
	if withDescendants {
		for _, c := range e.children {
			p.remove(c, true)
		}
	}
	for i := range e.Tx.Inputs {
		op := e.Tx.Inputs[i].Outpoint()
		if p.spends[op] == e {
			delete(p.spends, op)
		}
	}
	for _, parent := range e.parents {
		delete(parent.children, e.TxID)
	}
	for _, c := range e.children {
		delete(c.parents, e.TxID)
	}
	delete(p.txs, e.TxID)
	p.bytes -= e.Size
	p.fees -= e.Fee
	if e.Conduct != nil {
		p.conductStale = true
	}
	if p.onChange != nil && !p.rebuilding {
		p.onChange(Change{TxID: e.TxID, Reason: p.why})
	}
}

// lowerRate reports whether a pays a lower fee per byte than b (exact, 128-bit).
func lowerRate(a, b *Entry) bool {
	ah, al := bits.Mul64(a.Fee, uint64(b.Size))
	bh, bl := bits.Mul64(b.Fee, uint64(a.Size))
	if ah != bh {
		return ah < bh
	}
	if al != bl {
		return al < bl
	}
	return a.seq > b.seq // newer goes first on a tie
}

// trim evicts the lowest fee-rate transactions with their descendants until the pool fits.
func (p *Pool) trim() {
	p.why = RemovedEvicted
	defer func() { p.why = RemovedInvalid }()
	for p.bytes > p.maxBytes {
		var worst *Entry
		for _, e := range p.txs {
			if worst == nil || lowerRate(e, worst) {
				worst = e
			}
		}
		p.remove(worst, true)
	}
}

// Info is the pool's size, bytes and total fee.
type Info struct {
	Size     int
	Bytes    int
	TotalFee uint64
}

// Info returns the pool's totals.
func (p *Pool) Info() Info {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return Info{len(p.txs), p.bytes, p.fees}
}

// Get returns the entry of txid.
func (p *Pool) Get(txid types.Hash) (*Entry, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	e, ok := p.txs[txid]
	return e, ok
}

// SpentBy returns the pool transaction spending op, if any.
func (p *Pool) SpentBy(op types.Outpoint) (types.Hash, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	e, ok := p.spends[op]
	if !ok {
		return types.Hash{}, false
	}
	return e.TxID, true
}

// PendingOutput is an output created by a pool transaction.
type PendingOutput struct {
	Outpoint types.Outpoint
	Output   types.TxOutput
	Spent    bool // spent by another pool transaction
	Locked   bool // a stake or an escrow (protocol §9.1)
}

// OutputsTo lists the outputs of pool transactions paying pkh.
func (p *Pool) OutputsTo(pkh types.Hash) []PendingOutput {
	p.mu.RLock()
	defer p.mu.RUnlock()
	var out []PendingOutput
	for _, e := range p.txs {
		for i, o := range e.Tx.Outputs {
			if o.PubKeyHash == pkh {
				op := types.Outpoint{TxID: e.TxID, Index: uint32(i)}
				_, spent := p.spends[op]
				out = append(out, PendingOutput{op, o, spent, consensus.LockedOutput(e.Tx, i)})
			}
		}
	}
	return out
}

// TxIDs lists every transaction in the pool.
func (p *Pool) TxIDs() []types.Hash {
	p.mu.RLock()
	defer p.mu.RUnlock()
	ids := make([]types.Hash, 0, len(p.txs))
	for id := range p.txs {
		ids = append(ids, id)
	}
	return ids
}

// ChainChanged brings the pool in line with what ProcessBlock did to the main chain: the
// transactions of connected blocks leave it (with their conflicts), and after a
// reorganisation those of the disconnected blocks come back where still valid. It takes the
// lock once and checks the remaining transactions once, against the new tip: after a
// reorganisation, Reorganized's acceptance of every transaction again is that check.
func (p *Pool) ChainChanged(res *chainstate.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range res.Connected {
		p.removeMined(c.Block, c.TxIDs)
	}
	if len(res.Disconnected) == 0 {
		p.recheckConduct()
		p.recheckFees()
		return
	}
	blocks := make([]*types.Block, 0, len(res.Disconnected))
	for i := len(res.Disconnected) - 1; i >= 0; i-- {
		blocks = append(blocks, res.Disconnected[i].Block)
	}
	p.reorganizedLocked(blocks)
}

// BlockConnected removes the block's transactions and everything conflicting with them.
func (p *Pool) BlockConnected(b *types.Block, txids []types.Hash) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.removeMined(b, txids)
	p.recheckConduct()
	p.recheckFees()
}

// removeMined removes a connected block's transactions and those conflicting with them.
func (p *Pool) removeMined(b *types.Block, txids []types.Hash) {
	defer func() { p.why = RemovedInvalid }()
	for i, tx := range b.Transactions {
		if e, ok := p.txs[txids[i]]; ok {
			p.why = RemovedBlock
			p.remove(e, false)
		}
		p.why = RemovedConflict
		for j := range tx.Inputs {
			if e, ok := p.spends[tx.Inputs[j].Outpoint()]; ok {
				p.remove(e, true)
			}
		}
	}
}

// Reorganized rebuilds the pool after blocks were disconnected: the transactions of the
// disconnected blocks (oldest block first) and then the pool's own, in arrival order, are
// validated again against the new chain; what fails is dropped.
func (p *Pool) Reorganized(disconnected []*types.Block) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reorganizedLocked(disconnected)
}

func (p *Pool) reorganizedLocked(disconnected []*types.Block) {
	old := make([]*Entry, 0, len(p.txs))
	for _, e := range p.txs {
		old = append(old, e)
	}
	sortBySeq(old)
	// The pool is rebuilt from nothing: the changes are told once it is done, as the
	// difference between the pools before and after.
	p.rebuilding = true
	defer p.reorganizedChanges(old)
	p.txs = make(map[types.Hash]*Entry)
	p.spends = make(map[types.Outpoint]*Entry)
	p.bytes, p.fees = 0, 0
	p.resetConduct()
	for _, b := range disconnected {
		for _, tx := range b.Transactions[1:] {
			if consensus.VerifySignatures(tx, tx.TxID(), p.magic) == nil {
				_ = p.acceptLocked(tx, tx.TxID(), tx.SerializeSize())
			}
		}
	}
	for _, e := range old {
		if err := p.acceptLocked(e.Tx, e.TxID, e.Size); err != nil {
			p.log.Info("mempool: dropped a transaction the reorganisation made invalid", "txid", e.TxID, "err", err)
		}
	}
}

func sortBySeq(es []*Entry) {
	sort.Slice(es, func(i, j int) bool { return es[i].seq < es[j].seq })
}

// Select picks transactions for a block of at most maxBytes of transactions: highest fee rate
// first among those whose pool parents are already chosen, so parents precede children.
func (p *Pool) Select(maxBytes int) []*Entry {
	p.mu.RLock()
	defer p.mu.RUnlock()
	waiting := make(map[types.Hash]int, len(p.txs))
	ready := &rateHeap{}
	for _, e := range p.txs {
		if len(e.parents) == 0 {
			heap.Push(ready, e)
		} else {
			waiting[e.TxID] = len(e.parents)
		}
	}
	var out []*Entry
	used := 0
	for ready.Len() > 0 {
		e := heap.Pop(ready).(*Entry)
		if used+e.Size > maxBytes {
			continue // its descendants stay out too: they never become ready
		}
		used += e.Size
		out = append(out, e)
		for _, c := range e.children {
			waiting[c.TxID]--
			if waiting[c.TxID] == 0 {
				heap.Push(ready, c)
			}
		}
	}
	return out
}

type rateHeap []*Entry

func (h rateHeap) Len() int           { return len(h) }
func (h rateHeap) Less(i, j int) bool { return lowerRate(h[j], h[i]) }
func (h rateHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *rateHeap) Push(x any)        { *h = append(*h, x.(*Entry)) }
func (h *rateHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
