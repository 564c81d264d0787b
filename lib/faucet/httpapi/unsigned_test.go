package httpapi

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/types"
)

// The public key form of the operations (unsigned.go, txsubmit.go; protocol §9.5).

// localKey is the key of a mnemonic derived by the client, with lib/keys (account 0,
// index 0), as coin-wallet derives it: the faucet never sees it.
func localKey(t testing.TB, mnemonic string) ed25519.PrivateKey {
	t.Helper()
	seed, err := keys.SeedFromMnemonic(mnemonic, "")
	if err != nil {
		t.Fatal(err)
	}
	return keys.DeriveAccountKey(seed, testNet.CoinType, 0, 0).PrivateKey()
}

func pubHex(k ed25519.PrivateKey) string { return hex.EncodeToString(k.Public().(ed25519.PublicKey)) }

func publicKeyBody(k ed25519.PrivateKey, fields ...string) string {
	return `{"public_key":"` + pubHex(k) + `"` + strings.Join(append([]string{""}, fields...), ",") + "}"
}

// checkUnsigned checks an unsigned answer as a careful client does (decodes the bincode,
// recomputes the txid and the message to sign) and returns its transaction.
func checkUnsigned(t testing.TB, u api.UnsignedTx) *types.Transaction {
	t.Helper()
	b, err := hex.DecodeString(u.UnsignedTx)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := types.DecodeTransaction(b)
	if err != nil {
		t.Fatal(err)
	}
	if tx.TxID().String() != u.TxID {
		t.Fatalf("txid %s, the transaction's is %s", u.TxID, tx.TxID())
	}
	if want := hex.EncodeToString(types.SigMessage(testNet.Magic, tx.TxID())); u.Sign != want {
		t.Fatalf("sign %s, want %s", u.Sign, want)
	}
	if len(u.Inputs) != len(tx.Inputs) {
		t.Fatalf("%d inputs listed, the transaction has %d", len(u.Inputs), len(tx.Inputs))
	}
	var in, out uint64
	for i, c := range u.Inputs {
		if c.TxID != tx.Inputs[i].PrevTxID.String() || c.Index != tx.Inputs[i].PrevIndex {
			t.Fatalf("input %d listed as %+v", i, c)
		}
		if tx.Inputs[i].PublicKey != ([32]byte{}) || tx.Inputs[i].Signature != ([64]byte{}) {
			t.Fatalf("input %d is not blank", i)
		}
		v, err := amount.Parse(c.Value)
		if err != nil {
			t.Fatal(err)
		}
		in += v
	}
	for _, o := range tx.Outputs {
		out += o.Value
	}
	if amount.Format(in-out) != u.Fee {
		t.Fatalf("fee %s, the inputs less the outputs are %s", u.Fee, amount.Format(in-out))
	}
	return tx
}

// sign signs an unsigned answer's message with k.
func sign(t testing.TB, k ed25519.PrivateKey, u api.UnsignedTx) string {
	t.Helper()
	msg, err := hex.DecodeString(u.Sign)
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(ed25519.Sign(k, msg))
}

func submitBody(unsigned string, k ed25519.PrivateKey, sig string) string {
	b, _ := json.Marshal(api.TxSubmitRequest{UnsignedTx: unsigned, PublicKey: pubHex(k), Signature: sig})
	return string(b)
}

// lifecycle runs every operation for two agents (a send, both registrations, a vouch, two
// contracts, a fulfilment, reviews both ways, a refund) and returns each answer's body.
// With keyed, every operation is asked with public_key, checked, signed here with lib/keys
// and sent with POST /api/tx/submit: no mnemonic reaches the faucet.
func lifecycle(t *testing.T, keyed bool, ma, mb string) (answers []string, h *harness) {
	h = newHarness(t, 12, noIPLimit)
	a, b := walletOf(t, ma), walletOf(t, mb)
	h.fund(t, a, b)
	act := func(w agentWallet, path string, fields ...string) {
		t.Helper()
		if !keyed {
			r := h.do(t, "POST", path, mnemonicBody(w, fields...))
			if r.Status != 200 {
				t.Fatalf("%s: %d %s", path, r.Status, r.Raw)
			}
			answers = append(answers, r.Raw)
			return
		}
		k := localKey(t, w.mnemonic)
		sent := h.sends()
		var u api.UnsignedTx
		h.ok(t, "POST", path, publicKeyBody(k, fields...), &u)
		checkUnsigned(t, u)
		if h.sends() != sent {
			t.Fatalf("%s with public_key broadcast a transaction", path)
		}
		r := h.do(t, "POST", "/api/tx/submit", submitBody(u.UnsignedTx, k, sign(t, k, u)))
		if r.Status != 200 {
			t.Fatalf("%s submitted: %d %s", path, r.Status, r.Raw)
		}
		answers = append(answers, r.Raw)
	}
	act(a, "/api/wallet/send", field("to", b.address), `"amount":1.5`)
	act(a, "/api/agent/register")
	act(b, "/api/agent/register")
	h.trust(t, a)
	act(a, "/api/agent/vouch", field("target_address", b.address))
	act(a, "/api/agent/contract/create", field("counterparty", b.address), `"value_coin":2.5`)
	act(a, "/api/agent/contract/create", field("counterparty", b.address), `"value_coin":1`, `"expiry_blocks":10`)
	var c1, c2 api.ContractCreateResult
	strict(t, answers[4], &c1)
	strict(t, answers[5], &c2)
	act(b, "/api/agent/contract/fulfil", field("contract_id", c1.ContractID))
	act(a, "/api/agent/review", field("subject_address", b.address), `"score":9`, field("contract_id", c1.ContractID))
	act(b, "/api/agent/review", field("subject_address", a.address), `"score":3`, field("contract_id", c1.ContractID))
	h.mine(10)
	act(a, "/api/agent/contract/refund", field("contract_id", c2.ContractID))
	for _, w := range []agentWallet{a, b} {
		r := h.do(t, "GET", "/api/agent/profile?address="+w.address, "")
		answers = append(answers, r.Raw)
	}
	return answers, h
}

// walletOf is the agent wallet of a mnemonic.
func walletOf(t testing.TB, m string) agentWallet {
	t.Helper()
	k := localKey(t, m)
	pkh := types.Hash(keys.HashPubKey(k.Public().(ed25519.PublicKey)))
	a, err := keys.EncodeAddress(testNet.HRP, keys.PubKeyHash(pkh))
	if err != nil {
		t.Fatal(err)
	}
	return agentWallet{m, a, pkh}
}

// Every operation asked with public_key, signed by the client and sent with /api/tx/submit
// answers exactly (byte for byte: the same transactions, the same scores) what it answers
// with the mnemonic. The two runs are on two nodes, so only the blocks' times (an agent's
// registered_at) differ.
func TestPublicKeyPathIsTheMnemonicPath(t *testing.T) {
	ma, mb := newAgentWallet(t).mnemonic, newAgentWallet(t).mnemonic
	want, _ := lifecycle(t, false, ma, mb)
	got, _ := lifecycle(t, true, ma, mb)
	if len(got) != len(want) {
		t.Fatalf("%d answers, want %d", len(got), len(want))
	}
	for i := range want {
		got[i], want[i] = timeRE.ReplaceAllString(got[i], "<time>"), timeRE.ReplaceAllString(want[i], "<time>")
		if got[i] != want[i] {
			t.Errorf("answer %d:\n public key %s\n mnemonic   %s", i, got[i], want[i])
		}
	}
}

// A bad signature, another key, a tampered transaction and malformed fields are refused with
// their codes, and nothing is broadcast.
func TestTxSubmitRefusals(t *testing.T) {
	h := newHarness(t, 5, noIPLimit)
	a, b := newAgentWallet(t), newAgentWallet(t)
	h.fund(t, a, b)
	ka, kb := localKey(t, a.mnemonic), localKey(t, b.mnemonic)

	var u api.UnsignedTx
	h.ok(t, "POST", "/api/wallet/send", publicKeyBody(ka, field("to", b.address), `"amount":2`), &u)
	tx := checkUnsigned(t, u)
	good := sign(t, ka, u)

	// The signature of another message, or by another key.
	other := hex.EncodeToString(ed25519.Sign(ka, []byte("COIN-TX-V1 something else")))
	h.refused(t, "POST", "/api/tx/submit", submitBody(u.UnsignedTx, ka, other), 400, "bad_signature")
	h.refused(t, "POST", "/api/tx/submit", submitBody(u.UnsignedTx, kb, good), 400, "bad_signature")
	// b signs a's transaction with its own key: valid, but the coins are not b's.
	h.refused(t, "POST", "/api/tx/submit", submitBody(u.UnsignedTx, kb, sign(t, kb, u)), 400, "pubkey_mismatch")
	// The transaction tampered with after signing: it pays b more.
	tampered := *tx
	tampered.Outputs = append([]types.TxOutput(nil), tx.Outputs...)
	tampered.Outputs[0].Value += amount.Coin
	tampered.Outputs[len(tampered.Outputs)-1].Value -= amount.Coin
	th := hex.EncodeToString(tampered.Bytes())
	h.refused(t, "POST", "/api/tx/submit", submitBody(th, ka, good), 400, "bad_signature")
	// Malformed fields.
	signed := *tx
	signed.Inputs = append([]types.TxInput(nil), tx.Inputs...)
	signed.Inputs[0].Signature[0] = 1
	for _, c := range []struct{ body, code string }{
		{submitBody("zz", ka, good), "invalid_unsigned_tx"},
		{submitBody(u.UnsignedTx[:len(u.UnsignedTx)-2], ka, good), "invalid_unsigned_tx"},
		{submitBody(hex.EncodeToString(signed.Bytes()), ka, good), "invalid_unsigned_tx"},
		{submitBody(u.UnsignedTx, ka, good[:64]), "invalid_signature"},
		{`{"unsigned_tx":"` + u.UnsignedTx + `","public_key":"abcd","signature":"` + good + `"}`, "invalid_public_key"},
		{`{"unsigned_tx":"` + u.UnsignedTx + `","signature":"` + good + `"}`, "bad_request"},
	} {
		h.refused(t, "POST", "/api/tx/submit", c.body, 400, c.code)
	}
	// Both keys, or neither; a malformed public key.
	h.refused(t, "POST", "/api/agent/register", `{"mnemonic":"`+a.mnemonic+`","public_key":"`+pubHex(ka)+`"}`, 400, "ambiguous_key")
	h.refused(t, "POST", "/api/agent/register", `{}`, 400, "bad_request")
	h.refused(t, "POST", "/api/agent/register", `{"public_key":"00"}`, 400, "invalid_public_key")
	// The refusals of an operation are those of the mnemonic form.
	h.refused(t, "POST", "/api/agent/vouch", publicKeyBody(ka, field("target_address", b.address)), 400, "not_an_agent")

	// The good one goes through once; a second submission is the node's refusal.
	var res api.TransferResult
	h.ok(t, "POST", "/api/tx/submit", submitBody(u.UnsignedTx, ka, good), &res)
	if res.TxID != u.TxID || res.From != a.address || res.To != b.address || res.Amount != "2.00000000" || res.Fee != u.Fee {
		t.Fatalf("submitted %+v, asked %+v", res, u)
	}
	h.refused(t, "POST", "/api/tx/submit", submitBody(u.UnsignedTx, ka, good), 400, "tx_rejected")
}

// The MCP tools take public_key the same way, and tx_submit completes them: a whole contract
// (register both, create, fulfil, review both ways) with no mnemonic sent scores exactly as the
// same contract done with mnemonics through the same tools.
func TestMCPPublicKey(t *testing.T) {
	h := newHarness(t, 10, noIPLimit)
	a, b, c, d := newAgentWallet(t), newAgentWallet(t), newAgentWallet(t), newAgentWallet(t)
	h.fund(t, a, b, c, d)
	s := mcpSession(t, h.http.URL)
	// keyed calls tool for w with its public key, checks and signs the answer locally and
	// completes it with tx_submit.
	keyed := func(w agentWallet, tool string, args map[string]any) map[string]any {
		t.Helper()
		k := localKey(t, w.mnemonic)
		args["public_key"] = pubHex(k)
		var u api.UnsignedTx
		if te := callTool(t, s, tool, args, &u); te != nil {
			t.Fatalf("%s: %+v", tool, te)
		}
		checkUnsigned(t, u)
		var out map[string]any
		if te := callTool(t, s, "tx_submit", map[string]any{"unsigned_tx": u.UnsignedTx, "public_key": pubHex(k), "signature": sign(t, k, u)}, &out); te != nil {
			t.Fatalf("%s submitted: %+v", tool, te)
		}
		return out
	}
	withMnemonic := func(w agentWallet, tool string, args map[string]any) map[string]any {
		t.Helper()
		args["mnemonic"] = w.mnemonic
		var out map[string]any
		if te := callTool(t, s, tool, args, &out); te != nil {
			t.Fatalf("%s: %+v", tool, te)
		}
		return out
	}
	scores := func(op func(agentWallet, string, map[string]any) map[string]any, x, y agentWallet) []any {
		op(x, "agent_register", map[string]any{})
		op(y, "agent_register", map[string]any{})
		cr := op(x, "contract_create", map[string]any{"counterparty": y.address, "value_coin": 2.5})
		id := cr["contract_id"]
		if fr := op(y, "contract_fulfil", map[string]any{"contract_id": id}); fr["status"] != "fulfilled" {
			t.Fatalf("fulfil %v", fr)
		}
		r1 := op(x, "agent_review", map[string]any{"contract_id": id, "subject_address": y.address, "score": 9})
		r2 := op(y, "agent_review", map[string]any{"contract_id": id, "subject_address": x.address, "score": 3})
		return []any{r1["new_conduct_score"], r2["new_conduct_score"]}
	}
	got, want := scores(keyed, a, b), scores(withMnemonic, c, d)
	if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(got) != "[587 459]" {
		t.Fatalf("scores with public keys %v, with mnemonics %v, want [587 459]", got, want)
	}

	// A refused submission through MCP has the endpoint's code.
	k := localKey(t, a.mnemonic)
	var u api.UnsignedTx
	if te := callTool(t, s, "wallet_send", map[string]any{"public_key": pubHex(k), "to": b.address, "amount": 1}, &u); te != nil {
		t.Fatalf("wallet_send: %+v", te)
	}
	if te := callTool(t, s, "tx_submit", map[string]any{"unsigned_tx": u.UnsignedTx, "public_key": pubHex(k), "signature": pubHex(k) + pubHex(k)}, nil); te == nil || te.Error.Code != "bad_signature" {
		t.Fatalf("tx_submit with a bad signature: %+v", te)
	}
}
