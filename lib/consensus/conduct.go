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
