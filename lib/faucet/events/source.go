package events

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/logging"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// Node is what the source asks of the node, all through its JSON-RPC (*rpcapi.Client).
type Node interface {
	GetBlockCount(ctx context.Context) (uint64, error)
	GetBlockHash(ctx context.Context, height uint64) (string, error)
	GetBlock(ctx context.Context, hash string) (*rpcapi.Block, error)
	GetRawMempool(ctx context.Context) ([]string, error)
	GetTransaction(ctx context.Context, txid string) (*rpcapi.Transaction, error)
	GetAgentProfile(ctx context.Context, address string) (*rpcapi.AgentProfile, error)
	// Call is used for getrawtransaction.
	Call(ctx context.Context, method string, params []any, result any) error
}

var _ Node = (*rpcapi.Client)(nil)

// Defaults of SourceConfig.
const (
	DefaultPollInterval = 100 * time.Millisecond
	DefaultReorgDepth   = 1000
	// maxBlocksPerPoll bounds the blocks one poll reads, so a source far behind publishes
	// as it goes.
	maxBlocksPerPoll = 100
	// maxCache bounds the source's caches (non-agent txids, contract parties).
	maxCache = 100_000
)

// SourceConfig configures a Source.
type SourceConfig struct {
	Node Node
	Hub  *Hub
	// HRP is the network's address prefix (params.Network.HRP).
	HRP string
	// PollInterval is how often the node is asked for its tip and mempool (default 100 ms).
	PollInterval time.Duration
	// ReorgDepth is how many processed blocks are remembered to find where a reorganisation
	// forked (default 1000).
	ReorgDepth int
	Log        *slog.Logger
	Now        func() time.Time
}

// Source follows the node over RPC and publishes the agent events to the hub. It keeps its
// position (the processed blocks of the last ReorgDepth heights with their events, the
// pending transactions, the last score of each agent) in the store, written in the batch of
// the events that go with it, so after a restart it goes on where it stopped: blocks mined
// meanwhile are read, blocks undone meanwhile retracted.
type Source struct {
	cfg  SourceConfig
	log  *slog.Logger
	node Node
	hub  *Hub

	st        sourceState
	nonAgent  map[string]struct{}        // txids seen that are no agent transaction
	contracts map[string]contractParties // contract id → parties
	scores    map[string]uint32          // last score per agent (cache of the store's)
	lastErr   string
}

// sourceState is the source's position, stored as JSON under "source".
type sourceState struct {
	Height  uint64                `json:"height"`
	Blocks  []blockRec            `json:"blocks"` // processed main-chain blocks, oldest first
	Pending map[string]pendingRec `json:"pending"`
}

type blockRec struct {
	Height uint64   `json:"h"`
	Hash   string   `json:"hash"`
	Events []uint64 `json:"events,omitempty"` // ids of the confirmed events of this block
	Txs    []string `json:"txs,omitempty"`    // its agent transactions
}

// pendingRec is a transaction the mempool holds, with its pending event.
type pendingRec struct {
	ID    uint64 `json:"id"`
	Event Event  `json:"event"`
}

type contractParties struct {
	initiator, counterparty string
	value                   uint64
}

// NewSource loads the source's position from the hub's store.
func NewSource(cfg SourceConfig) (*Source, error) {
	if cfg.Node == nil || cfg.Hub == nil || cfg.HRP == "" {
		return nil, errors.New("event source: node, hub and address prefix are required")
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.ReorgDepth <= 0 {
		cfg.ReorgDepth = DefaultReorgDepth
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Source{cfg: cfg, log: cfg.Log.With(logging.SubsystemKey, "events"), node: cfg.Node, hub: cfg.Hub}
	return s, s.load()
}

// load reads the position from the store (none: the source starts at the node's tip).
func (s *Source) load() error {
	s.st = sourceState{Pending: map[string]pendingRec{}}
	s.nonAgent, s.contracts, s.scores = map[string]struct{}{}, map[string]contractParties{}, map[string]uint32{}
	v, err := s.hub.store.Meta("source")
	if err != nil || v == nil {
		return err
	}
	if err := json.Unmarshal(v, &s.st); err != nil {
		return fmt.Errorf("event source position: %w", err)
	}
	if s.st.Pending == nil {
		s.st.Pending = map[string]pendingRec{}
	}
	return nil
}

// Run polls the node every PollInterval until ctx ends. Failures (the node away) are
// logged once each and retried.
func (s *Source) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.PollInterval)
	defer t.Stop()
	for {
		if err := s.Poll(ctx); err != nil && ctx.Err() == nil {
			if msg := err.Error(); msg != s.lastErr {
				s.log.Warn("event source: cannot follow the node; retrying", "err", err)
				s.lastErr = msg
			}
		} else if err == nil && s.lastErr != "" {
			s.log.Info("event source: following the node again")
			s.lastErr = ""
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// poll is the work of one Poll: the events and records it will publish.
type poll struct {
	s       *Source
	now     string
	base    uint64 // the store's last id before this poll
	out     []Event
	meta    map[string][]byte
	touched map[string]bool
	dirty   bool
}

// add queues e and returns the id it will have.
func (p *poll) add(e Event) uint64 {
	e.Time = p.now
	p.out = append(p.out, e)
	for _, a := range e.Addresses() {
		p.touched[a] = true
	}
	p.dirty = true
	return p.base + uint64(len(p.out))
}

// retract queues the retraction of the event id (ev, when known, is that event).
func (p *poll) retract(id uint64, ev *Event, why string) {
	r := Event{Type: TypeRetracted, Retracts: id, Reason: why}
	if ev == nil {
		if e, ok, err := p.s.hub.store.Get(id); err == nil && ok {
			ev = &e
		}
	}
	if ev != nil {
		r.RetractedType, r.TxID, r.Height, r.BlockHash = ev.Type, ev.TxID, ev.Height, ev.BlockHash
		r.Actor, r.Target, r.Initiator, r.Counterparty, r.Subject, r.Address = ev.Actor, ev.Target, ev.Initiator, ev.Counterparty, ev.Subject, ev.Address
		r.ContractID = ev.ContractID
	}
	p.add(r)
}

// Poll brings the event log up to the node once: blocks undone since the last poll
// (retractions), new blocks (confirmed events), the mempool (pending events, retractions of
// those that left it unmined), then the scores of the agents touched.
func (s *Source) Poll(ctx context.Context) error {
	_, last := s.hub.store.Bounds()
	p := &poll{s: s, now: s.cfg.Now().UTC().Format(time.RFC3339Nano), base: last, meta: map[string][]byte{}, touched: map[string]bool{}}
	err := s.poll(ctx, p)
	if err != nil && len(p.out) == 0 && !p.dirty {
		return err
	}
	// Publish what was done, even when a later step failed: the state matches it.
	if p.dirty {
		st, merr := json.Marshal(&s.st)
		if merr != nil {
			return merr
		}
		p.meta["source"] = st
		evs, perr := s.hub.Publish(p.out, p.meta)
		if perr == nil && len(evs) > 0 && evs[len(evs)-1].ID != p.base+uint64(len(evs)) {
			perr = errors.New("event ids out of step: another writer uses the store")
		}
		if perr != nil {
			// The position in memory is ahead of the store's: take the store's again.
			if lerr := s.load(); lerr != nil {
				return errors.Join(perr, lerr)
			}
			return perr
		}
	}
	return err
}

func (s *Source) poll(ctx context.Context, p *poll) error {
	tip, err := s.node.GetBlockCount(ctx)
	if err != nil {
		return err
	}
	if len(s.st.Blocks) == 0 {
		// First start: begin at the tip; the history before it is the profiles'.
		hash, err := s.node.GetBlockHash(ctx, tip)
		if err != nil {
			return err
		}
		s.st.Height, s.st.Blocks = tip, []blockRec{{Height: tip, Hash: hash}}
		p.dirty = true
	}
	if err := s.undoReorg(ctx, tip, p); err != nil {
		return err
	}
	for n := 0; s.st.Height < tip && n < maxBlocksPerPoll; n++ {
		ok, err := s.connect(ctx, s.st.Height+1, p)
		if err != nil {
			return err
		}
		if !ok {
			break // the chain changed under us: the next poll finds the fork
		}
	}
	if s.st.Height == tip {
		if err := s.mempool(ctx, p); err != nil {
			return err
		}
	}
	return s.readScores(ctx, p)
}

// undoReorg finds the newest remembered block still in the main chain and retracts the
// events of those above it, newest first.
func (s *Source) undoReorg(ctx context.Context, tip uint64, p *poll) error {
	k := len(s.st.Blocks) - 1
	for ; k >= 0; k-- {
		b := s.st.Blocks[k]
		if b.Height > tip {
			continue
		}
		hash, err := s.node.GetBlockHash(ctx, b.Height)
		if errors.Is(err, reason.HeightOutOfRange) {
			continue
		}
		if err != nil {
			return err
		}
		if hash == b.Hash {
			break
		}
	}
	if k == len(s.st.Blocks)-1 {
		return nil
	}
	undone := s.st.Blocks[k+1:]
	for i := len(undone) - 1; i >= 0; i-- {
		b := undone[i]
		for j := len(b.Events) - 1; j >= 0; j-- {
			p.retract(b.Events[j], nil, ReasonReorg)
		}
		for _, txid := range b.Txs {
			delete(s.nonAgent, txid)
		}
	}
	s.log.Info("event source: blocks left the main chain; their events retracted", "blocks", len(undone),
		"from_height", undone[0].Height)
	if k < 0 {
		// Deeper than remembered: go on from below the oldest remembered block.
		s.log.Warn("event source: reorganisation deeper than the remembered blocks", "depth", s.cfg.ReorgDepth)
		s.st.Height = undone[0].Height - 1
		s.st.Blocks = nil
	} else {
		s.st.Height = s.st.Blocks[k].Height
		s.st.Blocks = s.st.Blocks[:k+1]
	}
	p.dirty = true
	return nil
}

// connect reads the block at height; false when it does not extend the last processed one.
func (s *Source) connect(ctx context.Context, height uint64, p *poll) (bool, error) {
	hash, err := s.node.GetBlockHash(ctx, height)
	if err != nil {
		return false, err
	}
	blk, err := s.node.GetBlock(ctx, hash)
	if err != nil {
		return false, err
	}
	if n := len(s.st.Blocks); n > 0 && s.st.Blocks[n-1].Height == height-1 && blk.PrevHash != s.st.Blocks[n-1].Hash {
		return false, nil
	}
	// Decode the whole block before changing anything, so a failure leaves no half block.
	rec := blockRec{Height: height, Hash: hash}
	var evs []Event
	for i, txid := range blk.Tx {
		if i == 0 {
			continue // the coinbase
		}
		var ev Event
		if pr, ok := s.st.Pending[txid]; ok {
			ev = pr.Event
		} else if _, ok := s.nonAgent[txid]; ok {
			continue
		} else {
			e, err := s.decode(ctx, txid)
			if err != nil {
				return false, err
			}
			if e == nil {
				continue
			}
			ev = *e
		}
		ev.Status, ev.Height, ev.BlockHash = StatusConfirmed, height, hash
		evs = append(evs, ev)
		rec.Txs = append(rec.Txs, txid)
	}
	for _, txid := range blk.Tx {
		delete(s.st.Pending, txid)
		delete(s.nonAgent, txid)
	}
	for _, ev := range evs {
		rec.Events = append(rec.Events, p.add(ev))
	}
	s.st.Blocks = append(s.st.Blocks, rec)
	if over := len(s.st.Blocks) - s.cfg.ReorgDepth; over > 0 {
		s.st.Blocks = slices.Delete(s.st.Blocks, 0, over)
	}
	s.st.Height = height
	p.dirty = true
	return true, nil
}

// mempool publishes the pending events of the agent transactions the mempool holds that
// are new, and retracts those of the transactions that left it without being mined.
func (s *Source) mempool(ctx context.Context, p *poll) error {
	ids, err := s.node.GetRawMempool(ctx)
	if err != nil {
		return err
	}
	in := make(map[string]bool, len(ids))
	for _, txid := range ids {
		in[txid] = true
	}
	mined := map[string]bool{} // agent transactions of the remembered blocks
	for _, b := range s.st.Blocks {
		for _, txid := range b.Txs {
			mined[txid] = true
		}
	}
	for _, txid := range ids {
		if _, ok := s.st.Pending[txid]; ok || mined[txid] {
			continue
		}
		if _, ok := s.nonAgent[txid]; ok {
			continue
		}
		e, err := s.decode(ctx, txid)
		if errors.Is(err, reason.TxNotFound) {
			continue // gone already (mined: the next block's; dropped: never seen)
		}
		if err != nil {
			return err
		}
		if e == nil {
			continue
		}
		e.Status = StatusPending
		id := p.add(*e)
		e.ID, e.Time = id, p.now
		s.st.Pending[txid] = pendingRec{ID: id, Event: *e}
	}
	// Left the mempool: mined (the next block's event confirms it) or dropped.
	var gone []pendingRec
	for txid, pr := range s.st.Pending {
		if in[txid] {
			continue
		}
		tx, err := s.node.GetTransaction(ctx, txid)
		if err == nil && tx.BlockHash != "" {
			continue
		}
		if err != nil && !errors.Is(err, reason.TxNotFound) {
			return err
		}
		if err == nil && tx.InMempool {
			continue // accepted again since getrawmempool
		}
		gone = append(gone, pr)
	}
	sort.Slice(gone, func(i, j int) bool { return gone[i].ID < gone[j].ID })
	for _, pr := range gone {
		p.retract(pr.ID, &pr.Event, ReasonDropped)
		delete(s.st.Pending, pr.Event.TxID)
	}
	// Forget the non-agent txids the mempool no longer has.
	if len(s.nonAgent) > maxCache {
		s.nonAgent = map[string]struct{}{}
	}
	for txid := range s.nonAgent {
		if !in[txid] {
			delete(s.nonAgent, txid)
		}
	}
	return nil
}

// readScores reads the profile of every agent this poll touched and publishes
// score_changed where the score differs from the last one published (or recorded at the
// agent's first sight).
func (s *Source) readScores(ctx context.Context, p *poll) error {
	addrs := make([]string, 0, len(p.touched))
	for a := range p.touched {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	pendingAgents := map[string]bool{}
	for _, pr := range s.st.Pending {
		for _, a := range pr.Event.Addresses() {
			pendingAgents[a] = true
		}
	}
	for _, a := range addrs {
		prof, err := s.node.GetAgentProfile(ctx, a)
		if errors.Is(err, reason.AgentNotFound) {
			if _, known, _ := s.score(a); known {
				delete(s.scores, a)
				p.meta["score/"+a] = nil
				p.dirty = true
			}
			continue
		}
		if err != nil {
			return err
		}
		old, known, err := s.score(a)
		if err != nil {
			return err
		}
		if known && old == prof.ConductScore {
			continue
		}
		s.scores[a] = prof.ConductScore
		p.meta["score/"+a] = []byte(strconv.FormatUint(uint64(prof.ConductScore), 10))
		p.dirty = true
		if !known {
			continue // first sight: the agent_registered event (or the profile) tells its score
		}
		oldV, newV := old, prof.ConductScore
		e := Event{Type: TypeScoreChanged, Address: a, OldScore: &oldV, NewScore: &newV, Tier: prof.Tier, Status: StatusConfirmed}
		if pendingAgents[a] {
			e.Status = StatusPending
			p.add(e)
			continue
		}
		b := &s.st.Blocks[len(s.st.Blocks)-1]
		e.Height, e.BlockHash = b.Height, b.Hash
		b.Events = append(b.Events, p.add(e))
	}
	return nil
}

// score is the last score published for an agent.
func (s *Source) score(a string) (uint32, bool, error) {
	if v, ok := s.scores[a]; ok {
		return v, true, nil
	}
	raw, err := s.hub.store.Meta("score/" + a)
	if err != nil || raw == nil {
		return 0, false, err
	}
	v, err := strconv.ParseUint(string(raw), 10, 32)
	if err != nil {
		return 0, false, err
	}
	s.scores[a] = uint32(v)
	return uint32(v), true, nil
}

// rawTx fetches and decodes a transaction.
func (s *Source) rawTx(ctx context.Context, txid string) (*types.Transaction, error) {
	var h string
	if err := s.node.Call(ctx, "getrawtransaction", []any{txid}, &h); err != nil {
		return nil, err
	}
	raw, err := hex.DecodeString(h)
	if err != nil {
		return nil, fmt.Errorf("getrawtransaction %s: %w", txid, err)
	}
	return types.DecodeTransaction(raw)
}

func (s *Source) addr(h types.Hash) string {
	a, _ := keys.EncodeAddress(s.cfg.HRP, keys.PubKeyHash(h))
	return a
}

// decode is the event of an agent transaction (without status, height or time), or nil for
// another kind (remembered, so a block does not fetch it again).
func (s *Source) decode(ctx context.Context, txid string) (*Event, error) {
	tx, err := s.rawTx(ctx, txid)
	if err != nil {
		return nil, err
	}
	if !consensus.IsAgentKind(tx.Kind) || len(tx.Inputs) == 0 || len(tx.Outputs) == 0 {
		if len(s.nonAgent) < maxCache {
			s.nonAgent[txid] = struct{}{}
		}
		return nil, nil
	}
	actor := s.addr(consensus.Actor(tx))
	e := &Event{TxID: txid, Actor: actor}
	switch tx.Kind {
	case types.KindAgentRegister:
		e.Type = TypeAgentRegistered
	case types.KindVouch:
		pl, err := types.DecodeVouchPayload(tx.Payload)
		if err != nil {
			return nil, nil // the node would not hold it; nothing to tell
		}
		e.Type, e.Target = TypeVouched, s.addr(pl.Target)
	case types.KindContractCreate:
		pl, err := types.DecodeContractCreatePayload(tx.Payload)
		if err != nil {
			return nil, nil
		}
		e.Type, e.Initiator, e.Counterparty, e.ContractID = TypeContractCreated, actor, s.addr(pl.Counterparty), txid
		e.ValueCoin, e.ExpiryBlocks = amount.Format(tx.Outputs[0].Value), pl.ExpiryBlocks
	case types.KindContractFulfil, types.KindContractRefund:
		pl, err := types.DecodeContractRefPayload(tx.Payload)
		if err != nil {
			return nil, nil
		}
		e.Type = TypeContractFulfilled
		if tx.Kind == types.KindContractRefund {
			e.Type = TypeContractRefunded
		}
		e.ContractID = pl.ContractID.String()
		c, err := s.contract(ctx, e.ContractID)
		if err != nil {
			return nil, err
		}
		e.Initiator, e.Counterparty, e.ValueCoin = c.initiator, c.counterparty, amount.Format(c.value)
	case types.KindReview:
		pl, err := types.DecodeReviewPayload(tx.Payload)
		if err != nil {
			return nil, nil
		}
		e.Type, e.Subject, e.ContractID, e.Score = TypeReviewed, s.addr(pl.Subject), pl.ContractID.String(), pl.Score
	}
	return e, nil
}

// contract is a contract's parties and escrow, from its creating transaction.
func (s *Source) contract(ctx context.Context, id string) (contractParties, error) {
	if c, ok := s.contracts[id]; ok {
		return c, nil
	}
	tx, err := s.rawTx(ctx, id)
	if err != nil {
		return contractParties{}, fmt.Errorf("contract %s: %w", id, err)
	}
	pl, err := types.DecodeContractCreatePayload(tx.Payload)
	if err != nil || tx.Kind != types.KindContractCreate || len(tx.Outputs) == 0 {
		return contractParties{}, fmt.Errorf("contract %s: not a contract creation", id)
	}
	c := contractParties{initiator: s.addr(consensus.Actor(tx)), counterparty: s.addr(pl.Counterparty), value: tx.Outputs[0].Value}
	if len(s.contracts) >= maxCache {
		s.contracts = map[string]contractParties{}
	}
	s.contracts[id] = c
	return c, nil
}
