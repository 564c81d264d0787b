package miner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// Defaults of the Config intervals.
const (
	DefaultTipPoll     = 250 * time.Millisecond
	DefaultMempoolPoll = 2 * time.Second
	DefaultTimeRoll    = 30 * time.Second
	DefaultMaxBackoff  = 5 * time.Second
	// DefaultRegtestInterval is Config.Interval's default on regtest without a Blocks limit.
	// Unpaced, a regtest miner solves hundreds of blocks a second (14,496 in 16 s were
	// reported), and since each block's time must pass the median of the eleven before it,
	// block time ran 40 minutes ahead of the clock. At one block a second it stays at the
	// clock, and a developer's chain grows at a pace one can follow.
	DefaultRegtestInterval = time.Second
	// InfoBlocks is how many accepted blocks are logged one by one at info level; the later
	// ones are logged at debug level (a caller's periodic status line counts them).
	InfoBlocks = 10
)

const (
	minBackoff  = 250 * time.Millisecond
	pollTimeout = 2 * time.Second  // getblockcount, getblockhash, getmempoolinfo
	callTimeout = 30 * time.Second // getblocktemplate, submitblock
	// maxTimeAhead bounds how far a rolled timestamp may run ahead of the clock (nodes
	// accept 15 minutes).
	maxTimeAhead = 10 * 60
)

// Config configures a Miner. Node and Address are required; zero values of the other
// fields mean their defaults.
type Config struct {
	Node NodeClient
	// NodeURL names the node in messages.
	NodeURL string
	Address Address
	// Network is the network the user named, if any. Without it the network comes from
	// the node (getblockchaininfo) and must be one the address belongs to.
	Network *params.Network
	// Threads is the number of hashing threads (default: the number of CPUs).
	Threads int
	// Blocks makes Run return after that many accepted blocks (0: run until cancelled).
	Blocks uint64
	// Interval paces the miner: after an accepted block it waits Interval before it asks for
	// the next template, so at most one block is mined per Interval. 0: DefaultRegtestInterval
	// on regtest when Blocks is 0, no pause otherwise; negative: no pause.
	Interval time.Duration
	// Logger receives the miner's events (default: none).
	Logger *slog.Logger
	// OnBlock is called, from the controller goroutine, after each submitted block.
	OnBlock func(BlockEvent)

	TipPoll     time.Duration // how often to check the tip (getblockcount, getblockhash)
	MempoolPoll time.Duration // how often to check the mempool (getmempoolinfo)
	TimeRoll    time.Duration // how often to move the header's timestamp to now
	MaxBackoff  time.Duration // longest wait between attempts to reach the node
}

// BlockEvent reports a submitted block.
type BlockEvent struct {
	Hash     string
	Height   uint64
	Txs      int
	Accepted bool
	// Reason is the node's message when the block was rejected.
	Reason string
}

// Stats is a snapshot of a Miner's counters.
type Stats struct {
	Started      time.Time
	Elapsed      time.Duration
	Threads      int
	Hashes       uint64
	ThreadHashes []uint64
	// Hashrate is hashes per second over the last RateWindow; AvgHashrate since Started.
	Hashrate    float64
	AvgHashrate float64
	// Accepted and Rejected count the node's answers to submitblock; Stale counts
	// solutions dropped because their parent stopped being the tip before they could be
	// submitted; SubmitErrors counts submissions that got no answer.
	Accepted, Rejected, Stale, SubmitErrors uint64
	// Templates counts the templates mined on; Rolls the timestamp rolls.
	Templates, Rolls uint64
	// Height is the chain height the miner works on top of (the tip it knows).
	Height uint64
	// NodeUp is false while the node does not answer; Mining is true while a job is
	// being hashed.
	NodeUp bool
	Mining bool
	// Pausing is true while the miner waits out Interval after a block.
	Pausing bool
}

// RateWindow is the span over which Stats.Hashrate is measured.
const RateWindow = 10 * time.Second

// Miner mines blocks with a node's templates. Create it with New and start it with Run.
type Miner struct {
	cfg      Config
	log      *slog.Logger
	h        *hasher
	chunks   uint64 // chunks per job (the full 64-bit space; tests make it smaller)
	running  atomic.Bool
	net      *params.Network
	powLimit *big.Int
	checked  bool          // the node's network was compared with the address
	interval time.Duration // Config.Interval resolved for net (0: no pause)
	jobID    uint64

	mu      sync.Mutex // guards the fields below
	st      Stats
	samples []rateSample
}

type rateSample struct {
	t      time.Time
	hashes uint64
}

// New checks cfg and returns a Miner.
func New(cfg Config) (*Miner, error) {
	if cfg.Node == nil {
		return nil, errors.New("miner: no node")
	}
	if cfg.Address.String == "" {
		return nil, errors.New("miner: no mining address")
	}
	if cfg.Network != nil && !cfg.Address.ValidOn(cfg.Network) {
		return nil, fmt.Errorf("%w: the address is for %s, not %s", ErrWrongNetwork, cfg.Address.NetworkNames(), cfg.Network.Name)
	}
	if cfg.Threads <= 0 {
		cfg.Threads = runtime.NumCPU()
	}
	if cfg.TipPoll <= 0 {
		cfg.TipPoll = DefaultTipPoll
	}
	if cfg.MempoolPoll <= 0 {
		cfg.MempoolPoll = DefaultMempoolPoll
	}
	if cfg.TimeRoll <= 0 {
		cfg.TimeRoll = DefaultTimeRoll
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	m := &Miner{cfg: cfg, log: cfg.Logger, h: newHasher(cfg.Threads), chunks: fullSpaceChunks}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	m.net = cfg.Network
	if m.net == nil && len(cfg.Address.Networks) == 1 {
		m.net = cfg.Address.Networks[0]
	}
	if m.net != nil {
		m.powLimit = m.net.PowLimit
	}
	m.interval = m.intervalOn(m.net)
	m.st.Threads = cfg.Threads
	m.st.NodeUp = true
	return m, nil
}

// Threads is the number of hashing threads.
func (m *Miner) Threads() int { return m.cfg.Threads }

// Stats returns a snapshot of the counters.
func (m *Miner) Stats() Stats {
	now := time.Now()
	hashes := m.h.total()
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.st
	s.Hashes = hashes
	s.ThreadHashes = m.h.perThread()
	if !s.Started.IsZero() {
		s.Elapsed = now.Sub(s.Started)
		if sec := s.Elapsed.Seconds(); sec > 0 {
			s.AvgHashrate = float64(hashes) / sec
		}
		s.Hashrate = s.AvgHashrate
		for _, smp := range m.samples {
			if now.Sub(smp.t) <= RateWindow+time.Second/2 {
				if dt := now.Sub(smp.t).Seconds(); dt > 0.5 {
					s.Hashrate = float64(hashes-smp.hashes) / dt
				}
				break
			}
		}
	}
	return s
}

func (m *Miner) update(f func(*Stats)) {
	m.mu.Lock()
	f(&m.st)
	m.mu.Unlock()
}

// sample records the hash count once a second for the windowed rate.
func (m *Miner) sample(now time.Time) {
	n := m.h.total()
	m.mu.Lock()
	m.samples = append(m.samples, rateSample{now, n})
	if len(m.samples) > int(RateWindow/time.Second)+2 {
		m.samples = m.samples[1:]
	}
	m.mu.Unlock()
}

// Run mines until ctx is cancelled (then it returns nil), until Blocks blocks were
// accepted (nil), or until a problem retrying cannot fix (ErrWrongNetwork, ErrNodeRefused).
// A Miner runs once.
func (m *Miner) Run(ctx context.Context) error {
	if m.running.Swap(true) {
		return errors.New("miner: Run called twice")
	}
	m.update(func(s *Stats) { s.Started = time.Now() })
	hctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	m.h.run(hctx, &wg)
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-hctx.Done():
				return
			case now := <-t.C:
				m.sample(now)
			}
		}
	})
	defer func() {
		m.h.board.close()
		cancel()
		wg.Wait()
		m.update(func(s *Stats) { s.Mining = false })
	}()
	return m.control(ctx)
}

// fatalError marks an error retrying cannot fix.
type fatalError struct{ error }

func (e fatalError) Unwrap() error { return e.error }

// controller is the state of the control loop.
type controller struct {
	cur     *job                // the job being hashed (possibly stopped)
	rnd     *round              // the round of cur
	mempool *rpcapi.MempoolInfo // mempool totals taken just before cur's template
	down    bool                // the last call failed for lack of an answer
	tip     types.Hash          // the tip as last seen: a polled tip, a template's parent, our block
	backoff time.Duration
	// rejected holds the blocks the node refused, never submitted again; the refusal's
	// reason is logged once, and its repetitions counted (logged again at powers of two).
	rejected     map[types.Hash]struct{}
	rejectReason string
	rejectCount  int
}

func (m *Miner) control(ctx context.Context) error {
	var c controller
	tip := time.NewTicker(m.cfg.TipPoll)
	defer tip.Stop()
	mem := time.NewTicker(m.cfg.MempoolPoll)
	defer mem.Stop()
	roll := time.NewTimer(m.cfg.TimeRoll)
	defer roll.Stop()
	need, why := true, "start"
	var retry <-chan time.Time
	for {
		if need && retry == nil {
			err := m.refresh(ctx, &c, why)
			switch {
			case ctx.Err() != nil:
				return nil
			case err == nil:
				need = false
				if c.rejectCount == 0 { // a refusal's backoff lasts until a block is accepted
					c.backoff = 0
				}
				roll.Reset(m.cfg.TimeRoll)
			default:
				if fe := (fatalError{}); errors.As(err, &fe) {
					return fe.error
				}
				c.backoff = m.nextBackoff(c.backoff)
				m.log.Warn("no block template; retrying", "node", m.cfg.NodeURL, "in", c.backoff, "err", err)
				retry = time.After(c.backoff)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-retry:
			retry = nil
			m.update(func(s *Stats) { s.Pausing = false })
		case s := <-m.h.solutions:
			done, refused, accepted := m.submit(ctx, &c, s)
			if done {
				return nil
			}
			need, why = true, "block submitted"
			if accepted && m.interval > 0 {
				// At most one block per interval: the next template waits.
				retry = time.After(m.interval)
				m.update(func(s *Stats) { s.Pausing = true })
			}
			if refused {
				// The next template is likely the same block: wait before asking again,
				// longer each time, instead of resubmitting in a tight loop.
				c.backoff = m.nextBackoff(c.backoff)
				retry = time.After(c.backoff)
			}
		case <-tip.C:
			if c.cur == nil || c.cur.dead() {
				continue // nothing is hashed, or a fresh template is on its way anyway
			}
			if changed, height, hash := m.tipChanged(ctx, &c); changed {
				c.tip, _ = types.ParseHash(hash)
				c.rnd.stale.Store(true)
				m.h.board.set(nil)
				m.log.Info("new tip from elsewhere; switching templates", "height", height, "hash", hash)
				m.update(func(s *Stats) { s.Height = height; s.Mining = false })
				need, why = true, "new tip"
			}
		case <-mem.C:
			if need || c.cur == nil || c.mempool == nil {
				continue
			}
			cctx, cancel := context.WithTimeout(ctx, pollTimeout)
			mi, err := m.cfg.Node.GetMempoolInfo(cctx)
			cancel()
			m.reachable(&c, err, "node unreachable")
			if err == nil && *mi != *c.mempool {
				m.log.Debug("mempool changed", "size", mi.Size, "bytes", mi.Bytes, "total_fee", mi.TotalFee)
				need, why = true, "mempool changed"
			}
		case <-roll.C:
			m.roll(&c, roll, "time")
		case id := <-m.h.exhausted:
			if c.cur != nil && id == c.cur.id {
				m.roll(&c, roll, "nonce space used up")
			}
		}
	}
}

// reachable tracks whether the node answers: a transport error marks it down (logged once
// with the given message, when not empty), any answer marks it up again. It returns err
// made readable: an unreachable node's error says so.
func (m *Miner) reachable(c *controller, err error, downMsg string) error {
	switch {
	case err == nil || rpcError(err) != nil:
		if c.down {
			c.down = false
			m.log.Info("node reachable again", "node", m.cfg.NodeURL)
			m.update(func(s *Stats) { s.NodeUp = true })
		}
		return err
	case errors.Is(err, context.Canceled):
		return err
	}
	err = unreachableError{err}
	if !c.down {
		c.down = true
		if downMsg != "" {
			m.log.Warn(downMsg, "node", m.cfg.NodeURL, "err", err)
		}
		m.update(func(s *Stats) { s.NodeUp = false })
	}
	return err
}

// unreachableError is a call that got no answer from the node.
type unreachableError struct{ err error }

func (e unreachableError) Unwrap() error { return e.err }

func (e unreachableError) Error() string {
	if jsonrpc.IsConnRefused(e.err) {
		return "node unreachable: connection refused (is the node running, with --rpc-bind on this address?)"
	}
	return "node unreachable: " + e.err.Error()
}

// refresh fetches a template and posts its first job.
func (m *Miner) refresh(ctx context.Context, c *controller, why string) error {
	if !m.checked {
		if err := m.checkNetwork(ctx, c); err != nil {
			return err
		}
	}
	// The mempool totals are read before the template, so that any change after them,
	// even one the template already holds, makes a later poll fetch a fresh template.
	cctx, cancel := context.WithTimeout(ctx, pollTimeout)
	mi, err := m.cfg.Node.GetMempoolInfo(cctx)
	cancel()
	if err = m.reachable(c, err, ""); err != nil {
		if rpcError(err) == nil {
			return err
		}
		mi = nil // no getmempoolinfo: rely on the tip and time checks
	}
	cctx, cancel = context.WithTimeout(ctx, callTimeout)
	t, err := m.cfg.Node.GetBlockTemplate(cctx, m.cfg.Address.String)
	cancel()
	if err = m.reachable(c, err, ""); err != nil {
		if e := rpcError(err); e != nil {
			if e.Code == jsonrpc.CodeInvalidParams || e.Code == jsonrpc.CodeMethodNotFound ||
				errors.Is(err, reason.InvalidAddress) {
				return fatalError{fmt.Errorf("%w: getblocktemplate %s: %s", ErrNodeRefused, m.cfg.Address.String, e.Message)}
			}
			return fmt.Errorf("node gives no block template: %s", e.Message)
		}
		return err
	}
	w, err := NewWork(t, m.cfg.Address.PubKeyHash, m.powLimit)
	if err != nil {
		return err
	}
	if !c.tip.IsZero() && c.tip != w.PrevHash {
		// Another block arrived between our last look and this template.
		m.log.Info("new tip from elsewhere; switching templates", "height", w.Height-1, "hash", w.PrevHash)
	}
	c.tip = w.PrevHash
	if c.rnd == nil || c.rnd.prev != w.PrevHash || c.rnd.solved.Load() || c.rnd.stale.Load() {
		c.rnd = &round{prev: w.PrevHash}
	}
	c.mempool = mi
	m.post(c, w, w.Header.Timestamp)
	m.log.Debug("new template", "reason", why, "height", w.Height, "prev", w.PrevHash, "txs", len(w.Transactions),
		"fees", w.Fees, "target", fmt.Sprintf("0x%08x", w.Header.DifficultyTarget))
	m.update(func(s *Stats) {
		s.Templates++
		s.Height = w.Height - 1
		s.Mining = true
	})
	return nil
}

// post makes a job of w at timestamp ts and hands it to the threads.
func (m *Miner) post(c *controller, w *Work, ts uint64) {
	m.jobID++
	c.cur = newJob(m.jobID, w, c.rnd, ts, m.chunks)
	m.h.board.set(c.cur)
}

// roll moves the current job's timestamp to now (at least one second on), which gives the
// threads a fresh nonce space.
func (m *Miner) roll(c *controller, timer *time.Timer, why string) {
	timer.Reset(m.cfg.TimeRoll)
	if c.cur == nil || c.cur.round.solved.Load() || c.cur.round.stale.Load() {
		return
	}
	now := uint64(time.Now().Unix())
	ts := max(now, c.cur.ts+1)
	if ts > now+maxTimeAhead {
		// Only a nonce space used up more than once a second gets here; wait for the clock.
		m.log.Warn("cannot roll the timestamp further ahead of the clock; waiting", "timestamp", c.cur.ts)
		m.h.board.set(nil)
		timer.Reset(time.Second)
		return
	}
	m.post(c, c.cur.work, ts)
	m.log.Debug("timestamp rolled", "reason", why, "timestamp", ts, "height", c.cur.work.Height)
	m.update(func(s *Stats) { s.Rolls++; s.Mining = true })
}

// tipChanged asks the node for its tip and compares it with the current job's parent.
func (m *Miner) tipChanged(ctx context.Context, c *controller) (changed bool, height uint64, hash string) {
	cctx, cancel := context.WithTimeout(ctx, pollTimeout)
	defer cancel()
	n, err := m.cfg.Node.GetBlockCount(cctx)
	if m.reachable(c, err, "node unreachable") != nil {
		return false, 0, ""
	}
	hash, err = m.cfg.Node.GetBlockHash(cctx, n)
	if m.reachable(c, err, "node unreachable") != nil {
		return false, 0, ""
	}
	return n+1 != c.cur.work.Height || hash != c.cur.work.PrevHash.String(), n, hash
}

// checkNetwork compares the node's network with the address's and --network.
func (m *Miner) checkNetwork(ctx context.Context, c *controller) error {
	cctx, cancel := context.WithTimeout(ctx, pollTimeout)
	info, err := m.cfg.Node.GetBlockchainInfo(cctx)
	cancel()
	if err = m.reachable(c, err, ""); err != nil {
		if rpcError(err) == nil {
			return err
		}
		m.checked = true // the node does not say; the template checks still apply
		return nil
	}
	m.checked = true
	if info.Network == "" {
		return nil
	}
	n, err := params.ByName(info.Network)
	if err != nil {
		m.log.Warn("node reports an unknown network", "network", info.Network)
		return nil
	}
	if m.cfg.Network != nil && n != m.cfg.Network {
		return fatalError{fmt.Errorf("%w: the node runs %s, not %s", ErrWrongNetwork, n.Name, m.cfg.Network.Name)}
	}
	if !m.cfg.Address.ValidOn(n) {
		return fatalError{fmt.Errorf("%w: the node runs %s, the address %s is for %s", ErrWrongNetwork,
			n.Name, m.cfg.Address.String, m.cfg.Address.NetworkNames())}
	}
	m.net, m.powLimit = n, n.PowLimit
	m.interval = m.intervalOn(n)
	m.log.Info("connected to node", "network", n.Name, "height", info.Height, "threads", m.cfg.Threads,
		"interval", m.interval)
	return nil
}

// intervalOn is Config.Interval resolved for network net (nil: not known yet): the pause
// after an accepted block, 0 for none.
func (m *Miner) intervalOn(net *params.Network) time.Duration {
	switch {
	case m.cfg.Interval > 0:
		return m.cfg.Interval
	case m.cfg.Interval < 0:
		return 0
	case net == params.Regtest && m.cfg.Blocks == 0:
		return DefaultRegtestInterval
	}
	return 0
}

// submit sends a claimed solution, unless its round went stale or the node refused the same
// block before. It reports whether the Blocks limit is reached, whether the node refused the
// block and whether it accepted it.
func (m *Miner) submit(ctx context.Context, c *controller, s solution) (done, refused, accepted bool) {
	j := s.job
	if c.cur != nil && c.cur.round == j.round {
		m.h.board.set(nil) // the round is solved: idle until the next template
		m.update(func(s *Stats) { s.Mining = false })
	}
	h := j.work.HeaderAt(j.ts, s.nonce)
	hash := h.Hash()
	if j.round.stale.Load() {
		m.update(func(s *Stats) { s.Stale++ })
		m.log.Info("solution for a replaced tip dropped", "height", j.work.Height, "hash", hash)
		return false, false, false
	}
	if [32]byte(hash) != s.hash || !pow.HashMeetsTarget((*[32]byte)(&hash), &j.target) {
		m.log.Error("hashing kernel reported a wrong solution; dropped", "nonce", s.nonce, "kernel_hash", fmt.Sprintf("%x", s.hash), "hash", hash)
		return false, false, false
	}
	if _, seen := c.rejected[types.Hash(hash)]; seen {
		m.log.Debug("solution is a block the node refused before; dropped", "height", j.work.Height, "hash", hash)
		return false, true, false
	}
	ev := BlockEvent{Hash: hash.String(), Height: j.work.Height, Txs: len(j.work.Transactions)}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	err := m.cfg.Node.SubmitBlock(cctx, j.work.BlockHex(h))
	cancel()
	err = m.reachable(c, err, "")
	switch e := rpcError(err); {
	case err == nil:
		ev.Accepted, accepted = true, true
		c.tip = types.Hash(hash)
		c.backoff, c.rejectReason, c.rejectCount = 0, "", 0
		var n uint64
		m.update(func(s *Stats) {
			s.Accepted++
			n = s.Accepted
			s.Height = j.work.Height
			done = m.cfg.Blocks > 0 && s.Accepted >= m.cfg.Blocks
		})
		m.logAccepted(n, ev, j.work.Fees)
	case e != nil:
		ev.Reason = e.Message
		refused = true
		m.update(func(s *Stats) { s.Rejected++ })
		if c.rejected == nil || len(c.rejected) >= maxRejected {
			c.rejected = make(map[types.Hash]struct{})
		}
		c.rejected[types.Hash(hash)] = struct{}{}
		m.noteRejection(c, ev, e.Message)
	case ctx.Err() != nil:
		return false, false, false
	default:
		m.update(func(s *Stats) { s.SubmitErrors++ })
		m.log.Warn("block not submitted", "height", ev.Height, "hash", ev.Hash, "err", err)
		return false, false, false
	}
	if m.cfg.OnBlock != nil {
		m.cfg.OnBlock(ev)
	}
	return done, refused, accepted
}

// logAccepted logs the n-th accepted block: the first InfoBlocks at info level, the later ones
// at debug level, so that a miner left running logs a handful of lines, not one a block.
func (m *Miner) logAccepted(n uint64, ev BlockEvent, fees uint64) {
	attrs := []any{"height", ev.Height, "hash", ev.Hash, "txs", ev.Txs, "fees", fees}
	switch {
	case n < InfoBlocks:
		m.log.Info("block accepted", attrs...)
	case n == InfoBlocks:
		m.log.Info("block accepted", append(attrs, "note", fmt.Sprintf("the first %d blocks are logged; later ones at debug level", InfoBlocks))...)
	default:
		m.log.Debug("block accepted", attrs...)
	}
}

// nextBackoff is the wait after one of d: twice as long, from minBackoff up to MaxBackoff.
func (m *Miner) nextBackoff(d time.Duration) time.Duration {
	return min(max(2*d, minBackoff), m.cfg.MaxBackoff)
}

// maxRejected bounds the remembered refused blocks.
const maxRejected = 1024

// noteRejection logs a refusal once per reason: a new reason at warning level, its
// repetitions counted and logged again at 2, 4, 8, ... times, the rest at debug level.
func (m *Miner) noteRejection(c *controller, ev BlockEvent, why string) {
	if why != c.rejectReason {
		c.rejectReason, c.rejectCount = why, 1
		m.log.Warn("block rejected", "height", ev.Height, "hash", ev.Hash, "reason", why)
		return
	}
	c.rejectCount++
	if c.rejectCount&(c.rejectCount-1) == 0 {
		m.log.Warn("blocks rejected again for the same reason", "times", c.rejectCount, "reason", why, "next_try_in", m.nextBackoff(c.backoff))
		return
	}
	m.log.Debug("block rejected", "height", ev.Height, "hash", ev.Hash, "times", c.rejectCount)
}
