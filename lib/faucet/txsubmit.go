package faucet

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/conductview"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

// POST /api/tx/submit completes an operation asked with public_key (unsigned.go): the
// client sends back the unsigned transaction with its public key and its one signature of
// the sign message; the faucet puts both in every input, checks the signature and that every
// input is a coin of the key's address (or the escrow the kind spends), broadcasts, and
// answers what the mnemonic form of that kind answers, with the same error codes.

// Codes of POST /api/tx/submit (with CodeInvalidPublicKey; bad_signature and
// pubkey_mismatch are the node's reasons of the same checks).
const (
	// CodeInvalidUnsignedTx: unsigned_tx is not the hex bincode of a transfer or agent
	// transaction with every public key and signature zero.
	CodeInvalidUnsignedTx = "invalid_unsigned_tx"
	// CodeInvalidSignature: signature is not 128 hexadecimal characters.
	CodeInvalidSignature = "invalid_signature"
)

// TxSubmit completes an operation asked with public_key (POST /api/tx/submit): its answer
// is the body the mnemonic form of the transaction's kind answers.
func (s *Service) TxSubmit(ctx context.Context, req api.TxSubmitRequest) (any, error) {
	res, err := s.txSubmit(ctx, req)
	if err != nil {
		return nil, s.fault(err)
	}
	return res, nil
}

func (s *Service) txSubmit(ctx context.Context, req api.TxSubmitRequest) (any, error) {
	tx, err := unsignedTxField(req.UnsignedTx)
	if err != nil {
		return nil, err
	}
	key, err := s.publicKeyOf(req.PublicKey)
	if err != nil {
		return nil, err
	}
	if err := required("signature", req.Signature); err != nil {
		return nil, err
	}
	sig, err := hex.DecodeString(strings.TrimSpace(req.Signature))
	if err != nil || len(sig) != ed25519.SignatureSize {
		return nil, apiErr(api.KindInvalid, CodeInvalidSignature,
			"signature must be 128 hexadecimal characters: the Ed25519 signature of the sign message")
	}
	txid := tx.TxID()
	for i := range tx.Inputs {
		copy(tx.Inputs[i].PublicKey[:], key.Pub)
		copy(tx.Inputs[i].Signature[:], sig)
	}
	// Every input carries the same key and signature of the same message: one verification
	// (ZIP 215, as consensus) answers for all, however many inputs the body holds.
	if c := consensus.SigChecks(tx, txid, s.cfg.Net.Magic, nil)[0]; c.Verify() != nil {
		return nil, apiErr(api.KindInvalid, string(reason.BadSignature),
			"the signature does not verify with public_key over the sign message of transaction %s (\"COIN-TX-V1\", the network magic %x, the txid): sign exactly the sign field of the unsigned answer, with the key of public_key",
			txid, s.cfg.Net.Magic)
	}
	unlock := s.locks.lock(key.Address)
	defer unlock()
	ctx, cancel := s.nodeCtx(ctx)
	defer cancel()
	fee, err := s.checkInputs(ctx, tx, txid, key)
	if err != nil {
		return nil, err
	}
	what := submitWhat(tx.Kind)
	hexTx := hex.EncodeToString(tx.Bytes())
	got, err := s.cfg.Node.SendRawTransaction(ctx, hexTx)
	if err == nil && got != txid.String() {
		err = fmt.Errorf("node returned txid %s for transaction %s", got, txid)
	}
	if err != nil {
		if tx.Kind == types.KindTransfer {
			var rpcErr *jsonrpc.Error
			if errors.As(err, &rpcErr) {
				return nil, apiErr(api.KindInvalid, "tx_rejected", "the node rejected the transaction: %s", rpcErr.Message)
			}
			return nil, err
		}
		return nil, agentRefusal(err, key.Address, what)
	}
	return s.submitAnswer(ctx, tx, txid, key, fee)
}

// unsignedTxField reads unsigned_tx: the hex bincode of a transfer or an agent transaction,
// with inputs, whose public keys and signatures are all zero.
func unsignedTxField(v string) (*types.Transaction, error) {
	if err := required("unsigned_tx", v); err != nil {
		return nil, err
	}
	b, err := hex.DecodeString(strings.TrimSpace(v))
	if err != nil {
		return nil, apiErr(api.KindInvalid, CodeInvalidUnsignedTx, "unsigned_tx must be hexadecimal")
	}
	tx, err := types.DecodeTransaction(b)
	if err != nil {
		return nil, apiErr(api.KindInvalid, CodeInvalidUnsignedTx, "unsigned_tx is not a transaction: %v", err)
	}
	if tx.Kind != types.KindTransfer && !consensus.IsAgentKind(tx.Kind) || len(tx.Inputs) == 0 {
		return nil, apiErr(api.KindInvalid, CodeInvalidUnsignedTx, "unsigned_tx must be a transfer or an agent operation with inputs, not a %s", tx.Kind)
	}
	for i := range tx.Inputs {
		if tx.Inputs[i].PublicKey != ([32]byte{}) || tx.Inputs[i].Signature != ([64]byte{}) {
			return nil, apiErr(api.KindInvalid, CodeInvalidUnsignedTx,
				"input %d of unsigned_tx has a public key or signature: send the transaction as the faucet answered it (all zero) with public_key and signature", i)
		}
	}
	return tx, nil
}

// checkInputs checks that every input of tx is an unspent coin of key's address in the
// node's pending view, or the escrow of the contract a fulfilment (by the counterparty) or a
// refund (by the initiator) names, and returns the fee (the inputs' effective values less
// the outputs). A contract refused here gets the code the mnemonic form gives. A
// transaction the node knows already (a second submission) is left to the node's refusal.
func (s *Service) checkInputs(ctx context.Context, tx *types.Transaction, txid types.Hash, key wallet.Key) (uint64, error) {
	us, err := s.cfg.Node.GetUtxosByAddress(ctx, key.Address, true)
	if err != nil {
		return 0, err
	}
	values := make(map[types.Outpoint]uint64, len(us))
	for i := range us {
		if us[i].Locked { // a stake or an escrow: spent only by its kind, below
			continue
		}
		id, err := types.ParseHash(us[i].TxID)
		if err != nil {
			return 0, fmt.Errorf("node listed a bad txid: %w", err)
		}
		values[types.Outpoint{TxID: id, Index: us[i].Index}] = wallet.CoinValue(&us[i])
	}
	if tx.Kind == types.KindContractFulfil || tx.Kind == types.KindContractRefund {
		p, err := types.DecodeContractRefPayload(tx.Payload)
		if err != nil {
			return 0, apiErr(api.KindInvalid, CodeInvalidUnsignedTx, "unsigned_tx: %v", err)
		}
		// The contract's rules (it exists and is open, the signer is its counterparty or
		// initiator) are consensus's, run on tx itself; the contract is read once.
		c, node, err := s.readContract(ctx, p.ContractID)
		if err != nil {
			return 0, err
		}
		if err := conductview.Check(ctx, node, s.cfg.Net, tx); err != nil {
			return 0, s.addressed(agentRefusal(err, key.Address, submitWhat(tx.Kind)), append(participants(c), key.Address)...)
		}
		e, err := wallet.EscrowOf(c, s.cfg.Net)
		if err != nil {
			return 0, err
		}
		values[types.Outpoint{TxID: e.ContractID, Index: 0}] = e.Value
	}
	var in, out uint64
	for i := range tx.Inputs {
		v, ok := values[tx.Inputs[i].Outpoint()]
		if !ok {
			if _, err := s.cfg.Node.GetTransaction(ctx, txid.String()); err == nil {
				return 0, nil // sent already: the node says so, in its words
			}
			return 0, apiErr(api.KindInvalid, string(reason.PubKeyMismatch),
				"input %d spends %s, which is no unspent coin of %s, the address of public_key", i, tx.Inputs[i].Outpoint(), key.Address)
		}
		in += v
	}
	for _, o := range tx.Outputs {
		out += o.Value
	}
	if out > in {
		return 0, nil // the node refuses it (the outputs exceed the inputs)
	}
	return in - out, nil
}

// submitWhat names the operation of a kind, for the message of a refusal (as the endpoints
// name theirs).
func submitWhat(k types.TxKind) string {
	switch k {
	case types.KindAgentRegister:
		return "registering (a stake of " + amount.Format(consensus.AgentStake) + " COIN)"
	case types.KindVouch:
		return "the vouch"
	case types.KindContractCreate:
		return "the contract"
	case types.KindContractFulfil:
		return "the fulfilment"
	case types.KindContractRefund:
		return "the refund"
	case types.KindReview:
		return "the review"
	}
	return "the transfer"
}

// address is the address of a pubkey hash on the faucet's network.
func (s *Service) address(pkh types.Hash) string {
	a, _ := keys.EncodeAddress(s.cfg.Net.HRP, keys.PubKeyHash(pkh))
	return a
}

// submitAnswer is the answer of the accepted transaction tx: the body the mnemonic form of
// its kind answers.
func (s *Service) submitAnswer(ctx context.Context, tx *types.Transaction, txid types.Hash, key wallet.Key, fee uint64) (any, error) {
	var body any
	switch tx.Kind {
	case types.KindTransfer:
		res := api.TransferResult{TxID: txid.String(), From: key.Address, Fee: amount.Format(fee)}
		if len(tx.Outputs) > 0 { // the payment is output 0, the change (if any) after it
			res.To, res.Amount = s.address(tx.Outputs[0].PubKeyHash), amount.Format(tx.Outputs[0].Value)
		}
		body = res
	case types.KindAgentRegister:
		body = api.RegisterResult{Address: key.Address, StakeTxID: txid.String(), ConductScore: consensus.InitialScore}
	case types.KindVouch:
		p, _ := types.DecodeVouchPayload(tx.Payload) // the node accepted it: it decodes
		body = api.VouchResult{Voucher: key.Address, Target: s.address(p.Target), TxID: txid.String()}
	case types.KindContractCreate:
		p, _ := types.DecodeContractCreatePayload(tx.Payload)
		body = api.ContractCreateResult{ContractID: txid.String(), Initiator: key.Address, Counterparty: s.address(p.Counterparty),
			ValueCoin: amount.Format(tx.Outputs[0].Value), Status: consensus.ContractOpen.String(), ExpiryBlocks: p.ExpiryBlocks}
	case types.KindContractFulfil:
		p, _ := types.DecodeContractRefPayload(tx.Payload)
		body = api.FulfilResult{ContractID: p.ContractID.String(), Status: consensus.ContractFulfilled.String(), ReleaseTxID: txid.String()}
	case types.KindContractRefund:
		p, _ := types.DecodeContractRefPayload(tx.Payload)
		body = api.RefundResult{ContractID: p.ContractID.String(), Status: consensus.ContractExpired.String(), RefundTxID: txid.String()}
	case types.KindReview:
		p, _ := types.DecodeReviewPayload(tx.Payload)
		return s.reviewAnswer(ctx, key.Address, s.address(p.Subject), int(p.Score), p.ContractID, txid)
	}
	return body, nil
}
