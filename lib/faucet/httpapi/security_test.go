package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/faucet/mcp"
	"github.com/cointoolkit/coin/lib/faucet/payout"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/reason"
)

// The probes of docs/security.md against lib/faucet.

// Two faucets build the identical transaction (the same wallet, the same coins): the second
// caller's node answers already_in_mempool, and the operation it asked for is done, so it
// gets the operation's result, not 400 already_in_mempool.
func TestIdenticalTransactionAnswersResult(t *testing.T) {
	h, _, cn := newRegtestHarness(t, 6, noIPLimit)
	a := h.funded(t)
	// The node accepts the stake and answers already_in_mempool, as a second sender hears.
	cn.FailSends(reject(mempool.ErrAlreadyInMempool, "transaction already in mempool"), true)
	var reg api.RegisterResult
	h.ok(t, "POST", "/api/agent/register", mnemonicBody(a), &reg)
	cn.FailSends(nil, false)
	if reg.Address != a.address || h.pooled(reg.StakeTxID) == nil {
		t.Fatalf("register: %+v, in the pool: %v", reg, h.pooled(reg.StakeTxID) != nil)
	}
}

// A transaction whose answer was lost is journaled and answered 200; a node that lost it
// gets it again from the journal, and one refused at its first send leaves nothing behind.
func TestTxJournalResendsLost(t *testing.T) {
	h := newHarness(t, 6, noIPLimit)
	a := h.funded(t)
	h.mine(1) // the claim is mined: the send below depends on nothing in the mempool
	to, _ := newAddress(t)
	h.cn.FailSends(errors.New("connection reset by peer"), true)
	var res api.TransferResult
	h.ok(t, "POST", "/api/wallet/send", mnemonicBody(a, field("to", to), field("amount", 1)), &res)
	h.cn.FailSends(nil, false)
	list, err := h.server.JournaledTxs()
	if err != nil || len(list) != 1 || list[0].String() != res.TxID {
		t.Fatalf("journal after a lost answer: %d entries, %v", len(list), err)
	}
	// While journaled it is read from memory (the event source's getrawtransaction).
	if tx, ok := h.server.JournaledTx(list[0]); !ok || tx.TxID() != list[0] {
		t.Fatalf("JournaledTx of the journaled transaction: %v", ok)
	}
	// The node forgets it (a restart that lost its mempool): the journal sends it again.
	h.rn.Restart(t)
	if h.pooled(res.TxID) != nil {
		t.Fatal("the restarted node kept the transaction")
	}
	h.server.ResendTxs(context.Background())
	if h.pooled(res.TxID) == nil {
		t.Fatal("the journal did not send the lost transaction again")
	}
	// Mined deep enough, it leaves the journal.
	h.mine(payout.FinalConfirmations)
	h.server.ResendTxs(context.Background())
	if list, _ := h.server.JournaledTxs(); len(list) != 0 {
		t.Fatalf("%d entries after the transaction is final", len(list))
	}
	if _, ok := h.server.JournaledTx(list[0]); ok {
		t.Fatal("JournaledTx still has the final transaction")
	}
	// A refusal at the first send leaves nothing journaled.
	h.cn.FailSends(reject(reason.FeeTooLow, "fee too low"), false)
	h.refused(t, "POST", "/api/wallet/send", mnemonicBody(a, field("to", to), field("amount", 1)), 400, "tx_rejected")
	h.cn.FailSends(nil, false)
	if list, _ := h.server.JournaledTxs(); len(list) != 0 {
		t.Fatalf("%d entries after a refusal", len(list))
	}
}

// mcpRaw posts one JSON-RPC message to /mcp with the given Origin ("" for none).
func mcpRaw(t *testing.T, base, origin, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+mcp.Path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// /mcp refuses a foreign Origin, "null" included (403), as MCP's transport requires of local
// servers, so a page in a browser cannot drive the tools; the page's own origin and
// clients that send none are served.
func TestMCPRefusesForeignOrigin(t *testing.T) {
	h := regtestHarness(t, 1)
	const list = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	for _, o := range []string{"https://evil.example", "null", "http://localhost.evil.example"} {
		if code, body := mcpRaw(t, h.http.URL, o, list); code != http.StatusForbidden {
			t.Errorf("Origin %s: %d %s, want 403", o, code, body)
		}
	}
	for _, o := range []string{"", h.http.URL} {
		if code, body := mcpRaw(t, h.http.URL, o, list); code != http.StatusOK {
			t.Errorf("Origin %q: %d %s, want 200", o, code, body)
		}
	}
}

// An MCP request with a malformed _meta is refused without its params in the error text:
// the mnemonic in the arguments is never echoed.
func TestMCPMalformedMetaDoesNotEcho(t *testing.T) {
	h := regtestHarness(t, 1)
	const secret = "abandon ability able about above absent absorb abstract absurd abuse access accident"
	for _, meta := range []string{`5`, `"x"`, `[1]`, `{"progressToken":{"a":1}}`} {
		body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wallet_derive","_meta":` + meta +
			`,"arguments":{"mnemonic":"` + secret + `"}}}`
		_, resp := mcpRaw(t, h.http.URL, "", body)
		if strings.Contains(resp, "abandon") || strings.Contains(resp, "absurd") {
			t.Errorf("_meta %s: the answer echoes the mnemonic: %s", meta, resp)
		}
	}
}
