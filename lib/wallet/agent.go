package wallet

import (
	"context"
	"fmt"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// The Proof of Conduct transactions (protocol §9), built once for coin-wallet and the faucet.
// Each constructor returns the Request of one operation of the acting agent (actor: its
// pubkey hash); [BuildAgent] selects coins of the actor only, signs with the actor's key and
// applies the context-free rules, and [SpendAgent] lists, builds and broadcasts. The
// constructors check what they can without the chain (score, expiry, escrow value, self
// targets) and return a consensus.RuleError of the rule's kind, so a user reads the same
// reason (reason.InvalidScore, ...) whether the wallet or the node refused.

func ruleErr(kind consensus.ErrorKind, format string, args ...any) error {
	return consensus.RuleError{Err: kind, Description: fmt.Sprintf(format, args...)}
}

// RegisterRequest registers actor as an agent: output 0 stakes consensus.AgentStake to the
// actor's own address (locked for good), change back to the actor.
func RegisterRequest(actor types.Hash) Request {
	return Request{Kind: types.KindAgentRegister, Locked: &Payment{PKH: actor, Value: consensus.AgentStake}, Change: actor}
}

// VouchRequest vouches for target. Its only output is the actor's change.
func VouchRequest(actor, target types.Hash) (Request, error) {
	if actor == target {
		return Request{}, ruleErr(consensus.ErrSelfTarget, "an agent cannot vouch for itself")
	}
	return Request{Kind: types.KindVouch, Payload: types.VouchPayload{Target: target}.Bytes(), Change: actor}, nil
}

// ContractCreateRequest opens a contract of value subunits with counterparty, expiring
// expiryBlocks blocks after its creation (0: consensus.DefaultExpiry). Output 0 is the
// escrow, which pays the counterparty's pubkey hash and is locked until the contract is
// fulfilled or refunded. The contract's id will be the transaction's id.
func ContractCreateRequest(actor, counterparty types.Hash, value uint64, expiryBlocks uint32) (Request, error) {
	if expiryBlocks == 0 {
		expiryBlocks = consensus.DefaultExpiry
	}
	switch {
	case actor == counterparty:
		return Request{}, ruleErr(consensus.ErrSelfTarget, "an agent cannot make a contract with itself")
	case expiryBlocks < consensus.MinExpiry || expiryBlocks > consensus.MaxExpiry:
		return Request{}, ruleErr(consensus.ErrInvalidExpiry, "expiry of %d blocks is outside %d to %d",
			expiryBlocks, consensus.MinExpiry, consensus.MaxExpiry)
	case value < consensus.MinEscrow:
		return Request{}, ruleErr(consensus.ErrBadEscrow, "the escrowed value must be at least %d subunits", consensus.MinEscrow)
	}
	return Request{Kind: types.KindContractCreate, Locked: &Payment{PKH: counterparty, Value: value}, Change: actor,
		Payload: types.ContractCreatePayload{Counterparty: counterparty, ExpiryBlocks: expiryBlocks}.Bytes()}, nil
}

// Escrow is what fulfilling or refunding a contract needs to know of it: its id (the
// ContractCreate txid, whose output 0 is the escrow), the escrowed value and its two
// participants.
type Escrow struct {
	ContractID   types.Hash
	Value        uint64
	Initiator    types.Hash
	Counterparty types.Hash
}

// EscrowOf reads a contract record of getcontract.
func EscrowOf(c *rpcapi.Contract, net *params.Network) (Escrow, error) {
	id, err := types.ParseHash(c.ContractID)
	if err != nil {
		return Escrow{}, fmt.Errorf("contract id: %w", err)
	}
	init, err := DecodeAddress(c.Initiator, net)
	if err != nil {
		return Escrow{}, fmt.Errorf("contract initiator: %w", err)
	}
	cp, err := DecodeAddress(c.Counterparty, net)
	if err != nil {
		return Escrow{}, fmt.Errorf("contract counterparty: %w", err)
	}
	return Escrow{ContractID: id, Value: c.Value, Initiator: init, Counterparty: cp}, nil
}

// OpenEscrowOf is EscrowOf for a fulfilment or a refund: a contract that is not open any
// more is refused with a consensus.RuleError of kind ErrContractNotOpen (reason
// contract_not_open), since its escrow is spent already.
func OpenEscrowOf(c *rpcapi.Contract, net *params.Network) (Escrow, error) {
	if c.Status != consensus.ContractOpen.String() {
		return Escrow{}, ruleErr(consensus.ErrContractNotOpen, "contract %s is %s already (closed by %s)", c.ContractID, c.Status, c.ClosedBy)
	}
	return EscrowOf(c, net)
}

// coin is the escrow as an input: it pays the counterparty.
func (e Escrow) coin() Coin {
	return Coin{Outpoint: types.Outpoint{TxID: e.ContractID, Index: 0}, Value: e.Value, PKH: e.Counterparty}
}

// FulfilRequest releases the escrow to the counterparty, who signs: input 0 is the escrow,
// the only output is the counterparty's change, so the fee comes out of the escrow (the
// counterparty's own coins are added only when the escrow cannot pay the fee and leave
// change of at least the dust limit).
func FulfilRequest(e Escrow) Request {
	return Request{Kind: types.KindContractFulfil, Payload: types.ContractRefPayload{ContractID: e.ContractID}.Bytes(),
		Inputs: []Coin{e.coin()}, Change: e.Counterparty}
}

// RefundRequest takes the escrow of an expired contract back to the initiator, who signs
// for it (protocol §9.1): input 0 is the escrow with the initiator as its signer, and every
// output pays the initiator (its change is the only output; the fee comes out of the
// escrow).
func RefundRequest(e Escrow) Request {
	c := e.coin()
	c.Signer = e.Initiator
	return Request{Kind: types.KindContractRefund, Payload: types.ContractRefPayload{ContractID: e.ContractID}.Bytes(),
		Inputs: []Coin{c}, Change: e.Initiator}
}

// ReviewRequest reviews subject, the other participant of the fulfilled contract
// contractID, with a score of 1 (terrible) to 10 (excellent).
func ReviewRequest(actor, contractID, subject types.Hash, score int) (Request, error) {
	switch {
	case score < consensus.MinReviewScore || score > consensus.MaxReviewScore:
		return Request{}, ruleErr(consensus.ErrInvalidScore, "review score %d is outside %d to %d",
			score, consensus.MinReviewScore, consensus.MaxReviewScore)
	case actor == subject:
		return Request{}, ruleErr(consensus.ErrSelfTarget, "an agent cannot review itself")
	}
	return Request{Kind: types.KindReview, Change: actor,
		Payload: types.ReviewPayload{ContractID: contractID, Subject: subject, Score: uint8(score)}.Bytes()}, nil
}

// BuildAgent builds and signs the agent transaction req for the acting agent key. Only
// key's coins are selected (every input of an agent transaction belongs to the actor,
// protocol §9); coins of other addresses are ignored. Change goes to the actor. The required
// inputs (a contract's escrow) must be the actor's to sign: a fulfil by anyone but the
// counterparty is refused with consensus.ErrNotCounterparty, a refund by anyone but the
// initiator with consensus.ErrNotInitiator. The signed transaction passes
// consensus.CheckTransactionSanity (the kind's context-free rules) or is not returned.
func BuildAgent(coins []Coin, req Request, key Key, magic [4]byte) (*Plan, error) {
	plan, err := SelectAgent(coins, req, key.PKH)
	if err != nil {
		return nil, err
	}
	if err := Sign(plan, []Key{key}, magic); err != nil {
		return nil, err
	}
	if err := consensus.CheckTransactionSanity(plan.Tx, plan.Size); err != nil {
		return nil, err
	}
	return plan, nil
}

// SelectAgent is BuildAgent without the signature: the agent transaction req of the acting
// agent actor (its pubkey hash), its coins selected, every public key and signature zero.
// The plan's TxID is final (signatures are not part of it), and its Size and Fee are those
// of the signed transaction (a witness has a fixed size), so a client that signs the txid
// elsewhere gets exactly the transaction BuildAgent would have made. The kind's
// context-free rules (consensus.CheckTransactionSanity) need the public keys: BuildAgent and
// PlanUnsigned check them.
func SelectAgent(coins []Coin, req Request, actor types.Hash) (*Plan, error) {
	if !consensus.IsAgentKind(req.Kind) {
		return nil, fmt.Errorf("%w: %s is no agent operation", ErrBadKind, req.Kind)
	}
	for _, c := range req.Inputs {
		if c.signer() == actor {
			continue
		}
		if req.Kind == types.KindContractRefund {
			return nil, ruleErr(consensus.ErrNotInitiator, "only the contract's initiator may take back its escrow")
		}
		if req.Kind == types.KindContractFulfil {
			return nil, ruleErr(consensus.ErrNotCounterparty, "only the contract's counterparty may fulfil it")
		}
		return nil, ruleErr(consensus.ErrForeignInput, "input %s is not the acting agent's", c.Outpoint)
	}
	if req.Change == (types.Hash{}) {
		req.Change = actor
	}
	if req.Change != actor {
		return nil, fmt.Errorf("%w: the change of an agent transaction goes to the acting agent", ErrBadKind)
	}
	own := make([]Coin, 0, len(coins))
	for _, c := range coins {
		if c.PKH == actor && c.Signer == (types.Hash{}) {
			own = append(own, c)
		}
	}
	return Select(own, req)
}

// SpendAgent builds req for the acting agent key from the coins of key's address in the
// node's pending view (unconfirmed change included, outputs spent in the mempool and locked
// outputs left out), signs it and broadcasts it. On any error nothing was broadcast or the
// node refused it: nothing was spent. The node's refusal comes back as it came, so
// errors.Is matches its kind (reason.NotAnAgent, consensus.ErrScoreTooLow, ...).
func SpendAgent(ctx context.Context, node NodeClient, net *params.Network, key Key, req Request) (*Plan, error) {
	coins, err := pendingCoins(ctx, node, []string{key.Address})
	if err != nil {
		return nil, err
	}
	plan, err := BuildAgent(coins, req, key, net.Magic)
	if err != nil {
		return nil, err
	}
	return plan, Broadcast(ctx, node, plan)
}
