package payout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cointoolkit/coin/lib/chainfollow"
	"github.com/cointoolkit/coin/lib/logging"
	"github.com/cointoolkit/coin/lib/params"
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
	// Client is the client network the claim counts against (clientNet, protocol §14), kept
	// with the claim (ClaimStore.Recent) so that a restarted server counts it again; "" when
	// unknown.
	Client string
}

// Journal durably keeps the engine's payouts (protocol §14): each signed transaction with the
// claims it pays, written before it is broadcast and kept until it is mined
// FinalConfirmations deep. *ClaimStore implements it.
type Journal interface {
	// Record writes p and its claims' records in one durable write, setting p.Seq and
	// p.Time.
	Record(p *Payout) error
	// Forget removes a payout the node refused at its first broadcast, with its claims'
	// records.
	Forget(p *Payout) error
	// Replace writes repay, which pays old's claims again, and records old as conflicted,
	// in one durable write.
	Replace(old, repay *Payout) error
	// Done removes a payout mined deep enough.
	Done(p *Payout) error
	// Payouts lists the journaled payouts in the order they were written.
	Payouts() ([]*Payout, error)
}

// NodeClient is what the faucet needs from a node: its RPC client (rpcapi.Client), or a
// test double.
type NodeClient interface {
	wallet.NodeClient
	GetBlockCount(ctx context.Context) (uint64, error)
	GetBlockHash(ctx context.Context, height uint64) (string, error)
	GetBlock(ctx context.Context, hash string) (*rpcapi.Block, error)
	GetTransaction(ctx context.Context, txid string) (*rpcapi.Transaction, error)
	GetBlockchainInfo(ctx context.Context) (*rpcapi.BlockchainInfo, error)
	// GetAddressBalance gives /api/wallet/balance's sums without listing the outputs.
	GetAddressBalance(ctx context.Context, address string, includeMempool bool) (*rpcapi.AddressBalance, error)
	// The agent endpoints' reads (pending view).
	GetAgentProfile(ctx context.Context, address string) (*rpcapi.AgentProfile, error)
	ListAgents(ctx context.Context, offset, limit uint64) (*rpcapi.AgentList, error)
	GetContract(ctx context.Context, id string) (*rpcapi.Contract, error)
	// GetClusterInfo gives the decay rate of the faucet's cluster (protocol §8), for the margin
	// its transactions keep against decay.
	GetClusterInfo(ctx context.Context, addressOrID string) (*rpcapi.ClusterInfo, error)
}

var _ NodeClient = (*rpcapi.Client)(nil)

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
	// Chain is the chain follower that tells the engine of every block connected and
	// disconnected (coin-faucetd shares one with the event source); the engine subscribes to
	// it in NewEngine, so it must not run yet. Nil: the engine runs its own from Run.
	Chain *chainfollow.Follower
	// PollInterval is how often the engine's own follower asks the node for new blocks when
	// the node has no push stream (default 1 s).
	PollInterval time.Duration
	// DecayMargin is how many blocks after the next one the engine's transactions stay
	// valid while the faucet's coins decay (default 10; protocol §8): every output the engine
	// spends counts for its effective value at the next block, decayed DecayMargin blocks
	// more at its cluster's rate, so what it pays out and the relay fee are still covered if
	// the transaction waits that many blocks in the mempool, which drops it otherwise.
	DecayMargin int
	// Journal keeps the payouts from before their broadcast until they are mined
	// FinalConfirmations deep (required).
	Journal Journal
	// ResendInterval is how often, besides every new block and the node coming back, the
	// engine sends again the journaled payouts the node does not have (default 30 s).
	ResendInterval time.Duration
	// Logger receives operational messages (never secrets), under the subsystem "faucet"; nil
	// discards them.
	Logger *slog.Logger
}

// Defaults of EngineConfig.
const (
	DefaultMaxBatch       = 250
	DefaultMaxInputs      = 500
	DefaultMaxChainDepth  = 400
	DefaultPollInterval   = time.Second
	DefaultDecayMargin    = 10
	DefaultResendInterval = 30 * time.Second
	// FinalConfirmations is how deep a payout is mined before the journal lets it go; a
	// reorganisation shallower than that finds it still journaled and sends it again.
	FinalConfirmations = 6
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
// transactions in the chain that ends with it (0 when confirmed). eff is its effective value
// at the next block (protocol §8; an unconfirmed output's nominal value); Coin.Value, what coin
// selection counts it for, is eff less the decay margin (EngineConfig.DecayMargin).
type ecoin struct {
	wallet.Coin
	eff   uint64
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
	node NodeClient
	cfg  EngineConfig
	log  *slog.Logger
	reqs chan *request
	tick chan struct{}

	// Owned by the Run goroutine.
	coins      map[types.Outpoint]*ecoin
	pending    map[types.Hash]*ptx
	needSync   bool
	avoid      map[types.Outpoint]bool // outputs the node refused to spend, until the next block
	addrs      []string
	ownPKH     map[types.Hash]bool
	lastHeight atomic.Uint64
	// rates are the decay rates per block (parts per 10^12) of the clusters of the
	// faucet's addresses, by pubkey hash, as of the last sync; ratesAt the height they
	// were all read at (they change only with the chain: a sync at the same height keeps
	// them), ratesRead whether they were.
	rates     map[types.Hash]uint64
	ratesAt   uint64
	ratesRead bool
	// journal holds the journaled payouts (not yet mined FinalConfirmations deep), by
	// txid; owed is its size, for the poll goroutine.
	journal map[types.Hash]*Payout
	owed    atomic.Int64
	// reserved are the inputs of the journaled payouts; minedAt the height of the block
	// that mined a journaled payout, as last seen.
	reserved map[types.Outpoint]bool
	minedAt  map[types.Hash]uint64

	// The follower's updates not yet taken by Run (chainMu), and when Run was last woken;
	// chainSeen (Run's) tells the follower's first update, whose Resync is the start's.
	chainMu   sync.Mutex
	chainQ    []chainfollow.Update
	lastWake  atomic.Int64
	resendDue atomic.Bool
	chainSeen bool

	// Snapshot for Status, written by Run.
	mu        sync.Mutex
	spendable uint64
	immature  uint64
	synced    bool
	paid      uint64
	txs       uint64
	repaid    uint64

	stopped chan struct{}
}

// NewEngine returns an engine; start it with Run.
func NewEngine(node NodeClient, cfg EngineConfig) (*Engine, error) {
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
	if cfg.DecayMargin <= 0 {
		cfg.DecayMargin = DefaultDecayMargin
	}
	if cfg.ResendInterval <= 0 {
		cfg.ResendInterval = DefaultResendInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	e := &Engine{node: node, cfg: cfg, log: cfg.Logger.With(logging.SubsystemKey, "faucet"), reqs: make(chan *request, 4*cfg.MaxBatch), tick: make(chan struct{}, 1),
		coins: map[types.Outpoint]*ecoin{}, pending: map[types.Hash]*ptx{}, needSync: true,
		ownPKH: map[types.Hash]bool{}, rates: map[types.Hash]uint64{}, avoid: map[types.Outpoint]bool{}, stopped: make(chan struct{}),
		journal: map[types.Hash]*Payout{}, reserved: map[types.Outpoint]bool{}, minedAt: map[types.Hash]uint64{}}
	for _, k := range cfg.Keys {
		e.addrs = append(e.addrs, k.Address)
		e.ownPKH[k.PKH] = true
	}
	// The payouts of earlier runs: sent again by the first sync, their inputs kept from new
	// payouts until they are mined or conflicted.
	ps, err := cfg.Journal.Payouts()
	if err != nil {
		return nil, fmt.Errorf("faucet engine: reading the payout journal: %w", err)
	}
	for _, p := range ps {
		e.addJournal(p)
		pt := &ptx{tx: p.Tx}
		for _, in := range p.Tx.Inputs {
			if _, ok := e.pending[in.PrevTxID]; ok {
				pt.parents = append(pt.parents, in.PrevTxID)
			}
		}
		e.pending[p.TxID] = pt
	}
	e.recomputeDepths()
	if len(ps) > 0 {
		e.log.Info("payouts in the journal, to be sent again until mined", "payouts", len(ps))
	}
	if cfg.Chain != nil {
		cfg.Chain.Subscribe(e.onChain)
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
	// Spendable is what the faucet can pay out: its mature, unlocked outputs in the node's
	// pending view (unconfirmed change included), at their effective value at the next
	// block.
	Spendable uint64
	Immature  uint64 // coinbase outputs not yet spendable
	Synced    bool   // the engine has read the faucet's outputs from the node
	Paid      uint64 // claims paid since start
	Txs       uint64 // transactions sent since start
	// Owed is the number of journaled payouts not yet mined FinalConfirmations deep;
	// Repaid the conflicted payouts paid again since start.
	Owed   int
	Repaid uint64
}

// Status returns the latest snapshot.
func (e *Engine) Status() Status {
	e.mu.Lock()
	defer e.mu.Unlock()
	return Status{Spendable: e.spendable, Immature: e.immature, Synced: e.synced, Paid: e.paid, Txs: e.txs,
		Owed: int(e.owed.Load()), Repaid: e.repaid}
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
	if err := e.sync(ctx); err != nil {
		e.log.Warn("reading the faucet's outputs; will retry", "err", err)
	}
	// The engine's own follower starts after the block that sync read (at the tip when it
	// failed), so that no block is missed and the first round is not taken for a new block.
	if e.cfg.Chain == nil {
		f := chainfollow.New(e.node, chainfollow.Config{StartHeight: e.lastHeight.Load(), PollInterval: e.cfg.PollInterval,
			Logger: e.cfg.Logger})
		f.Subscribe(e.onChain)
		go f.Run(ctx)
	}
	e.lastWake.Store(time.Now().UnixNano())
	go e.resendLoop(ctx)
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

// onChain takes an update of the follower (a chainfollow.Subscriber, in the follower's
// goroutine) for Run, and wakes it when blocks came or went or the follower lost track (the
// node away or restarted: its mempool may have lost the payouts).
func (e *Engine) onChain(_ context.Context, u chainfollow.Update) error {
	e.chainMu.Lock()
	e.chainQ = append(e.chainQ, u)
	e.chainMu.Unlock()
	if u.Tip.Hash != "" {
		e.lastHeight.Store(u.Tip.Height)
	}
	if len(u.Connected) > 0 || len(u.Disconnected) > 0 || u.Resync {
		e.wake()
	}
	return nil
}

func (e *Engine) wake() {
	e.lastWake.Store(time.Now().UnixNano())
	select {
	case e.tick <- struct{}{}:
	default:
	}
}

// resendLoop wakes Run every ResendInterval while payouts are journaled, so those the node
// lost are sent again even when no block comes.
func (e *Engine) resendLoop(ctx context.Context) {
	t := time.NewTicker(min(e.cfg.PollInterval, e.cfg.ResendInterval))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if e.owed.Load() > 0 && time.Since(time.Unix(0, e.lastWake.Load())) >= e.cfg.ResendInterval {
			e.resendDue.Store(true)
			e.wake()
		}
	}
}

// onTick takes the follower's updates (takeChain) and, when a block came or went, the node
// came back or journaled payouts are due to be sent again, reads the faucet's outputs again
// (new funds, matured coinbases).
func (e *Engine) onTick(ctx context.Context) {
	wake := e.takeChain()
	if e.resendDue.Swap(false) || e.needSync { // payouts to send again; the last sync failed
		wake = true
	}
	if !wake {
		return
	}
	clear(e.avoid)
	e.needSync = true
	if err := e.sync(ctx); err != nil {
		e.log.Warn("reading the faucet's outputs", "err", err)
	}
}

// takeChain applies the follower's updates: the payouts of the blocks connected are no
// longer pending (and mined at their block's height), those of the blocks disconnected are
// asked about again. True when one brought or undid blocks, or told that the node came
// back; the follower's first update alone, with no block, needs no second read after Run's.
func (e *Engine) takeChain() bool {
	e.chainMu.Lock()
	ups := e.chainQ
	e.chainQ = nil
	e.chainMu.Unlock()
	wake := false
	for _, u := range ups {
		for _, b := range u.Disconnected {
			for _, id := range b.Txs {
				if h, err := types.ParseHash(id); err == nil {
					delete(e.minedAt, h)
				}
			}
		}
		for _, b := range u.Connected {
			e.confirmBlock(b)
		}
		if len(u.Connected) > 0 || len(u.Disconnected) > 0 || (u.Resync && e.chainSeen) {
			wake = true
		}
		e.chainSeen = true
	}
	return wake
}
