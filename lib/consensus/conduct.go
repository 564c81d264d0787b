package consensus

import (
	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/types"
)

// The Proof of Conduct constants (protocol §9; spec: stake, initial score, range, voucher score).
const (
	AgentStake      = 50 * amount.Coin
	InitialScore    = 500
	MaxScore        = 1000
	VouchMinScore   = 700
	MinEscrow       = 1_000
	MinExpiry       = 10
	MaxExpiry       = 525_960
	DefaultExpiry   = 1_440
	VouchBonus      = 30
	CounterpartyFee = 20 // fulfilment bonus of the counterparty
	InitiatorBonus  = 10 // fulfilment bonus of the initiator
	RefundPenalty   = 50 // what an expired contract costs its counterparty
	MinReviewScore  = 1
	MaxReviewScore  = 10
	// maxDampingShift bounds the 2^(k−1) of protocol §9.2: past it every bonus is zero anyway.
	maxDampingShift = 62
)

// Reviewed bits of a ContractRecord.
const (
	ReviewedByInitiator    = 1 << 0
	ReviewedByCounterparty = 1 << 1
)

// HashPair is an ordered pair of addresses: (voucher, target) for vouches, (reviewer,
// subject) for review counts, and (lower, higher) for the fulfilled contracts of two agents
// in either direction (PairOf).
type HashPair [2]types.Hash

// PairOf is the unordered pair of a and b, lower address first.
func PairOf(a, b types.Hash) HashPair {
	if string(b[:]) < string(a[:]) {
		a, b = b, a
	}
	return HashPair{a, b}
}

// Actor is the acting agent of an agent transaction: the address of input 0's public key
// (protocol §9.1). For every input but a refund's escrow that is the owner of input 0.
func Actor(tx *types.Transaction) types.Hash {
	return types.Blake3(tx.Inputs[0].PublicKey[:])
}

// IsAgentKind reports whether k is one of the Proof of Conduct kinds (2 to 7).
func IsAgentKind(k types.TxKind) bool {
	return k >= types.KindAgentRegister && k <= types.KindReview
}

// LockedOutput reports whether output j of tx is locked (protocol §9.1): the stake of an
// AgentRegister and the escrow of a ContractCreate, both output 0.
func LockedOutput(tx *types.Transaction, j int) bool {
	return j == 0 && (tx.Kind == types.KindAgentRegister || tx.Kind == types.KindContractCreate)
}

// CheckAgentKind applies the context-free rules of the agent kinds: the payload decodes
// exactly, every input is signed by the acting agent, and each kind's own shape (stake,
// escrow, expiry, score, no self-targets).
func CheckAgentKind(tx *types.Transaction) error {
	if len(tx.Inputs) == 0 {
		return ruleError(ErrNoInputs, "transaction has no inputs")
	}
	if len(tx.Outputs) == 0 {
		return ruleError(ErrNoOutputs, "transaction has no outputs")
	}
	actor := Actor(tx)
	for i := 1; i < len(tx.Inputs); i++ {
		if types.Blake3(tx.Inputs[i].PublicKey[:]) != actor {
			return ruleError(ErrForeignInput, "input %d is not signed by the acting agent (the key of input 0)", i)
		}
	}
	switch tx.Kind {
	case types.KindAgentRegister:
		if len(tx.Payload) != 0 {
			return ruleError(ErrBadAgentPayload, "agent registration carries a payload")
		}
		if o := tx.Outputs[0]; o.Value != AgentStake || o.PubKeyHash != actor {
			return ruleError(ErrBadStake, "output 0 must stake exactly %s COIN to the registering address", amount.Format(AgentStake))
		}
	case types.KindVouch:
		p, err := types.DecodeVouchPayload(tx.Payload)
		if err != nil {
			return ruleError(ErrBadAgentPayload, "%v", err)
		}
		if p.Target == actor {
			return ruleError(ErrSelfTarget, "an agent cannot vouch for itself")
		}
	case types.KindContractCreate:
		p, err := types.DecodeContractCreatePayload(tx.Payload)
		if err != nil {
			return ruleError(ErrBadAgentPayload, "%v", err)
		}
		if p.Counterparty == actor {
			return ruleError(ErrSelfTarget, "an agent cannot make a contract with itself")
		}
		if p.ExpiryBlocks < MinExpiry || p.ExpiryBlocks > MaxExpiry {
			return ruleError(ErrInvalidExpiry, "expiry of %d blocks is outside %d to %d", p.ExpiryBlocks, MinExpiry, MaxExpiry)
		}
		if o := tx.Outputs[0]; o.PubKeyHash != p.Counterparty || o.Value < MinEscrow {
			return ruleError(ErrBadEscrow, "output 0 (the escrow) must pay at least %d subunits to the counterparty", MinEscrow)
		}
	case types.KindContractFulfil, types.KindContractRefund:
		if _, err := types.DecodeContractRefPayload(tx.Payload); err != nil {
			return ruleError(ErrBadAgentPayload, "%v", err)
		}
	case types.KindReview:
		p, err := types.DecodeReviewPayload(tx.Payload)
		if err != nil {
			return ruleError(ErrBadAgentPayload, "%v", err)
		}
		if p.Score < MinReviewScore || p.Score > MaxReviewScore {
			return ruleError(ErrInvalidScore, "review score %d is outside %d to %d", p.Score, MinReviewScore, MaxReviewScore)
		}
		if p.Subject == actor {
			return ruleError(ErrSelfTarget, "an agent cannot review itself")
		}
	default:
		return ruleError(ErrBadAgentPayload, "unknown transaction kind %s", tx.Kind)
	}
	return nil
}

// ScoreChange applies a score change d to s (protocol §9): a gain is scaled by the distance to
// 1000 and a loss by the distance to 0, so scores approach the bounds slowly; the result is
// clamped to 0…1000.
func ScoreChange(s uint32, d int64) uint32 {
	if s > MaxScore {
		s = MaxScore
	}
	var n int64
	switch {
	case d > 0:
		n = int64(s) + d*int64(MaxScore-s)/500
	case d < 0:
		n = int64(s) - (-d)*int64(s)/500
	default:
		return s
	}
	if n < 0 {
		return 0
	}
	if n > MaxScore {
		return MaxScore
	}
	return uint32(n)
}

// Damped is d divided by 2^(k−1) (integer division towards zero): the k-th repetition
// between the same two agents counts less (protocol §9.2). k is at least 1.
func Damped(d int64, k uint64) int64 {
	if k <= 1 {
		return d
	}
	if k-1 >= maxDampingShift {
		return 0
	}
	div := int64(1) << (k - 1)
	return d / div
}

// ReviewDelta is the score change of a review of score 1…10 before damping: (2·score − 11) × 10.
func ReviewDelta(score uint8) int64 { return (2*int64(score) - 11) * 10 }

// ConductContext is what CheckConduct needs besides the state: the block's height and time,
// and whether two addresses have one owner (one cluster as of the parent block, protocol §9.2).
type ConductContext struct {
	Height    uint64
	Time      uint64 // the block's timestamp (registered_at); 0 in the mempool's pending view
	SameOwner func(a, b types.Hash) (bool, error)
}

// ConductChanges are the new records an agent transaction (or a block of them) writes. Each
// map holds the whole new value of every record it touches.
type ConductChanges struct {
	Agents    map[types.Hash]*AgentRecord
	Contracts map[types.Hash]*ContractRecord
	Vouches   map[HashPair]struct{} // (voucher, target) pairs added
	Pairs     map[HashPair]uint64   // fulfilled contracts per PairOf
	Reviews   map[HashPair]uint64   // reviews per (reviewer, subject)
}

// NewConductChanges returns empty changes.
func NewConductChanges() *ConductChanges {
	return &ConductChanges{Agents: map[types.Hash]*AgentRecord{}, Contracts: map[types.Hash]*ContractRecord{},
		Vouches: map[HashPair]struct{}{}, Pairs: map[HashPair]uint64{}, Reviews: map[HashPair]uint64{}}
}

// Empty reports whether c changes nothing.
func (c *ConductChanges) Empty() bool {
	return c == nil || len(c.Agents)+len(c.Contracts)+len(c.Vouches)+len(c.Pairs)+len(c.Reviews) == 0
}

// Merge adds o's records to c (o's win).
func (c *ConductChanges) Merge(o *ConductChanges) {
	for k, v := range o.Agents {
		c.Agents[k] = v
	}
	for k, v := range o.Contracts {
		c.Contracts[k] = v
	}
	for k := range o.Vouches {
		c.Vouches[k] = struct{}{}
	}
	for k, v := range o.Pairs {
		c.Pairs[k] = v
	}
	for k, v := range o.Reviews {
		c.Reviews[k] = v
	}
}

// ConductOverlay is a ConductView with changes layered over a base view: a block's earlier
// agent transactions over the parent's state, or the mempool's pending view over the chain's.
type ConductOverlay struct {
	Base ConductView
	*ConductChanges
}

// NewConductOverlay layers empty changes over base.
func NewConductOverlay(base ConductView) *ConductOverlay {
	return &ConductOverlay{Base: base, ConductChanges: NewConductChanges()}
}

// Agent looks in the changes first.
func (o *ConductOverlay) Agent(pkh types.Hash) (*AgentRecord, bool, error) {
	if a, ok := o.Agents[pkh]; ok {
		return a, true, nil
	}
	return o.Base.Agent(pkh)
}

// Contract looks in the changes first.
func (o *ConductOverlay) Contract(id types.Hash) (*ContractRecord, bool, error) {
	if c, ok := o.Contracts[id]; ok {
		return c, true, nil
	}
	return o.Base.Contract(id)
}

// Vouched looks in the changes first.
func (o *ConductOverlay) Vouched(voucher, target types.Hash) (bool, error) {
	if _, ok := o.Vouches[HashPair{voucher, target}]; ok {
		return true, nil
	}
	return o.Base.Vouched(voucher, target)
}

// FulfilledBetween looks in the changes first.
func (o *ConductOverlay) FulfilledBetween(a, b types.Hash) (uint64, error) {
	if n, ok := o.Pairs[PairOf(a, b)]; ok {
		return n, nil
	}
	return o.Base.FulfilledBetween(a, b)
}

// ReviewsOf looks in the changes first.
func (o *ConductOverlay) ReviewsOf(reviewer, subject types.Hash) (uint64, error) {
	if n, ok := o.Reviews[HashPair{reviewer, subject}]; ok {
		return n, nil
	}
	return o.Base.ReviewsOf(reviewer, subject)
}

// conductTx collects one transaction's reads and writes: reads see its own writes first,
// writes copy the record so the view below never changes.
type conductTx struct {
	view ConductView
	ch   *ConductChanges
}

func (t *conductTx) agent(pkh types.Hash) (*AgentRecord, bool, error) {
	if a, ok := t.ch.Agents[pkh]; ok {
		return a, true, nil
	}
	a, ok, err := t.view.Agent(pkh)
	if err != nil || !ok {
		return nil, ok, err
	}
	cp := *a
	t.ch.Agents[pkh] = &cp
	return &cp, true, nil
}

func (t *conductTx) contract(id types.Hash) (*ContractRecord, bool, error) {
	c, ok, err := t.view.Contract(id)
	if err != nil || !ok {
		return nil, ok, err
	}
	cp := *c
	t.ch.Contracts[id] = &cp
	return &cp, true, nil
}

// isAgent reports whether pkh is an agent, for a record that is only read: no copy.
func (t *conductTx) isAgent(pkh types.Hash) (bool, error) {
	if _, ok := t.ch.Agents[pkh]; ok {
		return true, nil
	}
	_, ok, err := t.view.Agent(pkh)
	return ok, err
}

// mustBeAgent is needAgent for a record that is only read: no copy.
func (t *conductTx) mustBeAgent(pkh types.Hash, kind ErrorKind, what string) error {
	ok, err := t.isAgent(pkh)
	if err == nil && !ok {
		err = ruleError(kind, "%s %s is not a registered agent", what, pkh)
	}
	return err
}

// needAgent is the record of pkh, to change, or a rule error of kind: ErrNotAnAgent for the
// acting agent and the parties of a contract, ErrAgentNotFound for another agent named in
// the payload.
func (t *conductTx) needAgent(pkh types.Hash, kind ErrorKind, what string) (*AgentRecord, error) {
	a, ok, err := t.agent(pkh)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ruleError(kind, "%s %s is not a registered agent", what, pkh)
	}
	return a, nil
}

// CheckConduct applies the rules of protocol §9 that need the conduct state to an agent
// transaction that passed CheckTransactionSanity, and returns the records it changes. It
// changes nothing itself: the caller layers the result over its view once every other check
// of the transaction passed. txid is the transaction's id (a ContractCreate's contract id).
func CheckConduct(tx *types.Transaction, txid types.Hash, ctx ConductContext, view ConductView) (*ConductChanges, error) {
	t := &conductTx{view: view, ch: NewConductChanges()}
	actor := Actor(tx)
	sameOwner := func(a, b types.Hash) (bool, error) {
		if ctx.SameOwner == nil {
			return false, nil
		}
		return ctx.SameOwner(a, b)
	}
	switch tx.Kind {
	case types.KindAgentRegister:
		if ok, err := t.isAgent(actor); err != nil {
			return nil, err
		} else if ok {
			return nil, ruleError(ErrAlreadyRegistered, "%s is already a registered agent", actor)
		}
		t.ch.Agents[actor] = &AgentRecord{Score: InitialScore, RegisteredHeight: ctx.Height, RegisteredTime: ctx.Time,
			Stake: types.Outpoint{TxID: txid, Index: 0}}

	case types.KindVouch:
		p, _ := types.DecodeVouchPayload(tx.Payload)
		voucher, err := t.needAgent(actor, ErrNotAnAgent, "voucher")
		if err != nil {
			return nil, err
		}
		if voucher.Score < VouchMinScore {
			return nil, ruleError(ErrScoreTooLow, "score %d is below the %d needed to vouch", voucher.Score, VouchMinScore)
		}
		target, err := t.needAgent(p.Target, ErrAgentNotFound, "target")
		if err != nil {
			return nil, err
		}
		if done, err := view.Vouched(actor, p.Target); err != nil {
			return nil, err
		} else if done {
			return nil, ruleError(ErrAlreadyVouched, "%s has already vouched for %s", actor, p.Target)
		}
		same, err := sameOwner(actor, p.Target)
		if err != nil {
			return nil, err
		}
		voucher.VouchesGiven++
		target.VouchesReceived++
		if !same {
			target.Score = ScoreChange(target.Score, VouchBonus)
		}
		t.ch.Vouches[HashPair{actor, p.Target}] = struct{}{}

	case types.KindContractCreate:
		p, _ := types.DecodeContractCreatePayload(tx.Payload)
		// The two agent records are only read.
		if err := t.mustBeAgent(actor, ErrNotAnAgent, "initiator"); err != nil {
			return nil, err
		}
		if err := t.mustBeAgent(p.Counterparty, ErrAgentNotFound, "counterparty"); err != nil {
			return nil, err
		}
		t.ch.Contracts[txid] = &ContractRecord{ID: txid, Initiator: actor, Counterparty: p.Counterparty,
			Value: tx.Outputs[0].Value, CreatedHeight: ctx.Height, ExpiresAt: ctx.Height + uint64(p.ExpiryBlocks),
			Status: ContractOpen}

	case types.KindContractFulfil, types.KindContractRefund:
		p, _ := types.DecodeContractRefPayload(tx.Payload)
		c, ok, err := t.contract(p.ContractID)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, ruleError(ErrContractNotFound, "no contract %s", p.ContractID)
		}
		if c.Status != ContractOpen {
			return nil, ruleError(ErrContractNotOpen, "contract %s is %s, not open", c.ID, c.Status)
		}
		if tx.Inputs[0].Outpoint() != (types.Outpoint{TxID: c.ID, Index: 0}) {
			return nil, ruleError(ErrEscrowNotSpent, "input 0 must spend the contract's escrow %s:0", c.ID)
		}
		if tx.Kind == types.KindContractFulfil {
			if actor != c.Counterparty {
				return nil, ruleError(ErrNotCounterparty, "only the counterparty %s may fulfil contract %s", c.Counterparty, c.ID)
			}
			if ctx.Height >= c.ExpiresAt {
				return nil, ruleError(ErrContractExpired, "contract %s expired at height %d", c.ID, c.ExpiresAt)
			}
			init, err := t.needAgent(c.Initiator, ErrNotAnAgent, "initiator")
			if err != nil {
				return nil, err
			}
			cp, err := t.needAgent(c.Counterparty, ErrNotAnAgent, "counterparty")
			if err != nil {
				return nil, err
			}
			pair := PairOf(c.Initiator, c.Counterparty)
			k, err := view.FulfilledBetween(c.Initiator, c.Counterparty)
			if err != nil {
				return nil, err
			}
			k++
			same, err := sameOwner(c.Initiator, c.Counterparty)
			if err != nil {
				return nil, err
			}
			init.ContractsCompleted++
			cp.ContractsCompleted++
			if !same {
				cp.Score = ScoreChange(cp.Score, Damped(CounterpartyFee, k))
				init.Score = ScoreChange(init.Score, Damped(InitiatorBonus, k))
			}
			t.ch.Pairs[pair] = k
			c.Status = ContractFulfilled
		} else {
			if actor != c.Initiator {
				return nil, ruleError(ErrNotInitiator, "only the initiator %s may take back the escrow of contract %s", c.Initiator, c.ID)
			}
			if ctx.Height < c.ExpiresAt {
				return nil, ruleError(ErrContractNotExpired, "contract %s expires at height %d; a refund is possible from then on", c.ID, c.ExpiresAt)
			}
			for j := range tx.Outputs {
				if tx.Outputs[j].PubKeyHash != c.Initiator {
					return nil, ruleError(ErrRefundOutputs, "output %d of a refund does not pay the initiator", j)
				}
			}
			cp, err := t.needAgent(c.Counterparty, ErrNotAnAgent, "counterparty")
			if err != nil {
				return nil, err
			}
			cp.ContractsFailed++
			cp.Score = ScoreChange(cp.Score, -RefundPenalty)
			c.Status = ContractExpired
		}
		c.ClosedBy = txid

	case types.KindReview:
		p, _ := types.DecodeReviewPayload(tx.Payload)
		c, ok, err := t.contract(p.ContractID)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, ruleError(ErrContractNotFound, "no contract %s", p.ContractID)
		}
		if c.Status != ContractFulfilled {
			return nil, ruleError(ErrContractNotFulfilled, "contract %s is %s; only a fulfilled contract can be reviewed", c.ID, c.Status)
		}
		var bit uint8
		switch {
		case actor == c.Initiator && p.Subject == c.Counterparty:
			bit = ReviewedByInitiator
		case actor == c.Counterparty && p.Subject == c.Initiator:
			bit = ReviewedByCounterparty
		default:
			return nil, ruleError(ErrNotParticipant, "reviewer and subject must be the two participants of contract %s", c.ID)
		}
		if c.Reviewed&bit != 0 {
			return nil, ruleError(ErrAlreadyReviewed, "%s has already reviewed contract %s", actor, c.ID)
		}
		if err := t.mustBeAgent(actor, ErrNotAnAgent, "reviewer"); err != nil { // read only
			return nil, err
		}
		subject, err := t.needAgent(p.Subject, ErrAgentNotFound, "subject")
		if err != nil {
			return nil, err
		}
		k, err := view.ReviewsOf(actor, p.Subject)
		if err != nil {
			return nil, err
		}
		k++
		same, err := sameOwner(actor, p.Subject)
		if err != nil {
			return nil, err
		}
		subject.ReviewsReceived++
		subject.ReviewScoreSum += uint64(p.Score)
		if !same {
			subject.Score = ScoreChange(subject.Score, Damped(ReviewDelta(p.Score), k))
		}
		t.ch.Reviews[HashPair{actor, p.Subject}] = k
		c.Reviewed |= bit

	default:
		return nil, ruleError(ErrBadAgentPayload, "transaction kind %s is no agent operation", tx.Kind)
	}
	return t.ch, nil
}

// LockedSpender is who may sign for the locked output e spent by input i of tx (protocol §9.1),
// or ErrLockedOutput: the stake never, the escrow only as input 0 of its own contract's
// ContractFulfil (the counterparty, whom it pays) or ContractRefund (the initiator).
func LockedSpender(tx *types.Transaction, i int, e *UtxoEntry, view ConductView) (types.Hash, error) {
	op := tx.Inputs[i].Outpoint()
	if i == 0 && op.Index == 0 && (tx.Kind == types.KindContractFulfil || tx.Kind == types.KindContractRefund) {
		if p, err := types.DecodeContractRefPayload(tx.Payload); err == nil && p.ContractID == op.TxID {
			c, ok, err := view.Contract(p.ContractID)
			if err != nil {
				return types.Hash{}, err
			}
			if ok {
				if tx.Kind == types.KindContractRefund {
					return c.Initiator, nil
				}
				return e.PubKeyHash, nil
			}
		}
	}
	return types.Hash{}, ruleError(ErrLockedOutput, "input %d spends the locked output %s (a stake, or an escrow outside its own contract's fulfilment or refund)", i, op)
}

// String names a contract status as the API does.
func (s ContractStatus) String() string {
	switch s {
	case ContractOpen:
		return "open"
	case ContractFulfilled:
		return "fulfilled"
	case ContractExpired:
		return "expired"
	}
	return "unknown"
}
