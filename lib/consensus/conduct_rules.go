package consensus

import (
	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/types"
)

// The Proof of Conduct rules (protocol §9), one checker per agent kind. Each kind has a
// context-free part (its payload and shape, run by CheckAgentKind inside
// CheckTransactionSanity) and a part against the conduct state (run by CheckConduct against
// a read-only ConductView). The chain and the mempool run them against their state; clients
// (the wallet, the faucet) run the very same functions through CheckAgentTx against a view
// of the node's RPC (lib/conductview) before they send, so a rule and its wording live here
// once.

// agentRule is the rule of one agent kind.
type agentRule struct {
	// shape is the kind's context-free part: its payload decodes exactly and the
	// transaction has the kind's shape (stake, escrow, expiry, score, no self-target).
	shape func(tx *types.Transaction, actor types.Hash) error
	// state is the kind's part against the conduct state: it reads through t and writes
	// the records the transaction changes into t.ch.
	state func(t *conductTx, op *conductOp) error
}

// ruleOf is the rule of kind k, or false for a kind that is no agent operation.
func ruleOf(k types.TxKind) (agentRule, bool) {
	switch k {
	case types.KindAgentRegister:
		return agentRule{shape: registerShape, state: registerState}, true
	case types.KindVouch:
		return agentRule{shape: vouchShape, state: vouchState}, true
	case types.KindContractCreate:
		return agentRule{shape: createShape, state: createState}, true
	case types.KindContractFulfil:
		return agentRule{shape: contractRefShape, state: fulfilState}, true
	case types.KindContractRefund:
		return agentRule{shape: contractRefShape, state: refundState}, true
	case types.KindReview:
		return agentRule{shape: reviewShape, state: reviewState}, true
	}
	return agentRule{}, false
}

// checkInputsOutputs is the part of CheckTransactionSanity every agent rule relies on: an
// acting agent (input 0) and an output 0.
func checkInputsOutputs(tx *types.Transaction) error {
	if len(tx.Inputs) == 0 {
		return ruleError(ErrNoInputs, "transaction has no inputs")
	}
	if len(tx.Outputs) == 0 {
		return ruleError(ErrNoOutputs, "transaction has no outputs")
	}
	return nil
}

// CheckAgentKind applies the context-free rules of the agent kinds: the payload decodes
// exactly, every input is signed by the acting agent, and each kind's own shape (stake,
// escrow, expiry, score, no self-targets).
func CheckAgentKind(tx *types.Transaction) error {
	if err := checkInputsOutputs(tx); err != nil {
		return err
	}
	actor := Actor(tx)
	for i := 1; i < len(tx.Inputs); i++ {
		if types.Blake3(tx.Inputs[i].PublicKey[:]) != actor {
			return ruleError(ErrForeignInput, "input %d is not signed by the acting agent (the key of input 0)", i)
		}
	}
	r, ok := ruleOf(tx.Kind)
	if !ok {
		return ruleError(ErrBadAgentPayload, "unknown transaction kind %s", tx.Kind)
	}
	return r.shape(tx, actor)
}

// CheckConduct applies the rules of protocol §9 that need the conduct state to an agent
// transaction, and returns the records it changes. It changes nothing itself: the caller
// layers the result over its view once every other check of the transaction passed. txid is
// the transaction's id (a ContractCreate's contract id). A payload that does not decode is
// refused with ErrBadAgentPayload (CheckTransactionSanity refuses it first on the chain's
// paths, so this changes no transaction's validity).
func CheckConduct(tx *types.Transaction, txid types.Hash, ctx ConductContext, view ConductView) (*ConductChanges, error) {
	r, ok := ruleOf(tx.Kind)
	if !ok {
		return nil, ruleError(ErrBadAgentPayload, "transaction kind %s is no agent operation", tx.Kind)
	}
	if err := checkInputsOutputs(tx); err != nil {
		return nil, err
	}
	t := &conductTx{view: view, ch: NewConductChanges()}
	if err := r.state(t, &conductOp{tx: tx, txid: txid, actor: Actor(tx), ctx: ctx}); err != nil {
		return nil, err
	}
	return t.ch, nil
}

// CheckAgentTx is a client's precheck of the agent transaction tx (the wallet's, the
// faucet's, before they send it): every rule of its kind, context-free (CheckAgentKind)
// and against view (CheckConduct) as for the next block at height. Neither the block's time
// nor the cluster relation is known to a client; both only change scores, never whether a
// transaction is valid. Like the node, it returns a RuleError whose kind and words are the
// rule's; any other error is view's.
func CheckAgentTx(view ConductView, tx *types.Transaction, height uint64) error {
	if err := CheckAgentKind(tx); err != nil {
		return err
	}
	_, err := CheckConduct(tx, tx.TxID(), ConductContext{Height: height}, view)
	return err
}

// ---------------------------------------------------------------------------------------------
// The payloads: one decoder per kind, used by both parts of its rule.
// ---------------------------------------------------------------------------------------------

func payloadError(err error) error { return ruleError(ErrBadAgentPayload, "%v", err) }

func decodeRegister(tx *types.Transaction) error {
	if len(tx.Payload) != 0 {
		return ruleError(ErrBadAgentPayload, "agent registration carries a payload")
	}
	return nil
}

func decodeVouch(tx *types.Transaction) (types.VouchPayload, error) {
	p, err := types.DecodeVouchPayload(tx.Payload)
	if err != nil {
		return p, payloadError(err)
	}
	return p, nil
}

func decodeCreate(tx *types.Transaction) (types.ContractCreatePayload, error) {
	p, err := types.DecodeContractCreatePayload(tx.Payload)
	if err != nil {
		return p, payloadError(err)
	}
	return p, nil
}

func decodeContractRef(tx *types.Transaction) (types.ContractRefPayload, error) {
	p, err := types.DecodeContractRefPayload(tx.Payload)
	if err != nil {
		return p, payloadError(err)
	}
	return p, nil
}

func decodeReview(tx *types.Transaction) (types.ReviewPayload, error) {
	p, err := types.DecodeReviewPayload(tx.Payload)
	if err != nil {
		return p, payloadError(err)
	}
	return p, nil
}

// ---------------------------------------------------------------------------------------------
// The context-free rules, exported where a client checks an operation before it has a
// transaction (lib/wallet's request constructors).
// ---------------------------------------------------------------------------------------------

// CheckStake is the rule of an AgentRegister's output 0: exactly AgentStake to the actor.
func CheckStake(actor types.Hash, out types.TxOutput) error {
	if out.Value != AgentStake || out.PubKeyHash != actor {
		return ruleError(ErrBadStake, "output 0 must stake exactly %s COIN to the registering address", amount.Format(AgentStake))
	}
	return nil
}

// CheckVouchPayload is the context-free rule of a vouch: no vouch for oneself.
func CheckVouchPayload(actor types.Hash, p types.VouchPayload) error {
	if p.Target == actor {
		return ruleError(ErrSelfTarget, "an agent cannot vouch for itself")
	}
	return nil
}

// CheckExpiry is the rule of a contract's expiry: MinExpiry to MaxExpiry blocks.
func CheckExpiry(blocks uint64) error {
	if blocks < MinExpiry || blocks > MaxExpiry {
		return ruleError(ErrInvalidExpiry, "expiry of %d blocks is outside %d to %d", blocks, MinExpiry, MaxExpiry)
	}
	return nil
}

// CheckContractCreate is the context-free rule of a ContractCreate with payload p and
// output 0 escrow: no contract with oneself, a valid expiry, and an escrow of at least
// MinEscrow that pays the counterparty.
func CheckContractCreate(actor types.Hash, p types.ContractCreatePayload, escrow types.TxOutput) error {
	if p.Counterparty == actor {
		return ruleError(ErrSelfTarget, "an agent cannot make a contract with itself")
	}
	if err := CheckExpiry(uint64(p.ExpiryBlocks)); err != nil {
		return err
	}
	if escrow.PubKeyHash != p.Counterparty || escrow.Value < MinEscrow {
		return ruleError(ErrBadEscrow, "output 0 (the escrow) must pay at least %d subunits to the counterparty", MinEscrow)
	}
	return nil
}

// CheckReviewScore is the rule of a review's score: MinReviewScore to MaxReviewScore. It
// takes any integer, so a client checks a score before it narrows it to the payload's byte.
func CheckReviewScore(score int64) error {
	if score < MinReviewScore || score > MaxReviewScore {
		return ruleError(ErrInvalidScore, "review score %d is outside %d to %d", score, MinReviewScore, MaxReviewScore)
	}
	return nil
}

// CheckReviewPayload is the context-free rule of a review: a valid score, no review of
// oneself.
func CheckReviewPayload(actor types.Hash, p types.ReviewPayload) error {
	if err := CheckReviewScore(int64(p.Score)); err != nil {
		return err
	}
	if p.Subject == actor {
		return ruleError(ErrSelfTarget, "an agent cannot review itself")
	}
	return nil
}

func registerShape(tx *types.Transaction, actor types.Hash) error {
	if err := decodeRegister(tx); err != nil {
		return err
	}
	return CheckStake(actor, tx.Outputs[0])
}

func vouchShape(tx *types.Transaction, actor types.Hash) error {
	p, err := decodeVouch(tx)
	if err != nil {
		return err
	}
	return CheckVouchPayload(actor, p)
}

func createShape(tx *types.Transaction, actor types.Hash) error {
	p, err := decodeCreate(tx)
	if err != nil {
		return err
	}
	return CheckContractCreate(actor, p, tx.Outputs[0])
}

// contractRefShape is the context-free rule of a fulfilment and a refund: they carry only
// the contract's id.
func contractRefShape(tx *types.Transaction, _ types.Hash) error {
	_, err := decodeContractRef(tx)
	return err
}

func reviewShape(tx *types.Transaction, actor types.Hash) error {
	p, err := decodeReview(tx)
	if err != nil {
		return err
	}
	return CheckReviewPayload(actor, p)
}

// ---------------------------------------------------------------------------------------------
// The rules against the conduct state.
// ---------------------------------------------------------------------------------------------

// conductOp is one agent transaction being checked against the conduct state.
type conductOp struct {
	tx    *types.Transaction
	txid  types.Hash
	actor types.Hash
	ctx   ConductContext
}

// sameOwner reports whether a and b have one owner; without a SameOwner (a client's
// precheck) they never do.
func (op *conductOp) sameOwner(a, b types.Hash) (bool, error) {
	if op.ctx.SameOwner == nil {
		return false, nil
	}
	return op.ctx.SameOwner(a, b)
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

// registerState: the actor is no agent yet; it becomes one with the initial score and
// output 0 as its stake.
func registerState(t *conductTx, op *conductOp) error {
	if err := decodeRegister(op.tx); err != nil {
		return err
	}
	if ok, err := t.isAgent(op.actor); err != nil {
		return err
	} else if ok {
		return ruleError(ErrAlreadyRegistered, "%s is already a registered agent", op.actor)
	}
	t.ch.Agents[op.actor] = &AgentRecord{Score: InitialScore, RegisteredHeight: op.ctx.Height, RegisteredTime: op.ctx.Time,
		Stake: types.Outpoint{TxID: op.txid, Index: 0}}
	return nil
}

// vouchState: the voucher is an agent with a score of at least VouchMinScore, the target
// another agent it has not vouched for; the target gains VouchBonus (nothing between two
// addresses of one owner).
func vouchState(t *conductTx, op *conductOp) error {
	p, err := decodeVouch(op.tx)
	if err != nil {
		return err
	}
	voucher, err := t.needAgent(op.actor, ErrNotAnAgent, "voucher")
	if err != nil {
		return err
	}
	if voucher.Score < VouchMinScore {
		return ruleError(ErrScoreTooLow, "score %d is below the %d needed to vouch", voucher.Score, VouchMinScore)
	}
	target, err := t.needAgent(p.Target, ErrAgentNotFound, "target")
	if err != nil {
		return err
	}
	if done, err := t.view.Vouched(op.actor, p.Target); err != nil {
		return err
	} else if done {
		return ruleError(ErrAlreadyVouched, "%s has already vouched for %s", op.actor, p.Target)
	}
	same, err := op.sameOwner(op.actor, p.Target)
	if err != nil {
		return err
	}
	voucher.VouchesGiven++
	target.VouchesReceived++
	if !same {
		target.Score = ScoreChange(target.Score, VouchBonus)
	}
	t.ch.Vouches[HashPair{op.actor, p.Target}] = struct{}{}
	return nil
}

// createState: initiator and counterparty are agents; the contract opens with output 0 as
// its escrow.
func createState(t *conductTx, op *conductOp) error {
	p, err := decodeCreate(op.tx)
	if err != nil {
		return err
	}
	// The two agent records are only read.
	if err := t.mustBeAgent(op.actor, ErrNotAnAgent, "initiator"); err != nil {
		return err
	}
	if err := t.mustBeAgent(p.Counterparty, ErrAgentNotFound, "counterparty"); err != nil {
		return err
	}
	t.ch.Contracts[op.txid] = &ContractRecord{ID: op.txid, Initiator: op.actor, Counterparty: p.Counterparty,
		Value: op.tx.Outputs[0].Value, CreatedHeight: op.ctx.Height, ExpiresAt: op.ctx.Height + uint64(p.ExpiryBlocks),
		Status: ContractOpen}
	return nil
}

// openContract is the common part of a fulfilment and a refund: the contract named in the
// payload exists, is open, and input 0 spends its escrow. It returns the record to change.
func openContract(t *conductTx, op *conductOp) (*ContractRecord, error) {
	p, err := decodeContractRef(op.tx)
	if err != nil {
		return nil, err
	}
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
	if op.tx.Inputs[0].Outpoint() != (types.Outpoint{TxID: c.ID, Index: 0}) {
		return nil, ruleError(ErrEscrowNotSpent, "input 0 must spend the contract's escrow %s:0", c.ID)
	}
	return c, nil
}

// fulfilState: the counterparty fulfils an open contract before it expires; both gain
// (CounterpartyFee and InitiatorBonus, damped by the pair's earlier fulfilments; nothing
// between two addresses of one owner).
func fulfilState(t *conductTx, op *conductOp) error {
	c, err := openContract(t, op)
	if err != nil {
		return err
	}
	if op.actor != c.Counterparty {
		return ruleError(ErrNotCounterparty, "only the counterparty %s may fulfil contract %s", c.Counterparty, c.ID)
	}
	if op.ctx.Height >= c.ExpiresAt {
		return ruleError(ErrContractExpired, "contract %s expired at height %d", c.ID, c.ExpiresAt)
	}
	init, err := t.needAgent(c.Initiator, ErrNotAnAgent, "initiator")
	if err != nil {
		return err
	}
	cp, err := t.needAgent(c.Counterparty, ErrNotAnAgent, "counterparty")
	if err != nil {
		return err
	}
	k, err := t.view.FulfilledBetween(c.Initiator, c.Counterparty)
	if err != nil {
		return err
	}
	k++
	same, err := op.sameOwner(c.Initiator, c.Counterparty)
	if err != nil {
		return err
	}
	init.ContractsCompleted++
	cp.ContractsCompleted++
	if !same {
		cp.Score = ScoreChange(cp.Score, Damped(CounterpartyFee, k))
		init.Score = ScoreChange(init.Score, Damped(InitiatorBonus, k))
	}
	t.ch.Pairs[PairOf(c.Initiator, c.Counterparty)] = k
	c.Status = ContractFulfilled
	c.ClosedBy = op.txid
	return nil
}

// refundState: the initiator takes back the escrow of an open contract once it has expired,
// every output paying the initiator; the counterparty loses RefundPenalty.
func refundState(t *conductTx, op *conductOp) error {
	c, err := openContract(t, op)
	if err != nil {
		return err
	}
	if op.actor != c.Initiator {
		return ruleError(ErrNotInitiator, "only the initiator %s may take back the escrow of contract %s", c.Initiator, c.ID)
	}
	if op.ctx.Height < c.ExpiresAt {
		return ruleError(ErrContractNotExpired, "contract %s expires at height %d; a refund is possible from then on", c.ID, c.ExpiresAt)
	}
	for j := range op.tx.Outputs {
		if op.tx.Outputs[j].PubKeyHash != c.Initiator {
			return ruleError(ErrRefundOutputs, "output %d of a refund does not pay the initiator", j)
		}
	}
	cp, err := t.needAgent(c.Counterparty, ErrNotAnAgent, "counterparty")
	if err != nil {
		return err
	}
	cp.ContractsFailed++
	cp.Score = ScoreChange(cp.Score, -RefundPenalty)
	c.Status = ContractExpired
	c.ClosedBy = op.txid
	return nil
}

// reviewState: a participant of a fulfilled contract reviews the other, once; the subject's
// score changes by ReviewDelta, damped by the reviewer's earlier reviews of it (nothing
// between two addresses of one owner).
func reviewState(t *conductTx, op *conductOp) error {
	p, err := decodeReview(op.tx)
	if err != nil {
		return err
	}
	c, ok, err := t.contract(p.ContractID)
	if err != nil {
		return err
	}
	if !ok {
		return ruleError(ErrContractNotFound, "no contract %s", p.ContractID)
	}
	if c.Status != ContractFulfilled {
		return ruleError(ErrContractNotFulfilled, "contract %s is %s; only a fulfilled contract can be reviewed", c.ID, c.Status)
	}
	var bit uint8
	switch {
	case op.actor == c.Initiator && p.Subject == c.Counterparty:
		bit = ReviewedByInitiator
	case op.actor == c.Counterparty && p.Subject == c.Initiator:
		bit = ReviewedByCounterparty
	default:
		return ruleError(ErrNotParticipant, "reviewer and subject must be the two participants of contract %s", c.ID)
	}
	if c.Reviewed&bit != 0 {
		return ruleError(ErrAlreadyReviewed, "%s has already reviewed contract %s", op.actor, c.ID)
	}
	if err := t.mustBeAgent(op.actor, ErrNotAnAgent, "reviewer"); err != nil { // read only
		return err
	}
	subject, err := t.needAgent(p.Subject, ErrAgentNotFound, "subject")
	if err != nil {
		return err
	}
	k, err := t.view.ReviewsOf(op.actor, p.Subject)
	if err != nil {
		return err
	}
	k++
	same, err := op.sameOwner(op.actor, p.Subject)
	if err != nil {
		return err
	}
	subject.ReviewsReceived++
	subject.ReviewScoreSum += uint64(p.Score)
	if !same {
		subject.Score = ScoreChange(subject.Score, Damped(ReviewDelta(p.Score), k))
	}
	t.ch.Reviews[HashPair{op.actor, p.Subject}] = k
	c.Reviewed |= bit
	return nil
}
