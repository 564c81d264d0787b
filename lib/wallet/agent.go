package wallet

import (
	"context"
	"crypto/ed25519"
	"fmt"

	"github.com/cointoolkit/coin/lib/conductview"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// The Proof of Conduct transactions (protocol §9), built once for coin-wallet and the faucet.
// Each constructor returns the Request of one operation of the acting agent (actor: its
// pubkey hash); [PrecheckAgent] runs consensus's rules of the operation against the node's
// pending view, [BuildAgent] selects coins of the actor only, signs with the actor's key and
// applies the context-free rules, and [SpendAgent] lists, builds and broadcasts. The
// constructors run consensus's context-free rules (score, expiry, escrow value, self
// targets) and PrecheckAgent all of them, so a refusal is the consensus.RuleError the node
// would give, in the same words and of the same reason (reason.InvalidScore, ...).

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
	p := types.VouchPayload{Target: target}
	if err := consensus.CheckVouchPayload(actor, p); err != nil {
		return Request{}, err
	}
	return Request{Kind: types.KindVouch, Payload: p.Bytes(), Change: actor}, nil
}

// ContractCreateRequest opens a contract of value subunits with counterparty, expiring
// expiryBlocks blocks after its creation (0: consensus.DefaultExpiry). Output 0 is the
// escrow, which pays the counterparty's pubkey hash and is locked until the contract is
// fulfilled or refunded. The contract's id will be the transaction's id.
func ContractCreateRequest(actor, counterparty types.Hash, value uint64, expiryBlocks uint32) (Request, error) {
	if expiryBlocks == 0 {
		expiryBlocks = consensus.DefaultExpiry
	}
	p := types.ContractCreatePayload{Counterparty: counterparty, ExpiryBlocks: expiryBlocks}
	if err := consensus.CheckContractCreate(actor, p, types.TxOutput{Value: value, PubKeyHash: counterparty}); err != nil {
		return Request{}, err
	}
	return Request{Kind: types.KindContractCreate, Locked: &Payment{PKH: counterparty, Value: value}, Change: actor,
		Payload: p.Bytes()}, nil
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
	// The score is checked as the integer it is before it narrows to the payload's byte.
	if err := consensus.CheckReviewScore(int64(score)); err != nil {
		return Request{}, err
	}
	p := types.ReviewPayload{ContractID: contractID, Subject: subject, Score: uint8(score)}
	if err := consensus.CheckReviewPayload(actor, p); err != nil {
		return Request{}, err
	}
	return Request{Kind: types.KindReview, Change: actor, Payload: p.Bytes()}, nil
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

// PrecheckAgent runs every consensus rule of the operation req of the acting agent with
// public key pub against the node's pending view, for the next block (consensus.CheckAgentTx
// through lib/conductview), before any coin is selected or anything is signed: nil, the
// consensus.RuleError the node would refuse it with, or the node's error. It checks req as a
// draft transaction: its kind, payload, required inputs and locked output, with pub in every
// input and the change as the last output; coin selection adds only more inputs of the actor
// and sets the values, which no conduct rule but the stake and the escrow (set by the
// constructors) reads. pub needs no private part (the faucet's public_key requests).
func PrecheckAgent(ctx context.Context, node conductview.NodeClient, net *params.Network, req Request, pub ed25519.PublicKey) error {
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("wallet: a public key of %d bytes, want %d", len(pub), ed25519.PublicKeySize)
	}
	return conductview.Check(ctx, node, net, draftAgent(req, pub))
}

// draftAgent is req as PrecheckAgent checks it.
func draftAgent(req Request, pub ed25519.PublicKey) *types.Transaction {
	in := types.TxInput{}
	copy(in.PublicKey[:], pub)
	actor := types.Blake3(in.PublicKey[:])
	tx := &types.Transaction{Version: consensus.TxVersion, Kind: req.Kind, Payload: req.Payload, LockTime: req.LockTime}
	for _, c := range req.Inputs {
		in.PrevTxID, in.PrevIndex = c.Outpoint.TxID, c.Outpoint.Index
		tx.Inputs = append(tx.Inputs, in)
	}
	if len(tx.Inputs) == 0 {
		tx.Inputs = append(tx.Inputs, in)
	}
	if req.Locked != nil {
		tx.Outputs = append(tx.Outputs, types.TxOutput{Value: req.Locked.Value, PubKeyHash: req.Locked.PKH})
	}
	for _, p := range req.Payments {
		tx.Outputs = append(tx.Outputs, types.TxOutput{Value: p.Value, PubKeyHash: p.PKH})
	}
	change := req.Change
	if change == (types.Hash{}) {
		change = actor
	}
	tx.Outputs = append(tx.Outputs, types.TxOutput{PubKeyHash: change})
	return tx
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
