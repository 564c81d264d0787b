// Package chainfollow follows a node's main chain and mempool for the programs that act on
// them (coin-faucetd's payout engine and agent event log): one follower reads each block
// once, finds where a reorganisation forked once, and hands every subscriber the same
// ordered updates (blocks disconnected newest first, blocks connected oldest first, the
// mempool). It is woken by the node's push stream (GET /stream, rpcapi.Client.Follow), so a
// block reaches the subscribers a few milliseconds after the node connected it; a node
// without the stream (or while it is away) is polled. See docs/faucet.md, "Following the
// chain".
package chainfollow

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/cointoolkit/coin/lib/logging"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// NodeClient is what the follower asks of the node (*rpcapi.Client has it all). The
// mempool is read only when the node also has GetRawMempool (MempoolClient) and a subscriber
// wants it (Config.Mempool); the push stream is used when it also has Follow (StreamClient).
type NodeClient interface {
	GetBlockCount(ctx context.Context) (uint64, error)
	GetBlockHash(ctx context.Context, height uint64) (string, error)
	GetBlock(ctx context.Context, hash string) (*rpcapi.Block, error)
}

// MempoolClient is a NodeClient that lists its mempool.
type MempoolClient interface {
	GetRawMempool(ctx context.Context) ([]string, error)
}

// StreamClient is a NodeClient with the push stream.
type StreamClient interface {
	Follow(ctx context.Context, o rpcapi.FollowOptions, fn func(rpcapi.Event) error) error
}

var (
	_ NodeClient    = (*rpcapi.Client)(nil)
	_ MempoolClient = (*rpcapi.Client)(nil)
	_ StreamClient  = (*rpcapi.Client)(nil)
)

// Defaults of Config.
const (
	// DefaultPollInterval is how often a node without the stream is asked for its tip.
	DefaultPollInterval = time.Second
	// DefaultCheckInterval is how often, with the stream up, the follower still compares
	// its view with the node's (a safety net: the stream's gap events already tell of
	// missed events).
	DefaultCheckInterval = 10 * time.Second
	// DefaultDepth is how many main-chain blocks are remembered to find a fork.
	DefaultDepth = 1000
	// maxBlocksPerRound bounds the blocks one round reads, so that a follower far behind
	// hands them out as it goes.
	maxBlocksPerRound = 100
	// mempoolGap is the least time between rounds woken only by mempool events, so that a
	// burst of transactions (a busy faucet) costs one getrawmempool per gap, not one each.
	mempoolGap = 50 * time.Millisecond
)

// BlockRef names a main-chain block.
type BlockRef struct {
	Height uint64
	Hash   string
}

// Block is a block of an update.
type Block struct {
	Height   uint64
	Hash     string
	PrevHash string
	// Txs are its transaction ids, coinbase first (nil for a disconnected block the
	// follower was seeded with, whose transactions it never read).
	Txs []string
	// Seen is when the follower learned of the block: the arrival of its block_connected
	// stream event, or the round that found it (poll).
	Seen time.Time
}

// Update is what changed since the previous update a subscriber was given.
type Update struct {
	// Disconnected are blocks that left the main chain, newest first; they come before
	// Connected, which are new main-chain blocks, oldest first.
	Disconnected []Block
	Connected    []Block
	// Tip is the last main-chain block the follower has read.
	Tip BlockRef
	// Mempool lists the node's mempool (parents before children) when MempoolRead; it is
	// read when the follower is at the tip and the mempool may have changed.
	Mempool     []string
	MempoolRead bool
	// Resync is set when the follower may have missed something the subscriber keeps
	// (its first update, the node back after being away or restarted, a gap in the
	// stream): a subscriber that caches the node's state reads it again.
	Resync bool
}

func (u *Update) empty() bool {
	return len(u.Disconnected) == 0 && len(u.Connected) == 0 && !u.MempoolRead && !u.Resync
}

// merge adds the later update n to u (u was not taken by its subscriber): a block n
// disconnects that u connects cancels out; the rest follows in order.
func (u *Update) merge(n Update) {
	for _, d := range n.Disconnected {
		if k := len(u.Connected); k > 0 && u.Connected[k-1].Hash == d.Hash {
			u.Connected = u.Connected[:k-1]
			continue
		}
		u.Disconnected = append(u.Disconnected, d)
	}
	u.Connected = append(u.Connected, n.Connected...)
	u.Tip = n.Tip
	if n.MempoolRead {
		u.Mempool, u.MempoolRead = n.Mempool, true
	}
	u.Resync = u.Resync || n.Resync
}

// Subscriber takes an update. An error means it did not take it: the update is given again,
// merged with the later ones, at the next round, so a subscriber must take an update it
// took in part (its own state tells which blocks it has) without doing anything twice.
type Subscriber func(ctx context.Context, u Update) error

// Config configures a Follower.
type Config struct {
	// Start is where the follower begins, oldest first (a subscriber's stored position):
	// the first round disconnects those no longer in the main chain and connects the
	// blocks after. Empty: StartHeight, or the node's tip at the first round.
	Start []BlockRef
	// StartHeight, with no Start, is the height of the block to begin after (0: the tip).
	StartHeight uint64
	// Mempool makes the follower read the node's mempool for its subscribers.
	Mempool bool
	// PollInterval is how often the node is asked when its stream is not up (default 1 s).
	PollInterval time.Duration
	// CheckInterval is how often the view is checked while the stream is up (default 10 s).
	CheckInterval time.Duration
	// Depth is how many blocks are remembered to find a fork (default 1000).
	Depth int
	// NoStream makes the follower poll even when the node has the stream.
	NoStream bool
	Logger   *slog.Logger
}

// Follower follows the node; start it with Run.
type Follower struct {
	cfg  Config
	node NodeClient
	log  *slog.Logger
	kick chan struct{}

	mu       sync.Mutex
	subs     []*sub
	poolDirt bool                 // the mempool may have changed since it was read
	resync   bool                 // a gap in the stream or a node restart
	seen     map[string]time.Time // block hash → arrival of its block_connected event
	stream   bool                 // the stream is up
	urgent   bool                 // a wake for blocks (or the stream's state), not the mempool only
	last     BlockRef             // the tip as of the last round (Tip)

	// Owned by Run.
	chain   []Block // remembered main-chain blocks, oldest first
	started bool
	failed  bool
	lastErr string
}

type sub struct {
	fn      Subscriber
	pending *Update // not taken yet
}

// New returns a follower of node.
func New(node NodeClient, cfg Config) *Follower {
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.CheckInterval <= 0 {
		cfg.CheckInterval = DefaultCheckInterval
	}
	if cfg.Depth <= 0 {
		cfg.Depth = DefaultDepth
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	f := &Follower{cfg: cfg, node: node, log: cfg.Logger.With(logging.SubsystemKey, "follow"), kick: make(chan struct{}, 1),
		seen: map[string]time.Time{}, poolDirt: true}
	for _, b := range cfg.Start {
		f.chain = append(f.chain, Block{Height: b.Height, Hash: b.Hash})
	}
	return f
}

// Subscribe adds a subscriber; it is given every update from the next round on, in the
// follower's goroutine, in the order subscribed. Subscribe before Run to miss nothing.
func (f *Follower) Subscribe(fn Subscriber) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.subs = append(f.subs, &sub{fn: fn})
}

// Streaming tells whether the node's push stream is up.
func (f *Follower) Streaming() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stream
}

// Tip is the node's tip as of the follower's last round, for readers that want the height
// without asking the node (the page's blocks-to-expiry); false before the first round.
func (f *Follower) Tip() (BlockRef, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last, f.last.Hash != ""
}

// tip is the last main-chain block the follower read (zero before its first round).
func (f *Follower) tip() BlockRef {
	if n := len(f.chain); n > 0 {
		return BlockRef{Height: f.chain[n-1].Height, Hash: f.chain[n-1].Hash}
	}
	return BlockRef{}
}

func (f *Follower) wake() {
	f.mu.Lock()
	f.urgent = true
	f.mu.Unlock()
	f.wakePool()
}

// wakePool wakes Run for the mempool only: the round may wait for mempoolGap.
func (f *Follower) wakePool() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// Run follows the node until ctx ends. Failures (the node away) are logged once each and
// retried.
func (f *Follower) Run(ctx context.Context) {
	if sc, ok := f.node.(StreamClient); ok && !f.cfg.NoStream {
		go f.listen(ctx, sc)
	}
	t := time.NewTimer(0)
	defer t.Stop()
	var last time.Time // the last round's start
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.kick:
			f.mu.Lock()
			urgent := f.urgent
			f.urgent = false
			f.mu.Unlock()
			if wait := mempoolGap - time.Since(last); !urgent && wait > 0 && !f.holdMempool(ctx, wait) {
				return
			}
		case <-t.C:
			f.mu.Lock()
			f.poolDirt = true // a poll reads the mempool: no stream tells of its changes
			f.mu.Unlock()
		}
		last = time.Now()
		more, err := f.Round(ctx)
		if ctx.Err() != nil {
			return
		}
		f.report(err)
		if more && err == nil {
			f.wake()
		}
		f.mu.Lock()
		every := f.cfg.PollInterval
		if f.stream && err == nil {
			every = f.cfg.CheckInterval
		}
		f.mu.Unlock()
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(every)
	}
}

// holdMempool waits up to d for a round woken by the mempool only, less when a block comes;
// false when ctx ended.
func (f *Follower) holdMempool(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		case <-f.kick:
			f.mu.Lock()
			urgent := f.urgent
			f.urgent = false
			f.mu.Unlock()
			if urgent {
				return true
			}
		}
	}
}

func (f *Follower) report(err error) {
	switch {
	case errors.Is(err, errSubscriber): // told by deliver
	case err != nil:
		if msg := err.Error(); msg != f.lastErr {
			f.log.Warn("cannot follow the node; retrying", "err", err)
			f.lastErr = msg
		}
	case f.lastErr != "":
		f.log.Info("following the node again")
		f.lastErr = ""
	}
}

// listen reads the node's stream and wakes the rounds: a block event at once, mempool
// events marking the mempool to read. A node that refuses the stream (no such endpoint,
// HTTP 4xx) is polled from then on.
func (f *Follower) listen(ctx context.Context, sc StreamClient) {
	down := func() {
		f.mu.Lock()
		was := f.stream
		f.stream = false
		f.mu.Unlock()
		if was {
			f.wake() // Run polls again from now
		}
	}
	err := sc.Follow(ctx, rpcapi.FollowOptions{OnError: func(error) { down() }}, func(ev rpcapi.Event) error {
		now := time.Now()
		f.mu.Lock()
		switch ev.Type {
		case rpcapi.EventHello:
			// Connected (again): what happened while the stream was down is read now.
			f.stream, f.poolDirt = true, true
		case rpcapi.EventGap:
			f.resync, f.poolDirt = true, true
		case rpcapi.EventBlockConnected:
			if len(f.seen) > 4*maxBlocksPerRound {
				clear(f.seen)
			}
			f.seen[ev.Hash] = now
			f.poolDirt = true
		case rpcapi.EventBlockDisconnected:
			f.poolDirt = true
		case rpcapi.EventTxAdded, rpcapi.EventTxRemoved:
			f.poolDirt = true
			f.mu.Unlock()
			f.wakePool()
			return nil
		case rpcapi.EventDropped:
			f.stream = false
		default: // ping
			f.mu.Unlock()
			return nil
		}
		f.mu.Unlock()
		f.wake()
		return nil
	})
	down()
	if err != nil && ctx.Err() == nil {
		f.log.Info("the node's stream is not available; polling it", "every", f.cfg.PollInterval, "err", err)
	}
}

// Round brings the follower up to the node once and hands the update to the subscribers:
// blocks undone since the last round, new blocks (at most 100; more tells that more are
// waiting), and the mempool when at the tip. What was read before a failure is handed out
// too.
func (f *Follower) Round(ctx context.Context) (more bool, err error) {
	f.mu.Lock()
	u := Update{Resync: f.resync || !f.started || f.failed}
	readPool := f.cfg.Mempool && f.poolDirt
	f.resync, f.poolDirt = false, false
	f.mu.Unlock()
	more, err = f.round(ctx, &u, readPool)
	if (err != nil || more) && readPool {
		f.mu.Lock()
		f.poolDirt = true
		f.mu.Unlock()
	}
	f.failed = err != nil
	if !f.started && err != nil && u.empty() {
		return more, err
	}
	f.started = true
	u.Tip = f.tip()
	f.mu.Lock()
	f.last = u.Tip
	f.mu.Unlock()
	if !f.deliver(ctx, u) && err == nil {
		err = errSubscriber
	}
	return more, err
}

// errSubscriber is Round's error when a subscriber did not take its update.
var errSubscriber = errors.New("a subscriber did not take the update; it is given again")

func (f *Follower) round(ctx context.Context, u *Update, readPool bool) (bool, error) {
	tip, err := f.node.GetBlockCount(ctx)
	if err != nil {
		return false, err
	}
	if len(f.chain) == 0 {
		at := tip
		if f.cfg.StartHeight > 0 && f.cfg.StartHeight < tip {
			at = f.cfg.StartHeight
		}
		hash, err := f.node.GetBlockHash(ctx, at)
		if err != nil {
			return false, err
		}
		f.chain = []Block{{Height: at, Hash: hash}}
	}
	if err := f.undoReorg(ctx, tip, u); err != nil {
		return false, err
	}
	now := time.Now()
	for n := 0; f.tip().Height < tip; n++ {
		if n == maxBlocksPerRound {
			return true, nil
		}
		ok, err := f.connect(ctx, f.tip().Height+1, now, u)
		if err != nil {
			return false, err
		}
		if !ok {
			return true, nil // the chain changed under us: the next round finds the fork
		}
	}
	if readPool {
		if mc, ok := f.node.(MempoolClient); ok {
			ids, err := mc.GetRawMempool(ctx)
			if err != nil {
				return false, err
			}
			u.Mempool, u.MempoolRead = ids, true
		}
	}
	return false, nil
}

// undoReorg finds the newest remembered block still in the main chain and disconnects those
// above it, newest first.
func (f *Follower) undoReorg(ctx context.Context, tip uint64, u *Update) error {
	k := len(f.chain) - 1
	for ; k >= 0; k-- {
		b := f.chain[k]
		if b.Height > tip {
			continue
		}
		hash, err := f.node.GetBlockHash(ctx, b.Height)
		if err != nil {
			return err
		}
		if hash == b.Hash {
			break
		}
	}
	if k == len(f.chain)-1 {
		return nil
	}
	undone := f.chain[k+1:]
	for i := len(undone) - 1; i >= 0; i-- {
		u.Disconnected = append(u.Disconnected, undone[i])
	}
	f.log.Info("blocks left the main chain", "blocks", len(undone), "from_height", undone[0].Height)
	if k < 0 {
		// Deeper than remembered: go on from below the oldest remembered block.
		f.log.Warn("reorganisation deeper than the remembered blocks", "depth", f.cfg.Depth)
		base := undone[0].Height - 1
		hash, err := f.node.GetBlockHash(ctx, base)
		if err != nil {
			f.chain = nil
			return err
		}
		f.chain = []Block{{Height: base, Hash: hash}}
		u.Resync = true
		return nil
	}
	f.chain = slices.Clip(f.chain[:k+1])
	return nil
}

// connect reads the block at height; false when it does not extend the last one read.
func (f *Follower) connect(ctx context.Context, height uint64, now time.Time, u *Update) (bool, error) {
	hash, err := f.node.GetBlockHash(ctx, height)
	if err != nil {
		return false, err
	}
	blk, err := f.node.GetBlock(ctx, hash)
	if err != nil {
		return false, err
	}
	// The block read must extend the last one (the chain may change between the calls); a
	// node that does not tell the previous hash is taken at its word for the height.
	if n := len(f.chain); n > 0 && blk.PrevHash != "" && blk.PrevHash != f.chain[n-1].Hash {
		return false, nil
	}
	b := Block{Height: height, Hash: hash, PrevHash: blk.PrevHash, Txs: blk.Tx, Seen: now}
	f.mu.Lock()
	if t, ok := f.seen[hash]; ok {
		b.Seen = t
		delete(f.seen, hash)
	}
	f.mu.Unlock()
	f.chain = append(f.chain, b)
	if over := len(f.chain) - f.cfg.Depth; over > 0 {
		f.chain = slices.Delete(f.chain, 0, over)
	}
	u.Connected = append(u.Connected, b)
	return true, nil
}

// deliver hands u to every subscriber, after what an earlier failure left them; false when
// one did not take it.
func (f *Follower) deliver(ctx context.Context, u Update) bool {
	f.mu.Lock()
	subs := slices.Clone(f.subs)
	f.mu.Unlock()
	ok := true
	for _, s := range subs {
		next := u
		if s.pending != nil {
			s.pending.merge(u)
			next = *s.pending
		}
		if next.empty() {
			continue
		}
		if err := s.fn(ctx, next); err != nil {
			if ctx.Err() == nil {
				f.log.Warn("a subscriber did not take an update; it is given again", "err", err)
			}
			p := next
			s.pending = &p
			ok = false
			continue
		}
		s.pending = nil
	}
	return ok
}
