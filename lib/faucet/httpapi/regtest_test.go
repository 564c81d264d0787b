package httpapi

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/faucet/internal/faucettest"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// The faucet against a real regtest node in the process (lib/faucet/internal/faucettest):
// the node's own mempool, chain and conduct rules, no double of them.

// countingNode counts the getcontract calls the faucet makes.
type countingNode struct {
	*faucettest.Faulty
	mu        sync.Mutex
	contracts int
}

func (c *countingNode) GetContract(ctx context.Context, id string) (*rpcapi.Contract, error) {
	c.mu.Lock()
	c.contracts++
	c.mu.Unlock()
	return c.Faulty.GetContract(ctx, id)
}

func (c *countingNode) contractReads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.contracts
}

// newRegtestHarness is a faucet whose key holds coins mature coinbases of a regtest node.
func newRegtestHarness(t testing.TB, coins int, opts ...harnessOpt) (*harness, *faucettest.Node, *countingNode) {
	t.Helper()
	h := newHarnessDir(t, coins, t.TempDir(), opts...)
	return h, h.rn, h.cn
}

// newHarnessDir is newRegtestHarness's harness with the claim store in dir.
func newHarnessDir(t testing.TB, coins int, dir string, opts ...harnessOpt) *harness {
	t.Helper()
	rn := faucettest.NewNode(t)
	cn := &countingNode{Faulty: faucettest.NewFaulty(rn)}
	h := &harness{rn: rn, cn: cn, key: faucetKey(t), log: &proctest.Buffer{}, backend: cn, sends: cn.Sends,
		mine: func(n int) { rn.Mine(t, n) }, pooled: rn.Pooled}
	rn.Fund(t, h.key.Address, coins)
	h.configure(t, dir, opts...)
	return h
}

// regtestHarness is newRegtestHarness's harness.
func regtestHarness(t testing.TB, coins int, opts ...harnessOpt) *harness {
	t.Helper()
	h, _, _ := newRegtestHarness(t, coins, opts...)
	return h
}

// Every agent rule the faucet prechecks (wallet.PrecheckAgent) refuses on a real node with
// the status and reason the faucet always gave, the rule's words with addresses, the hint of
// the reason, and nothing broadcast; fulfil and refund read the contract once.
func TestAgentRulesOnRegtest(t *testing.T) {
	h, rn, cn := newRegtestHarness(t, 10, noIPLimit)
	a, b, c := h.funded(t), h.funded(t), h.funded(t)
	rn.Mine(t, 1)
	msg := func(r response) string {
		e, _ := r.Body["error"].(map[string]any)
		m, _ := e["message"].(string)
		return m
	}

	// Vouching before registering: not_an_agent, in the rule's words with the voucher's
	// address, and the advice to register.
	r := h.refused(t, "POST", "/api/agent/vouch", mnemonicBody(a, field("target_address", b.address)), 400, "not_an_agent")
	if m := msg(r); !strings.Contains(m, "voucher "+a.address+" is not a registered agent") || !strings.HasSuffix(m, Hint("not_an_agent")) {
		t.Fatalf("not_an_agent message %q", m)
	}
	var reg api.RegisterResult
	h.ok(t, "POST", "/api/agent/register", mnemonicBody(a), &reg)
	h.ok(t, "POST", "/api/agent/register", mnemonicBody(b), &reg)
	r = h.refused(t, "POST", "/api/agent/register", mnemonicBody(a), 400, "already_registered")
	if m := msg(r); m != a.address+" is already a registered agent" {
		t.Fatalf("already_registered message %q", m)
	}
	h.refused(t, "POST", "/api/agent/vouch", mnemonicBody(a, field("target_address", b.address)), 400, "score_too_low")
	r = h.refused(t, "POST", "/api/agent/contract/create", mnemonicBody(a, field("counterparty", c.address), `"value_coin":1`), 400, "agent_not_found")
	if m := msg(r); m != "counterparty "+c.address+" is not a registered agent" {
		t.Fatalf("agent_not_found message %q", m)
	}

	var cr api.ContractCreateResult
	h.ok(t, "POST", "/api/agent/contract/create", mnemonicBody(a, field("counterparty", b.address), `"value_coin":1`, `"expiry_blocks":10`), &cr)
	id := field("contract_id", cr.ContractID)
	missing := field("contract_id", strings.Repeat("ab", 32))
	h.refused(t, "POST", "/api/agent/contract/fulfil", mnemonicBody(b, missing), 400, "contract_not_found")
	reads := cn.contractReads()
	h.refused(t, "POST", "/api/agent/contract/fulfil", mnemonicBody(a, id), 400, "not_counterparty")
	if n := cn.contractReads() - reads; n != 1 {
		t.Fatalf("a refused fulfilment read the contract %d times, want 1", n)
	}
	h.refused(t, "POST", "/api/agent/contract/refund", mnemonicBody(b, id), 400, "not_initiator")
	r = h.refused(t, "POST", "/api/agent/contract/refund", mnemonicBody(a, id), 400, "contract_not_expired")
	if !strings.HasSuffix(msg(r), Hint("contract_not_expired")) {
		t.Fatalf("contract_not_expired message %q", msg(r))
	}
	h.refused(t, "POST", "/api/agent/review", mnemonicBody(a, id, field("subject_address", b.address), `"score":9`), 400, "contract_not_fulfilled")
	var fr api.FulfilResult
	reads = cn.contractReads()
	h.ok(t, "POST", "/api/agent/contract/fulfil", mnemonicBody(b, id), &fr)
	if n := cn.contractReads() - reads; n != 1 {
		t.Fatalf("a fulfilment read the contract %d times, want 1", n)
	}
	h.refused(t, "POST", "/api/agent/contract/fulfil", mnemonicBody(b, id), 400, "contract_not_open")
	h.refused(t, "POST", "/api/agent/review", mnemonicBody(a, id, field("subject_address", c.address), `"score":9`), 400, "not_participant")
	var rv api.ReviewResult
	h.ok(t, "POST", "/api/agent/review", mnemonicBody(a, id, field("subject_address", b.address), `"score":9`), &rv)
	h.refused(t, "POST", "/api/agent/review", mnemonicBody(a, id, field("subject_address", b.address), `"score":9`), 400, "already_reviewed")
	h.refused(t, "POST", "/api/agent/review", mnemonicBody(c, missing, field("subject_address", a.address), `"score":9`), 400, "contract_not_found")

	// An expired contract: the counterparty is too late, the initiator takes it back.
	h.ok(t, "POST", "/api/agent/contract/create", mnemonicBody(a, field("counterparty", b.address), `"value_coin":1`, `"expiry_blocks":10`), &cr)
	id = field("contract_id", cr.ContractID)
	rn.Mine(t, 10)
	r = h.refused(t, "POST", "/api/agent/contract/fulfil", mnemonicBody(b, id), 400, "contract_expired")
	if !strings.HasSuffix(msg(r), Hint("contract_expired")) {
		t.Fatalf("contract_expired message %q", msg(r))
	}
	var rf api.RefundResult
	h.ok(t, "POST", "/api/agent/contract/refund", mnemonicBody(a, id), &rf)
	if rf.Status != "expired" {
		t.Fatalf("refund %+v", rf)
	}
	if r := h.do(t, http.MethodGet, "/api/agent/contract?contract_id="+strings.Repeat("ab", 32), ""); r.Status != 404 || r.errCode() != "contract_not_found" {
		t.Fatalf("lookup of no contract: %d %s", r.Status, r.Raw)
	}
}
