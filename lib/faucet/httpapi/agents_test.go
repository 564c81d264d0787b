package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/faucet/internal/faucettest"
	"github.com/cointoolkit/coin/lib/faucet/payout"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

// agentWallet is a wallet of the agent tests.
type agentWallet struct {
	mnemonic, address string
	pkh               types.Hash
}

func newAgentWallet(t *testing.T) agentWallet {
	t.Helper()
	m, a, err := wallet.NewMnemonic(12, testNet)
	if err != nil {
		t.Fatal(err)
	}
	pkh, _ := wallet.DecodeAddress(a, testNet)
	return agentWallet{m, a, pkh}
}

// funded is a new wallet with a faucet claim (100 COIN, unconfirmed).
func (h *harness) funded(t *testing.T) agentWallet {
	t.Helper()
	w := newAgentWallet(t)
	if r := h.do(t, http.MethodPost, "/api/faucet", claimBody(w.address)); r.Status != 200 {
		t.Fatalf("claim: %d %s", r.Status, r.Raw)
	}
	return w
}

// fund gives each wallet a confirmed output of 100 COIN: a faucet claim, mined.
func (h *harness) fund(t *testing.T, ws ...agentWallet) {
	t.Helper()
	for _, w := range ws {
		if r := h.do(t, http.MethodPost, "/api/faucet", claimBody(w.address)); r.Status != 200 {
			t.Fatalf("claim: %d %s", r.Status, r.Raw)
		}
	}
	h.mine(1)
}

// ok does a request that must succeed and decodes its body strictly into v.
func (h *harness) ok(t *testing.T, method, path, body string, v any) {
	t.Helper()
	r := h.do(t, method, path, body)
	if r.Status != 200 {
		t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Raw)
	}
	strict(t, r.Raw, v)
}

// refused does a request that must fail with status and code, and broadcast nothing.
func (h *harness) refused(t *testing.T, method, path, body string, status int, code string) response {
	t.Helper()
	sent := h.sends()
	r := h.do(t, method, path, body)
	if r.Status != status || r.errCode() != code {
		t.Fatalf("%s %s: %d %s, want %d %s", method, path, r.Status, r.Raw, status, code)
	}
	if n := h.sends(); n != sent {
		t.Fatalf("%s %s: refused, yet %d transactions were broadcast", method, path, n-sent)
	}
	return r
}

// trust raises registered agent a's conduct score from the initial 500 to VouchMinScore or
// more the one way the chain allows: three new agents each make a contract of 1 COIN with a
// as the counterparty, a fulfils it and they review a with 10 (500 → 754, protocol §9's
// arithmetic). The new agents are the keys 1 to 3 of a's mnemonic, so a run's transactions
// are those of the run before. Their transactions are signed here and go to the node
// directly; the faucet sees only the three claims that fund them. Two blocks are mined.
func (h *harness) trust(t *testing.T, a agentWallet) {
	t.Helper()
	ctx := context.Background()
	ring, err := wallet.KeyringFromMnemonic(a.mnemonic, "", testNet, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ring.Wipe()
	xs := make([]wallet.Key, 3)
	for i := range xs {
		if xs[i], err = ring.Key(uint32(i + 1)); err != nil {
			t.Fatal(err)
		}
		if r := h.do(t, http.MethodPost, "/api/faucet", claimBody(xs[i].Address)); r.Status != 200 {
			t.Fatalf("claim: %d %s", r.Status, r.Raw)
		}
	}
	h.mine(1)
	spend := func(k wallet.Key, req wallet.Request, err error) *wallet.Plan {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		p, err := wallet.SpendAgent(ctx, h.rn.Client, testNet, k, req)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	ka := faucettest.KeyOf(t, a.mnemonic)
	for _, x := range xs {
		spend(x, wallet.RegisterRequest(x.PKH), nil)
		req, err := wallet.ContractCreateRequest(x.PKH, a.pkh, amount.Coin, consensus.DefaultExpiry)
		id := spend(x, req, err).TxID
		c, err := h.rn.GetContract(ctx, id.String())
		if err != nil {
			t.Fatal(err)
		}
		e, err := wallet.EscrowOf(c, testNet)
		spend(ka, wallet.FulfilRequest(e), err)
		req, err = wallet.ReviewRequest(x.PKH, id, a.pkh, consensus.MaxReviewScore)
		spend(x, req, err)
	}
	h.mine(1)
	if p, err := h.rn.GetAgentProfile(ctx, a.address); err != nil || p.ConductScore < consensus.VouchMinScore {
		t.Fatalf("agent after three fulfilled contracts reviewed 10: %+v %v", p, err)
	}
}

func mnemonicBody(w agentWallet, fields ...string) string {
	return `{"mnemonic":"` + w.mnemonic + `"` + strings.Join(append([]string{""}, fields...), ",") + "}"
}

func field(name string, v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q:%q", name, s)
	}
	return fmt.Sprintf("%q:%v", name, v)
}

func noIPLimit(_ *payout.EngineConfig, c *Config) { c.IPRate = -1 }

// On a regtest node: two agents register, contract, fulfil and review each other back to
// back, without a block: each operation relies on the pending effect of the one before. Scores follow
// protocol §9's arithmetic.
func TestAgentLifecycle(t *testing.T) {
	h, _, _ := newRegtestHarness(t, 6, noIPLimit)
	a, b := h.funded(t), h.funded(t)

	var reg api.RegisterResult
	h.ok(t, "POST", "/api/agent/register", mnemonicBody(a), &reg)
	if reg.Address != a.address || reg.ConductScore != 500 || !hex64(reg.StakeTxID) {
		t.Fatalf("register %+v", reg)
	}
	stake := h.pooled(reg.StakeTxID)
	if stake == nil || stake.Kind != types.KindAgentRegister || stake.Outputs[0].Value != 50*amount.Coin || stake.Outputs[0].PubKeyHash != a.pkh {
		t.Fatalf("stake transaction %+v", stake)
	}
	h.ok(t, "POST", "/api/agent/register", mnemonicBody(b), &reg)
	h.refused(t, "POST", "/api/agent/register", mnemonicBody(a), 400, "already_registered")

	var prof api.AgentProfile
	h.ok(t, "GET", "/api/agent/profile?address="+a.address, "", &prof)
	if prof.ConductScore != 500 || prof.Tier != "participant" || prof.RegisteredAt != "" || prof.AverageReviewScore != nil {
		t.Fatalf("profile %+v", prof)
	}
	r := h.refused(t, "POST", "/api/agent/vouch", mnemonicBody(a, field("target_address", b.address)), 400, "score_too_low")
	if !strings.Contains(r.Raw, "score 500 is below the 700 needed to vouch") {
		t.Fatalf("vouch message %s", r.Raw)
	}

	var cr api.ContractCreateResult
	h.ok(t, "POST", "/api/agent/contract/create", mnemonicBody(a, field("counterparty", b.address), `"value_coin":2.5`), &cr)
	if cr.Initiator != a.address || cr.Counterparty != b.address || cr.ValueCoin != "2.50000000" || cr.Status != "open" ||
		cr.ExpiryBlocks != consensus.DefaultExpiry || !hex64(cr.ContractID) {
		t.Fatalf("create %+v", cr)
	}
	var c api.Contract
	h.ok(t, "GET", "/api/agent/contract?contract_id="+cr.ContractID, "", &c)
	if c.Status != "open" || c.ValueCoin != "2.50000000" || c.Confirmed || c.ExpiresAt != c.CreatedHeight+consensus.DefaultExpiry {
		t.Fatalf("contract %+v", c)
	}
	fulfil := field("contract_id", cr.ContractID)
	h.refused(t, "POST", "/api/agent/contract/fulfil", mnemonicBody(a, fulfil), 400, "not_counterparty")
	h.refused(t, "POST", "/api/agent/contract/refund", mnemonicBody(b, fulfil), 400, "not_initiator")
	h.refused(t, "POST", "/api/agent/review", mnemonicBody(a, field("subject_address", b.address), `"score":9`, fulfil), 400, "contract_not_fulfilled")

	var fr api.FulfilResult
	h.ok(t, "POST", "/api/agent/contract/fulfil", mnemonicBody(b, fulfil), &fr)
	if fr.ContractID != cr.ContractID || fr.Status != "fulfilled" || !hex64(fr.ReleaseTxID) {
		t.Fatalf("fulfil %+v", fr)
	}
	rel := h.pooled(fr.ReleaseTxID)
	if rel == nil || rel.Kind != types.KindContractFulfil || rel.Inputs[0].PrevTxID.String() != cr.ContractID || rel.Inputs[0].PrevIndex != 0 {
		t.Fatalf("release %+v", rel)
	}
	for _, o := range rel.Outputs {
		if o.PubKeyHash != b.pkh {
			t.Fatal("the release pays someone else than the counterparty")
		}
	}
	h.refused(t, "POST", "/api/agent/contract/fulfil", mnemonicBody(b, fulfil), 400, "contract_not_open")

	// Reviews: a (initiator, 510 after the fulfilment) reviews b (counterparty, 520) with 9,
	// b reviews a with 3.
	var rv api.ReviewResult
	h.ok(t, "POST", "/api/agent/review", mnemonicBody(a, field("subject_address", b.address), `"score":9`, fulfil), &rv)
	wantB := consensus.ScoreChange(consensus.ScoreChange(500, 20), 70)
	if rv.Reviewer != a.address || rv.Subject != b.address || rv.Score != 9 || rv.ContractID != cr.ContractID || rv.NewConductScore != wantB || wantB != 587 {
		t.Fatalf("review %+v, want new score %d", rv, wantB)
	}
	h.ok(t, "POST", "/api/agent/review", mnemonicBody(b, field("subject_address", a.address), `"score":3`, fulfil), &rv)
	if wantA := consensus.ScoreChange(consensus.ScoreChange(500, 10), -50); rv.NewConductScore != wantA || wantA != 459 {
		t.Fatalf("review of a: %+v, want %d", rv, wantA)
	}
	h.refused(t, "POST", "/api/agent/review", mnemonicBody(b, field("subject_address", a.address), `"score":3`, fulfil), 400, "already_reviewed")
	h.refused(t, "POST", "/api/agent/review", mnemonicBody(a, field("subject_address", a.address), `"score":3`, fulfil), 400, "self_target")
	h.ok(t, "GET", "/api/agent/contract?contract_id="+cr.ContractID, "", &c)
	if c.Status != "fulfilled" || c.ClosedBy != fr.ReleaseTxID || !c.ReviewedByInitiator || !c.ReviewedByCounterparty {
		t.Fatalf("contract %+v", c)
	}

	// The directory: b (587) before a (459); once mined, the profile has registered_at.
	var dir api.Directory
	h.ok(t, "GET", "/api/agent/directory", "", &dir)
	if dir.Total != 2 || dir.Offset != 0 || dir.Limit != 20 || len(dir.Agents) != 2 || dir.Agents[0].Address != b.address ||
		dir.Agents[0].ConductScore != 587 || dir.Agents[0].Tier != "contributor" || dir.Agents[0].ContractsCompleted != 1 ||
		dir.Agents[1].Address != a.address || dir.Agents[1].Tier != "participant" {
		t.Fatalf("directory %+v", dir)
	}
	h.ok(t, "GET", "/api/agent/directory?offset=1&limit=1", "", &dir)
	if len(dir.Agents) != 1 || dir.Agents[0].Address != a.address || dir.Total != 2 || dir.Offset != 1 || dir.Limit != 1 {
		t.Fatalf("directory page 2 %+v", dir)
	}
	h.mine(1)
	h.ok(t, "GET", "/api/agent/profile?address="+b.address, "", &prof)
	if prof.RegisteredAt == "" || prof.AverageReviewScore == nil || *prof.AverageReviewScore != 9 || prof.ReviewsReceived != 1 ||
		prof.ContractsCompleted != 1 {
		t.Fatalf("profile after a block %+v", prof)
	}
}

// On a regtest node: a contract expires: the counterparty can no longer fulfil it, the initiator refunds it
// from its expiry height on, with every output paying the initiator.
func TestAgentContractRefund(t *testing.T) {
	h, _, _ := newRegtestHarness(t, 6, noIPLimit)
	a, b := h.funded(t), h.funded(t)
	var reg api.RegisterResult
	h.ok(t, "POST", "/api/agent/register", mnemonicBody(a), &reg)
	h.ok(t, "POST", "/api/agent/register", mnemonicBody(b), &reg)
	var cr, cr2 api.ContractCreateResult
	h.ok(t, "POST", "/api/agent/contract/create", mnemonicBody(a, field("counterparty", b.address), `"value_coin":1`, `"expiry_blocks":10`), &cr)
	h.ok(t, "POST", "/api/agent/contract/create", mnemonicBody(a, field("counterparty", b.address), `"value_coin":0.00001`, `"expiry_blocks":10`), &cr2)
	if cr.ExpiryBlocks != 10 || cr2.ValueCoin != "0.00001000" {
		t.Fatalf("create %+v %+v", cr, cr2)
	}
	id := field("contract_id", cr.ContractID)
	r := h.refused(t, "POST", "/api/agent/contract/refund", mnemonicBody(a, id), 400, "contract_not_expired")
	var open api.Contract
	h.ok(t, "GET", "/api/agent/contract?contract_id="+cr.ContractID, "", &open)
	// The rule's words (when) and the door's hint (what may happen until then).
	if !strings.Contains(r.Raw, fmt.Sprintf("expires at height %d", open.ExpiresAt)) || !strings.Contains(r.Raw, Hint("contract_not_expired")) {
		t.Fatalf("refund message %s", r.Raw)
	}
	h.mine(9)
	h.refused(t, "POST", "/api/agent/contract/refund", mnemonicBody(a, id), 400, "contract_not_expired")
	h.mine(1)
	h.refused(t, "POST", "/api/agent/contract/fulfil", mnemonicBody(b, id), 400, "contract_expired")
	var rr api.RefundResult
	h.ok(t, "POST", "/api/agent/contract/refund", mnemonicBody(a, id), &rr)
	if rr.ContractID != cr.ContractID || rr.Status != "expired" || !hex64(rr.RefundTxID) {
		t.Fatalf("refund %+v", rr)
	}
	refundTxID := rr.RefundTxID
	tx := h.pooled(rr.RefundTxID)
	if tx == nil || tx.Kind != types.KindContractRefund || consensus.Actor(tx) != a.pkh {
		t.Fatalf("refund transaction %+v", tx)
	}
	for _, o := range tx.Outputs {
		if o.PubKeyHash != a.pkh {
			t.Fatal("a refund output pays someone else than the initiator")
		}
	}
	// The smallest escrow cannot pay its own fee: the initiator's coins join, its outputs
	// still pay only the initiator.
	h.ok(t, "POST", "/api/agent/contract/refund", mnemonicBody(a, field("contract_id", cr2.ContractID)), &rr)
	if tx := h.pooled(rr.RefundTxID); len(tx.Inputs) < 2 || len(tx.Outputs) != 1 || tx.Outputs[0].PubKeyHash != a.pkh {
		t.Fatalf("small refund %+v", tx)
	}
	var p api.AgentProfile
	h.ok(t, "GET", "/api/agent/profile?address="+b.address, "", &p)
	if p.ContractsFailed != 2 || p.ConductScore != consensus.ScoreChange(consensus.ScoreChange(500, -50), -50) {
		t.Fatalf("counterparty after two refunds %+v", p)
	}
	var c api.Contract
	h.ok(t, "GET", "/api/agent/contract?contract_id="+cr.ContractID, "", &c)
	if c.Status != "expired" || c.ClosedBy != refundTxID {
		t.Fatalf("contract %+v", c)
	}
}

// Vouching: the faucet's pre-checks and the node's own refusal (already_vouched, which only
// the node knows) both answer 400 with the rule's code.
func TestAgentVouch(t *testing.T) {
	h := newHarness(t, 12, noIPLimit)
	a, b := h.funded(t), h.funded(t)
	var reg api.RegisterResult
	h.ok(t, "POST", "/api/agent/register", mnemonicBody(a), &reg)
	outsider := newAgentWallet(t)
	h.refused(t, "POST", "/api/agent/vouch", mnemonicBody(outsider, field("target_address", a.address)), 400, "not_an_agent")
	h.trust(t, a)
	h.refused(t, "POST", "/api/agent/vouch", mnemonicBody(a, field("target_address", b.address)), 400, "agent_not_found")
	h.refused(t, "POST", "/api/agent/vouch", mnemonicBody(a, field("target_address", a.address)), 400, "self_target")
	h.ok(t, "POST", "/api/agent/register", mnemonicBody(b), &reg)
	var v api.VouchResult
	h.ok(t, "POST", "/api/agent/vouch", mnemonicBody(a, field("target_address", b.address)), &v)
	if v.Voucher != a.address || v.Target != b.address || !hex64(v.TxID) {
		t.Fatalf("vouch %+v", v)
	}
	r := h.refused(t, "POST", "/api/agent/vouch", mnemonicBody(a, field("target_address", b.address)), 400, "already_vouched")
	if !strings.Contains(r.Raw, "node refused") {
		t.Fatalf("already_vouched should be the node's: %s", r.Raw)
	}
	var p api.AgentProfile
	h.ok(t, "GET", "/api/agent/profile?address="+b.address, "", &p)
	if p.VouchesReceived != 1 || p.ConductScore != consensus.ScoreChange(500, 30) {
		t.Fatalf("target after the vouch %+v", p)
	}
}

// Malformed requests and refusals: 4xx with a stable code, nothing broadcast, no mnemonic
// echoed or logged.
func TestAgentBadRequests(t *testing.T) {
	h := regtestHarness(t, 10, noIPLimit)
	a, b := h.funded(t), h.funded(t)
	var reg api.RegisterResult
	h.ok(t, "POST", "/api/agent/register", mnemonicBody(a), &reg)
	poor, unregistered := newAgentWallet(t), h.funded(t)
	unknownID := strings.Repeat("ab", 32)
	secret := agentWallet{mnemonic: "zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo"}
	review := func(w agentWallet, score string) string {
		return mnemonicBody(w, field("subject_address", b.address), `"score":`+score, field("contract_id", unknownID))
	}
	create := func(w agentWallet, cp string, extra ...string) string {
		return mnemonicBody(w, append([]string{field("counterparty", cp)}, extra...)...)
	}
	cases := []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/api/agent/register", `{}`, 400, "bad_request"},
		{"POST", "/api/agent/register", `{"mnemonic":"` + secret.mnemonic + `"}`, 400, "invalid_mnemonic"},
		{"POST", "/api/agent/register", mnemonicBody(poor), 400, "insufficient_balance"},
		{"GET", "/api/agent/register", "", 405, "method_not_allowed"},
		{"GET", "/api/agent/profile", "", 400, "bad_request"},
		{"GET", "/api/agent/profile?address=nope", "", 400, "invalid_address"},
		{"GET", "/api/agent/profile?address=" + b.address, "", 404, "agent_not_found"},
		{"GET", "/api/agent/directory?limit=101", "", 400, "bad_request"},
		{"GET", "/api/agent/directory?limit=0", "", 400, "bad_request"},
		{"GET", "/api/agent/directory?limit=-1", "", 400, "bad_request"},
		{"GET", "/api/agent/directory?offset=-1", "", 400, "bad_request"},
		{"GET", "/api/agent/directory?offset=1.5", "", 400, "bad_request"},
		{"GET", "/api/agent/directory?offset=x", "", 400, "bad_request"},
		{"GET", "/api/agent/contract", "", 400, "bad_request"},
		{"GET", "/api/agent/contract?contract_id=12", "", 400, "invalid_contract_id"},
		{"GET", "/api/agent/contract?contract_id=" + unknownID, "", 404, "contract_not_found"},
		{"POST", "/api/agent/vouch", mnemonicBody(a), 400, "bad_request"},
		{"POST", "/api/agent/vouch", mnemonicBody(a, field("target_address", "x")), 400, "invalid_address"},
		{"POST", "/api/agent/contract/create", create(a, b.address), 400, "bad_request"},
		{"POST", "/api/agent/contract/create", create(a, b.address, `"value_coin":0`), 400, "invalid_amount"},
		{"POST", "/api/agent/contract/create", create(a, b.address, `"value_coin":-1`), 400, "invalid_amount"},
		{"POST", "/api/agent/contract/create", create(a, b.address, `"value_coin":0.000000001`), 400, "invalid_amount"},
		{"POST", "/api/agent/contract/create", create(a, b.address, `"value_coin":0.00000999`), 400, "bad_escrow"},
		{"POST", "/api/agent/contract/create", create(a, b.address, `"value_coin":1`, `"expiry_blocks":9`), 400, "invalid_expiry"},
		{"POST", "/api/agent/contract/create", create(a, b.address, `"value_coin":1`, `"expiry_blocks":2.5`), 400, "invalid_expiry"},
		{"POST", "/api/agent/contract/create", create(a, a.address, `"value_coin":1`), 400, "self_target"},
		{"POST", "/api/agent/contract/create", create(a, b.address, `"value_coin":1`), 400, "agent_not_found"},
		{"POST", "/api/agent/contract/create", create(unregistered, a.address, `"value_coin":1`), 400, "not_an_agent"},
		{"POST", "/api/agent/contract/create", create(a, b.address, `"value_coin":1000`), 400, "agent_not_found"},
		{"POST", "/api/agent/contract/fulfil", mnemonicBody(b), 400, "bad_request"},
		{"POST", "/api/agent/contract/fulfil", mnemonicBody(b, field("contract_id", "xyz")), 400, "invalid_contract_id"},
		{"POST", "/api/agent/contract/fulfil", mnemonicBody(b, field("contract_id", unknownID)), 400, "contract_not_found"},
		{"POST", "/api/agent/contract/refund", mnemonicBody(a, field("contract_id", unknownID)), 400, "contract_not_found"},
		{"POST", "/api/agent/review", review(a, "0"), 400, "invalid_score"},
		{"POST", "/api/agent/review", review(a, "11"), 400, "invalid_score"},
		{"POST", "/api/agent/review", review(a, "5.5"), 400, "invalid_score"},
		{"POST", "/api/agent/review", review(a, "1e1"), 400, "invalid_score"},
		{"POST", "/api/agent/review", mnemonicBody(a, field("subject_address", b.address), field("contract_id", unknownID)), 400, "bad_request"},
		{"POST", "/api/agent/review", review(a, "5"), 400, "contract_not_found"},
		{"POST", "/api/agent/review", review(secret, "5"), 400, "invalid_mnemonic"},
	}
	for _, c := range cases {
		r := h.refused(t, c.method, c.path, c.body, c.status, c.code)
		for _, word := range []string{"zoo", strings.Fields(a.mnemonic)[0] + " " + strings.Fields(a.mnemonic)[1]} {
			if strings.Contains(r.Raw, word) {
				t.Errorf("%s %s: the answer echoes the mnemonic: %s", c.method, c.path, r.Raw)
			}
		}
	}
	r := h.refused(t, "POST", "/api/agent/register", mnemonicBody(poor), 400, "insufficient_balance")
	if !strings.Contains(r.Raw, poor.address) || !strings.Contains(r.Raw, "POST /api/faucet") {
		t.Errorf("insufficient balance message: %s", r.Raw)
	}
	if log := h.log.String(); strings.Contains(log, "zoo") || strings.Contains(log, a.mnemonic) {
		t.Fatal("a mnemonic reached the log")
	}
}

func hex64(s string) bool {
	_, err := types.ParseHash(s)
	return err == nil && strings.ToLower(s) == s
}
