package faucet

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

// Engine errors.
var (
	// ErrFaucetEmpty: the faucet's spendable funds do not cover the claim.
	ErrFaucetEmpty = errors.New("the faucet has not enough spendable funds")
	// ErrNodeUnavailable: the node could not be reached or did not answer.
	ErrNodeUnavailable = errors.New("the node is unavailable")
	// ErrStopped: the engine is shutting down.
	ErrStopped = errors.New("the faucet is shutting down")
	// ErrBusy: every spendable output of the faucet is at the end of a chain of unconfirmed
	// transactions as long as the engine allows; the next block frees them.
	ErrBusy = errors.New("the faucet's outputs are all in long unconfirmed chains; retry after the next block")
)

// RejectedError is a transaction the node refused: Message is the node's message, Err the
// node's error, whose kind errors.Is matches (reason.MissingInputs, ...).
type RejectedError struct {
	Message string
	Err     error
}

func (e *RejectedError) Error() string {
	return "the node rejected the faucet's transaction: " + e.Message
}

// Unwrap gives the node's error.
func (e *RejectedError) Unwrap() error { return e.Err }

// Claim is one payment the faucet owes.
type Claim struct {
	Address string
	PKH     types.Hash
	Amount  uint64
}

// Journal durably records claims before their transaction is broadcast, and forgets them
// when it is not accepted. *ClaimStore implements it.
type Journal interface {
	Record(claims []Claim, txid types.Hash) error
	Forget(claims []Claim) error
}

// Node is what the faucet needs from a node.
type Node interface {
	wallet.Node
	GetBlockCount(ctx context.Context) (uint64, error)
	GetBlockHash(ctx context.Context, height uint64) (string, error)
	GetBlock(ctx context.Context, hash string) (*rpcapi.Block, error)
	GetTransaction(ctx context.Context, txid string) (*rpcapi.Transaction, error)
	GetBlockchainInfo(ctx context.Context) (*rpcapi.BlockchainInfo, error)
}

var _ Node = (*rpcapi.Client)(nil)

// EngineConfig configures an Engine.
type EngineConfig struct {
	Net *params.Network
	// Keys are the faucet's keys: the coins of every key's address are spent, change goes
	// to Keys[0].
	Keys []wallet.Key
	// FeeRate in subunits per byte (default wallet.DefaultFeeRate).
	FeeRate uint64
	// MaxBatch bounds the claims paid by one transaction (default 250).
	MaxBatch int
	// MaxInputs bounds the inputs of one transaction (default 500).
	MaxInputs int
	// MaxChainDepth bounds the unconfirmed ancestors of the transactions the engine makes
	// (default 400; the node accepts chains of at least 500).
	MaxChainDepth int
	// PollInterval is how often the engine asks the node for new blocks (default 1 s).
	PollInterval time.Duration
	// Journal records claims before broadcast (required).
	Journal Journal
	// Log receives operational messages (never secrets), under the subsystem "faucet"; nil
	// discards them.
	Log *slog.Logger
}

// Defaults of EngineConfig.
const (
	DefaultMaxBatch      = 250
	DefaultMaxInputs     = 500
	DefaultMaxChainDepth = 400
	DefaultPollInterval  = time.Second
)

// request states: queued, taken by the engine, abandoned by the caller.
const (
	reqQueued int32 = iota
	reqTaken
	reqCancelled
)

type request struct {
	claim Claim
	state atomic.Int32
	done  chan result
}

type result struct {
	txid types.Hash
	err  error
}

// ecoin is an output of the faucet in the engine's view, with the number of unconfirmed
// transactions in the chain that ends with it (0 when confirmed).
type ecoin struct {
	wallet.Coin
	depth int
}

// ptx is an unconfirmed transaction of the engine: the engine's unconfirmed transactions
// it spends, and its chain depth (1 + the deepest of them).
type ptx struct {
	parents []types.Hash
	depth   int
	tx      *types.Transaction // kept to send again if the node loses it
}

// Engine pays claims from the faucet's outputs. One goroutine (Run) owns the faucet's
// outputs, so no two transactions ever spend the same output. It batches whatever claims
// are waiting when it is free into one transaction (group commit): under light load every
// claim gets its own transaction at once; under heavy load one transaction pays up to
// MaxBatch claims, and the number of transactions, and so the depth of the chain of
// unconfirmed change outputs, grows with the number of rounds, not of claims. It spends
// unconfirmed change, so no claim waits for a block.
type Engine struct {
	node Node
	cfg  EngineConfig
	log  *slog.Logger
	reqs chan *request
	tick chan struct{}

	// Owned by the Run goroutine.
	coins      map[types.Outpoint]*ecoin
	pending    map[types.Hash]*ptx
	height     uint64
	needSync   bool
	avoid      map[types.Outpoint]bool // outputs the node refused to spend, until the next block
	addrs      []string
	ownPKH     map[types.Hash]bool
	lastHeight atomic.Uint64

	// Snapshot for Status, written by Run.
	mu        sync.Mutex
	spendable uint64
	immature  uint64
	synced    bool
	paid      uint64
	txs       uint64

	stopped chan struct{}
}

// NewEngine returns an engine; start it with Run.
func NewEngine(node Node, cfg EngineConfig) (*Engine, error) {
	if len(cfg.Keys) == 0 {
		return nil, errors.New("faucet engine: no keys")
	}
	if cfg.Journal == nil {
		return nil, errors.New("faucet engine: no journal")
	}
	if cfg.FeeRate == 0 {
		cfg.FeeRate = wallet.DefaultFeeRate
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = DefaultMaxBatch
	}
	if cfg.MaxInputs <= 0 {
		cfg.MaxInputs = DefaultMaxInputs
	}
	if cfg.MaxChainDepth <= 0 {
		cfg.MaxChainDepth = DefaultMaxChainDepth
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	e := &Engine{node: node, cfg: cfg, log: cfg.Log.With("sys", "faucet"), reqs: make(chan *request, 4*cfg.MaxBatch), tick: make(chan struct{}, 1),
		coins: map[types.Outpoint]*ecoin{}, pending: map[types.Hash]*ptx{}, needSync: true,
		ownPKH: map[types.Hash]bool{}, avoid: map[types.Outpoint]bool{}, stopped: make(chan struct{})}
	for _, k := range cfg.Keys {
		e.addrs = append(e.addrs, k.Address)
		e.ownPKH[k.PKH] = true
	}
	return e, nil
}

// Address is the faucet's main address (where change goes).
func (e *Engine) Address() string { return e.addrs[0] }

// Pay queues c and waits until a transaction paying it is accepted by the node (its txid)
// or the claim failed. If ctx ends before the engine took the claim, the claim is dropped
// and ctx's error returned; once taken, Pay waits for the round's outcome so the caller
// always learns whether it was paid.
func (e *Engine) Pay(ctx context.Context, c Claim) (types.Hash, error) {
	r := &request{claim: c, done: make(chan result, 1)}
	select {
	case e.reqs <- r:
	case <-e.stopped:
		return types.Hash{}, ErrStopped
	case <-ctx.Done():
		return types.Hash{}, ctx.Err()
	}
	var err error
	select {
	case res := <-r.done:
		return res.txid, res.err
	case <-ctx.Done():
		err = ctx.Err()
	case <-e.stopped:
		err = ErrStopped
	}
	if r.state.CompareAndSwap(reqQueued, reqCancelled) {
		return types.Hash{}, err
	}
	// The engine took the claim: its round always answers.
	res := <-r.done
	return res.txid, res.err
}

// Status is a snapshot of the engine's view of the faucet's funds.
type Status struct {
	Spendable uint64 // mature outputs, unconfirmed change included
	Immature  uint64 // coinbase outputs not yet spendable
	Synced    bool   // the engine has read the faucet's outputs from the node
	Paid      uint64 // claims paid since start
	Txs       uint64 // transactions sent since start
}

// Status returns the latest snapshot.
func (e *Engine) Status() Status {
	e.mu.Lock()
	defer e.mu.Unlock()
	return Status{Spendable: e.spendable, Immature: e.immature, Synced: e.synced, Paid: e.paid, Txs: e.txs}
}

// Run pays claims until ctx ends. Claims still queued then fail with ErrStopped.
func (e *Engine) Run(ctx context.Context) {
	defer func() {
		close(e.stopped)
		for {
			select {
			case r := <-e.reqs:
				r.done <- result{err: ErrStopped}
			default:
				return
			}
		}
	}()
	go e.poll(ctx)
	if err := e.sync(ctx); err != nil {
		e.log.Warn("reading the faucet's outputs; will retry", "err", err)
	}
	batch := make([]*request, 0, e.cfg.MaxBatch)
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.tick:
			e.onTick(ctx)
			continue
		case r := <-e.reqs:
			batch = append(batch[:0], r)
		}
		// Take whatever else is already waiting, up to MaxBatch: no waiting for more.
	fill:
		for len(batch) < e.cfg.MaxBatch {
			select {
			case r := <-e.reqs:
				batch = append(batch, r)
			default:
				break fill
			}
		}
		live := batch[:0]
		for _, r := range batch {
			if r.state.CompareAndSwap(reqQueued, reqTaken) {
				live = append(live, r)
			}
		}
		if len(live) > 0 {
			e.round(ctx, live)
		}
		clear(batch)
	}
}

// poll asks the node for its height and wakes Run when a block arrived.
func (e *Engine) poll(ctx context.Context) {
	t := time.NewTicker(e.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		h, err := e.node.GetBlockCount(cctx)
		cancel()
		if err != nil {
			continue
		}
		if h != e.lastHeight.Swap(h) {
			select {
			case e.tick <- struct{}{}:
			default:
			}
		}
	}
}

// onTick handles new blocks: forget the engine's transactions they confirmed, recompute
// chain depths, and read the faucet's outputs again (new funds, matured coinbases).
func (e *Engine) onTick(ctx context.Context) {
	h := e.lastHeight.Load()
	if len(e.pending) > 0 && e.height > 0 && h > e.height {
		if h-e.height > 50 {
			// Too many blocks to read: everything sent that long ago is surely mined.
			clear(e.pending)
		} else {
			for ht := e.height + 1; ht <= h; ht++ {
				if err := e.confirmBlock(ctx, ht); err != nil {
					e.log.Warn("reading a block", "height", ht, "err", err)
					break
				}
			}
		}
	}
	clear(e.avoid)
	e.needSync = true
	if err := e.sync(ctx); err != nil {
		e.log.Warn("reading the faucet's outputs", "err", err)
	}
}

func (e *Engine) confirmBlock(ctx context.Context, height uint64) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	hash, err := e.node.GetBlockHash(cctx, height)
	if err != nil {
		return err
	}
	b, err := e.node.GetBlock(cctx, hash)
	if err != nil {
		return err
	}
	for _, id := range b.Tx {
		if h, err := types.ParseHash(id); err == nil {
			delete(e.pending, h)
		}
	}
	return nil
}

// depthOf is the chain depth of a transaction of the engine (0 when it is not pending).
func (e *Engine) depthOf(txid types.Hash) int {
	p, ok := e.pending[txid]
	if !ok {
		return 0
	}
	return p.depth
}

// recomputeDepths recomputes every pending transaction's depth from its parents (pending
// ones are in creation order by construction: a parent is always older).
func (e *Engine) recomputeDepths() {
	memo := make(map[types.Hash]int, len(e.pending))
	var depth func(types.Hash) int
	depth = func(id types.Hash) int {
		p, ok := e.pending[id]
		if !ok {
			return 0
		}
		if d, ok := memo[id]; ok {
			return d
		}
		memo[id] = 1 // cycle guard (cannot happen)
		d := 0
		for _, par := range p.parents {
			d = max(d, depth(par))
		}
		memo[id] = d + 1
		return d + 1
	}
	for id, p := range e.pending {
		p.depth = depth(id)
	}
}

// sync replaces the engine's view of the faucet's outputs with the node's pending view,
// after sending again the engine's transactions the node no longer knows.
func (e *Engine) sync(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	e.rebroadcast(cctx)
	h, err := e.node.GetBlockCount(cctx)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNodeUnavailable, err)
	}
	us, err := wallet.ListUTXOs(cctx, e.node, e.addrs, true)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNodeUnavailable, err)
	}
	coins, err := wallet.Coins(us)
	if err != nil {
		return err
	}
	e.recomputeDepths()
	e.coins = make(map[types.Outpoint]*ecoin, len(coins))
	var immature uint64
	for i := range us {
		if us[i].Immature {
			immature += wallet.CoinValue(&us[i].UTXO)
		}
	}
	for _, c := range coins {
		d := 0
		if c.Confirmations == 0 {
			d = e.depthOf(c.Outpoint.TxID)
			if d == 0 {
				d = 1 // an unconfirmed output the engine did not make: depth unknown, at least 1
			}
		}
		e.coins[c.Outpoint] = &ecoin{Coin: c, depth: d}
	}
	e.height = h
	e.lastHeight.Store(h)
	e.needSync = false
	e.mu.Lock()
	e.immature = immature
	e.synced = true
	e.mu.Unlock()
	e.updateBalance()
	return nil
}

// rebroadcast sends again, parents first, the unconfirmed payouts the node no longer has (a
// node restart empties its mempool), so the claims they pay are paid after all, as a wallet
// rebroadcasts its own transactions. A payout the node now refuses (its inputs went another
// way) is dropped from the engine's view and logged; an unreachable node ends the attempt
// until the next sync.
func (e *Engine) rebroadcast(ctx context.Context) {
	if len(e.pending) == 0 {
		return
	}
	ids := make([]types.Hash, 0, len(e.pending))
	for id := range e.pending {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return e.pending[ids[i]].depth < e.pending[ids[j]].depth })
	for _, id := range ids {
		p := e.pending[id]
		if p == nil || p.tx == nil {
			continue
		}
		_, err := e.node.GetTransaction(ctx, id.String())
		if err == nil {
			continue
		}
		if !errors.Is(err, reason.TxNotFound) {
			return
		}
		if _, err := e.node.SendRawTransaction(ctx, hex.EncodeToString(p.tx.Bytes())); err != nil {
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) {
				return
			}
			e.log.Warn("payout lost by the node and refused again", "txid", id, "reason", reason.Of(err), "message", rpcErr.Message)
			delete(e.pending, id)
			continue
		}
		e.log.Info("payout lost by the node; sent again", "txid", id)
	}
}

func (e *Engine) updateBalance() {
	var s uint64
	for _, c := range e.coins {
		s += c.Value
	}
	e.mu.Lock()
	e.spendable = s
	e.mu.Unlock()
}

// candidates are the outputs a new transaction may spend: not at the chain depth limit,
// largest first (one big change output pays most rounds alone, which keeps transactions
// small).
func (e *Engine) candidates() []wallet.Coin {
	out := make([]wallet.Coin, 0, len(e.coins))
	for op, c := range e.coins {
		if c.depth < e.cfg.MaxChainDepth && !e.avoid[op] {
			out = append(out, c.Coin)
		}
	}
	wallet.SortLargestFirst(out)
	return out
}

// plan builds the transaction paying as many of the claims, in order, as the funds allow.
func (e *Engine) plan(claims []Claim) (*wallet.Plan, int, error) {
	cands := e.candidates()
	var have uint64
	for _, c := range cands {
		have += c.Value
	}
	n := len(claims)
	// Drop claims from the end until their sum fits what is there (fee aside).
	var sum uint64
	for i, c := range claims {
		if sum+c.Amount > have {
			n = i
			break
		}
		sum += c.Amount
	}
	for ; n > 0; n-- {
		pays := make([]wallet.Payment, n)
		for i := range pays {
			pays[i] = wallet.Payment{PKH: claims[i].PKH, Value: claims[i].Amount}
		}
		p, err := wallet.Select(cands, wallet.Request{Payments: pays, FeeRate: e.cfg.FeeRate,
			Change: e.cfg.Keys[0].PKH, MaxInputs: e.cfg.MaxInputs})
		if err == nil {
			return p, n, nil
		}
		if !errors.Is(err, wallet.ErrInsufficientFunds) && !errors.Is(err, wallet.ErrTooLarge) {
			return nil, 0, err
		}
	}
	if len(cands) < len(e.coins) {
		return nil, 0, ErrBusy
	}
	return nil, 0, ErrFaucetEmpty
}

// maxAttempts bounds the tries of one round: the node may refuse a transaction because the
// engine's view was stale or an output's unconfirmed chain is too long for it; each retry
// re-reads the node's view and keeps clear of the refused outputs.
const maxAttempts = 4

// round pays a batch of claims with one transaction, retrying (see maxAttempts) when the
// node's answer shows the engine's view was stale.
func (e *Engine) round(ctx context.Context, batch []*request) {
	claims := make([]Claim, len(batch))
	for i, r := range batch {
		claims[i] = r.claim
	}
	fail := func(rs []*request, err error) {
		for _, r := range rs {
			r.done <- result{err: err}
		}
	}
	for attempt := 0; ; attempt++ {
		if e.needSync {
			if err := e.sync(ctx); err != nil {
				fail(batch, err)
				return
			}
		}
		plan, n, err := e.plan(claims)
		if err != nil {
			if attempt == 0 && (errors.Is(err, ErrFaucetEmpty) || errors.Is(err, ErrBusy)) {
				e.needSync = true // maybe funds arrived or matured since the last read
				continue
			}
			fail(batch, err)
			return
		}
		paid := claims[:n]
		txid, err := e.send(ctx, plan, paid)
		if err == nil {
			e.apply(plan)
			for _, r := range batch[:n] {
				r.done <- result{txid: txid}
			}
			e.mu.Lock()
			e.paid += uint64(n)
			e.txs++
			e.mu.Unlock()
			if n < len(batch) {
				fail(batch[n:], ErrFaucetEmpty)
			}
			return
		}
		var rej *RejectedError
		if errors.As(err, &rej) && attempt+1 < maxAttempts {
			switch refusalOf(err) {
			case refusedStale:
				// The view was stale (inputs spent or gone, for example after a node restart
				// emptied its mempool): read the node's view again.
				e.log.Info("node rejected a payout; retrying with a fresh view", "txid", plan.TxID,
					"reason", reason.Of(err), "message", rej.Message)
				e.needSync = true
				continue
			case refusedChain:
				// The inputs' unconfirmed chain is too long for the node: keep clear of them
				// until the next block.
				e.log.Info("node rejected a payout; retrying with other outputs", "txid", plan.TxID,
					"reason", reason.Of(err), "message", rej.Message)
				for _, c := range plan.Coins {
					e.avoid[c.Outpoint] = true
				}
				continue
			}
		}
		fail(batch, err)
		return
	}
}

// refusal is what a node's refusal of a payout says about the engine's view.
type refusal int

const (
	refusedOther refusal = iota
	refusedStale         // an input is missing or spent, or not yet spendable
	refusedChain         // the inputs' chain of unconfirmed transactions is too long
)

// staleKinds are the node's refusals that mean the engine's view of its outputs was stale:
// an input is missing or spent, by a block or by a transaction in the mempool, or not yet
// spendable.
var staleKinds = []reason.Reason{reason.MissingInputs, reason.Conflict, reason.DoubleSpend, reason.ImmatureCoinbase}

// refusalOf classifies the node's refusal by its kind (error.data.reason), never by its
// message.
func refusalOf(err error) refusal {
	for _, k := range staleKinds {
		if errors.Is(err, k) {
			return refusedStale
		}
	}
	if errors.Is(err, reason.TooLongChain) {
		return refusedChain
	}
	return refusedOther
}

// send journals the claims, broadcasts the transaction and returns its txid. When the
// node's answer is lost (a transport error), it asks the node whether the transaction
// arrived before giving up.
func (e *Engine) send(ctx context.Context, plan *wallet.Plan, claims []Claim) (types.Hash, error) {
	if err := wallet.Sign(plan, e.cfg.Keys, e.cfg.Net.Magic); err != nil {
		return types.Hash{}, err
	}
	if err := e.cfg.Journal.Record(claims, plan.TxID); err != nil {
		return types.Hash{}, err
	}
	forget := func(err error) (types.Hash, error) {
		if ferr := e.cfg.Journal.Forget(claims); ferr != nil {
			e.log.Error("forgetting unpaid claims", "err", ferr)
		}
		return types.Hash{}, err
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	id, err := e.node.SendRawTransaction(cctx, hex.EncodeToString(plan.Tx.Bytes()))
	if err == nil {
		if id != plan.TxID.String() {
			e.needSync = true
			return forget(fmt.Errorf("node returned txid %s for %s", id, plan.TxID))
		}
		return plan.TxID, nil
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		if errors.Is(err, reason.AlreadyInMempool) || errors.Is(err, reason.AlreadyInChain) {
			// The node has this very transaction: the claims are paid by it.
			return plan.TxID, nil
		}
		e.needSync = true
		return forget(&RejectedError{Message: rpcErr.Message, Err: err})
	}
	// Transport failure: did the transaction arrive?
	e.needSync = true
	if t, terr := e.node.GetTransaction(cctx, plan.TxID.String()); terr == nil && t.TxID == plan.TxID.String() {
		return plan.TxID, nil
	}
	return forget(fmt.Errorf("%w: %v", ErrNodeUnavailable, err))
}

// apply updates the engine's view with an accepted transaction.
func (e *Engine) apply(plan *wallet.Plan) {
	p := &ptx{tx: plan.Tx}
	for _, c := range plan.Coins {
		if ec, ok := e.coins[c.Outpoint]; ok {
			p.depth = max(p.depth, ec.depth)
		}
		if _, ok := e.pending[c.Outpoint.TxID]; ok {
			p.parents = append(p.parents, c.Outpoint.TxID)
		}
		delete(e.coins, c.Outpoint)
	}
	p.depth++
	e.pending[plan.TxID] = p
	for i, o := range plan.Tx.Outputs {
		if e.ownPKH[o.PubKeyHash] {
			op := types.Outpoint{TxID: plan.TxID, Index: uint32(i)}
			e.coins[op] = &ecoin{Coin: wallet.Coin{Outpoint: op, Value: o.Value, PKH: o.PubKeyHash}, depth: p.depth}
		}
	}
	e.updateBalance()
}
