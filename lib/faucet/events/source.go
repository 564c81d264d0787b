package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/chainfollow"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/logging"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// NodeClient is what the source asks of the node besides the chain, which the follower
// (lib/chainfollow) hands it: the agent transactions' bodies and the agents' profiles, all
// through typed calls of its JSON-RPC (*rpcapi.Client).
type NodeClient interface {
	GetRawTransaction(ctx context.Context, txid string) (*types.Transaction, error)
	GetTransaction(ctx context.Context, txid string) (*rpcapi.Transaction, error)
	GetAgentProfile(ctx context.Context, address string) (*rpcapi.AgentProfile, error)
}

var _ NodeClient = (*rpcapi.Client)(nil)

// Defaults of SourceConfig.
const (
	DefaultReorgDepth = chainfollow.DefaultDepth
	// maxCache bounds the source's caches (non-agent txids, contract parties).
	maxCache = 100_000
)

// SourceConfig configures a Source.
type SourceConfig struct {
	Node NodeClient
	Hub  *Hub
	// HRP is the network's address prefix (params.Network.HRP).
	HRP string
	// ReorgDepth is how many processed blocks are remembered with their events, to retract
	// them when a reorganisation undoes them (default 1000, the follower's depth).
	ReorgDepth int
	Logger     *slog.Logger
	Now        func() time.Time
}

// Source turns the chain follower's updates (Apply) into the agent events of the hub. It
// keeps its position (the processed blocks of the last ReorgDepth heights with their events,
// the pending transactions, the last score of each agent) in the store, written in the batch
// of the events that go with it, so after a restart the follower starts from it (Position):
// blocks mined meanwhile are read, blocks undone meanwhile retracted.
type Source struct {
	cfg  SourceConfig
	log  *slog.Logger
	node NodeClient
	hub  *Hub

	st        sourceState
	nonAgent  map[string]struct{}        // txids seen that are no agent transaction
	contracts map[string]contractParties // contract id → parties
	scores    map[string]uint32          // last score per agent (cache of the store's)
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
	if cfg.ReorgDepth <= 0 {
		cfg.ReorgDepth = DefaultReorgDepth
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Source{cfg: cfg, log: cfg.Logger.With(logging.SubsystemKey, "events"), node: cfg.Node, hub: cfg.Hub}
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

// Position is the source's stored position, oldest first: where the follower starts so that
// nothing between the source's last run and now is missed.
func (s *Source) Position() []chainfollow.BlockRef {
	out := make([]chainfollow.BlockRef, len(s.st.Blocks))
	for i, b := range s.st.Blocks {
		out[i] = chainfollow.BlockRef{Height: b.Height, Hash: b.Hash}
	}
	return out
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

// Apply brings the event log up to the follower's update (a chainfollow.Subscriber): the
// events of the blocks it disconnects retracted, newest first; the blocks it connects
// (confirmed events); the mempool (pending events, retractions of those that left it
// unmined); then the scores of the agents touched. What was done before a failure is
// published; the follower gives the update again, and the blocks the source has already
// taken (its position tells) are skipped.
func (s *Source) Apply(ctx context.Context, u chainfollow.Update) error {
	_, last := s.hub.store.Bounds()
	p := &poll{s: s, now: s.cfg.Now().UTC().Format(time.RFC3339Nano), base: last, meta: map[string][]byte{}, touched: map[string]bool{}}
	err := s.apply(ctx, u, p)
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

func (s *Source) apply(ctx context.Context, u chainfollow.Update, p *poll) error {
	if len(s.st.Blocks) == 0 && s.st.Height == 0 {
		// First start: begin at the tip; the history before it is the profiles'.
		s.st.Height, s.st.Blocks = u.Tip.Height, []blockRec{{Height: u.Tip.Height, Hash: u.Tip.Hash}}
		p.dirty = true
	}
	for _, b := range u.Disconnected {
		s.disconnect(b, p)
	}
	for _, b := range u.Connected {
		if err := s.connect(ctx, b, p); err != nil {
			return err
		}
	}
	if u.MempoolRead && s.st.Height == u.Tip.Height {
		if err := s.mempool(ctx, u.Mempool, p); err != nil {
			return err
		}
	}
	return s.readScores(ctx, p)
}

// disconnect retracts the events of b, the newest processed block, newest first (a block the
// source never processed has none).
func (s *Source) disconnect(b chainfollow.Block, p *poll) {
	n := len(s.st.Blocks)
	if n == 0 || s.st.Blocks[n-1].Hash != b.Hash {
		return
	}
	rec := s.st.Blocks[n-1]
	for j := len(rec.Events) - 1; j >= 0; j-- {
		p.retract(rec.Events[j], nil, ReasonReorg)
	}
	for _, txid := range rec.Txs {
		delete(s.nonAgent, txid)
	}
	s.st.Blocks = s.st.Blocks[:n-1]
	s.st.Height = b.Height - 1
	if n == 1 {
		// Deeper than remembered: the follower goes on from below it.
		s.log.Warn("event source: reorganisation deeper than the remembered blocks", "depth", s.cfg.ReorgDepth)
	}
	p.dirty = true
}

// connect publishes the confirmed events of the agent transactions of b, a new main-chain
// block; one the source already has, or below its position, is skipped.
func (s *Source) connect(ctx context.Context, b chainfollow.Block, p *poll) error {
	if b.Height <= s.st.Height {
		return nil
	}
	if n := len(s.st.Blocks); n > 0 && (s.st.Blocks[n-1].Height != b.Height-1 || (b.PrevHash != "" && s.st.Blocks[n-1].Hash != b.PrevHash)) {
		s.log.Warn("event source: a block that does not extend the last one processed; taken as the new base",
			"height", b.Height, "hash", b.Hash)
		s.st.Blocks = nil
	}
	// Decode the whole block before changing anything, so a failure leaves no half block.
	rec := blockRec{Height: b.Height, Hash: b.Hash}
	var evs []Event
	for i, txid := range b.Txs {
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
				return err
			}
			if e == nil {
				continue
			}
			ev = *e
		}
		ev.Status, ev.Height, ev.BlockHash = StatusConfirmed, b.Height, b.Hash
		evs = append(evs, ev)
		rec.Txs = append(rec.Txs, txid)
	}
	for _, txid := range b.Txs {
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
	s.st.Height = b.Height
	p.dirty = true
	return nil
}

// mempool (ids: the node's mempool) publishes the pending events of the agent transactions the mempool holds that
// are new, and retracts those of the transactions that left it without being mined.
func (s *Source) mempool(ctx context.Context, ids []string, p *poll) error {
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
	return s.node.GetRawTransaction(ctx, txid)
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
