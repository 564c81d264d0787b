package faucet

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

// Operations for a client that keeps its key (docs/protocol.md §9.5, "Signing
// elsewhere"). Every endpoint that acts for a wallet takes either its mnemonic (the faucet
// derives the key, signs and broadcasts) or its public key: then the faucet builds the same
// transaction, runs the same checks, and answers it unsigned (api.UnsignedTx) instead of
// broadcasting it; the client checks and signs it and sends it with POST /api/tx/submit
// (txsubmit.go), which answers what the mnemonic form answers.

// Codes of the public key form.
const (
	// CodeAmbiguousKey: a request carries both mnemonic and public_key.
	CodeAmbiguousKey = "ambiguous_key"
	// CodeInvalidPublicKey: public_key is not 64 hexadecimal characters.
	CodeInvalidPublicKey = "invalid_public_key"
)

// oneKey refuses a request with both a mnemonic and a public key, or neither.
func oneKey(mnemonic, publicKey string) error {
	m, p := strings.TrimSpace(mnemonic) != "", strings.TrimSpace(publicKey) != ""
	switch {
	case m && p:
		return apiErr(api.KindInvalid, CodeAmbiguousKey,
			"give mnemonic or public_key, not both: with public_key the faucet answers the transaction for you to sign and send with POST /api/tx/submit")
	case !m && !p:
		return apiErr(api.KindInvalid, "bad_request",
			"field mnemonic is required, or public_key (64 hex) to sign the transaction yourself")
	}
	return nil
}

// actingKey is the acting wallet's key: derived from mnemonic (agentKey), or, for a public
// key, the key without its private part (Priv nil), which makes spendAgent answer the
// transaction unsigned.
func (s *Service) actingKey(mnemonic, publicKey string) (wallet.Key, error) {
	if err := oneKey(mnemonic, publicKey); err != nil {
		return wallet.Key{}, err
	}
	if strings.TrimSpace(publicKey) != "" {
		return s.publicKeyOf(publicKey)
	}
	return s.agentKey(mnemonic)
}

// publicKeyOf reads a public_key field: 64 hex characters, the Ed25519 public key of the
// acting address, whose pubkey hash and address it computes.
func (s *Service) publicKeyOf(v string) (wallet.Key, error) {
	if err := required("public_key", v); err != nil {
		return wallet.Key{}, err
	}
	b, err := hex.DecodeString(strings.TrimSpace(v))
	if err != nil || len(b) != ed25519.PublicKeySize {
		return wallet.Key{}, apiErr(api.KindInvalid, CodeInvalidPublicKey,
			"public_key must be 64 hexadecimal characters: the Ed25519 public key of the acting address")
	}
	pkh := keys.HashPubKey(b)
	addr, err := keys.EncodeAddress(s.cfg.Net.HRP, pkh)
	if err != nil {
		return wallet.Key{}, err
	}
	return wallet.Key{Pub: ed25519.PublicKey(b), PKH: types.Hash(pkh), Address: addr}, nil
}

// unsignedAnswer is the answer of an operation asked with a public key. spendAgent returns
// it, as an error, in place of the broadcast it did not do, so that the rest of the
// operation (its answer after the broadcast) is skipped; answer makes it the operation's
// api.Answer. It never leaves the service.
type unsignedAnswer struct{ body api.UnsignedTx }

func (u *unsignedAnswer) Error() string { return "unsigned transaction " + u.body.TxID }

// answer is the answer of an operation that acts for a wallet, from what it did: the
// unsigned transaction (err is an *unsignedAnswer), its refusal (as an *api.Error), or res.
func answer[T any](s *Service, res *T, err error) (api.Answer[T], error) {
	var u *unsignedAnswer
	if errors.As(err, &u) {
		return api.Answer[T]{Unsigned: &u.body}, nil
	}
	if err != nil {
		return api.Answer[T]{}, s.fault(err)
	}
	return api.Answer[T]{Result: res}, nil
}

// buildUnsigned builds req for key's address without signing (wallet.PlanUnsigned) and
// returns its answer as an *unsignedAnswer; refuse maps a building error (insufficient
// coins, a rule the wallet checks) as the mnemonic form maps it.
func (s *Service) buildUnsigned(ctx context.Context, key wallet.Key, req wallet.Request, refuse func(error) error) error {
	req.FeeRate = s.cfg.FeeRate
	plan, err := wallet.PlanUnsigned(ctx, s.cfg.Node, key.Address, key.Pub, req)
	if err != nil {
		return refuse(err)
	}
	body := api.UnsignedTx{UnsignedTx: hex.EncodeToString(plan.Tx.Bytes()), TxID: plan.TxID.String(),
		Sign: hex.EncodeToString(types.SigMessage(s.cfg.Net.Magic, plan.TxID)), Fee: amount.Format(plan.Fee),
		Inputs: make([]api.UnsignedCoin, len(plan.Coins))}
	for i, c := range plan.Coins {
		body.Inputs[i] = api.UnsignedCoin{TxID: c.Outpoint.TxID.String(), Index: c.Outpoint.Index, Value: amount.Format(c.Value)}
	}
	return &unsignedAnswer{body}
}
