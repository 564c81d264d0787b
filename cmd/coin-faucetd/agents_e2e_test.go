package main

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/wallet"
)

// scaled is protocol §9's score change, written out here independently of lib/consensus: a gain
// d moves s by d × (1000 − s) / 500, a loss by |d| × s / 500 (integer division), clamped.
func scaled(s, d int) int {
	if d > 0 {
		s += d * (1000 - s) / 500
	} else {
		s -= -d * s / 500
	}
	return min(max(s, 0), 1000)
}

// TestAgentsEndToEnd runs the agent API on real processes (regtest node, coin-faucetd):
// two agents funded by the faucet register, contract, fulfil and review one another back to
// back without waiting for blocks; a second contract is refunded after it expires. Scores
// follow protocol §9's arithmetic.
func TestAgentsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	fx := startFaucetNet(t, 6)
	n, burn := fx.node, fx.burn
	ctx := context.Background()
	f := startFaucetd(t, fx.faucetdArgs()...)

	call := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		code, m, _ := httpJSON(method, f.url+path, body)
		return code, m
	}
	ok := func(method, path, body string) map[string]any {
		t.Helper()
		code, m := call(method, path, body)
		if code != 200 {
			t.Fatalf("%s %s: %d %v\nfaucetd:\n%s", method, path, code, m, f.Out.Tail(30))
		}
		return m
	}
	refused := func(method, path, body string, status int, want string) {
		t.Helper()
		mi, _ := n.RPC.GetMempoolInfo(ctx)
		code, m := call(method, path, body)
		e, _ := m["error"].(map[string]any)
		if code != status || e["code"] != want || e["message"] == "" {
			t.Fatalf("%s %s: %d %v, want %d %s", method, path, code, m, status, want)
		}
		if after, _ := n.RPC.GetMempoolInfo(ctx); after.Size != mi.Size {
			t.Fatalf("%s %s: refused, yet the mempool grew from %d to %d", method, path, mi.Size, after.Size)
		}
	}
	type agent struct{ mnemonic, address string }
	newAgent := func() agent {
		w := ok("GET", "/api/wallet/new", "")
		a := agent{w["mnemonic"].(string), w["address"].(string)}
		ok("POST", "/api/faucet", fmt.Sprintf(`{"address":%q}`, a.address))
		return a
	}
	body := func(a agent, rest string) string { return fmt.Sprintf(`{"mnemonic":%q%s}`, a.mnemonic, rest) }
	score := func(addr string) int {
		t.Helper()
		return int(ok("GET", "/api/agent/profile?address="+addr, "")["conduct_score"].(float64))
	}

	// Both funded by unconfirmed claims, both registered at once.
	a, b := newAgent(), newAgent()
	for _, x := range []agent{a, b} {
		reg := ok("POST", "/api/agent/register", body(x, ""))
		if reg["address"] != x.address || reg["conduct_score"] != 500.0 || !hex64.MatchString(reg["stake_txid"].(string)) {
			t.Fatalf("register: %v", reg)
		}
		if tx, err := n.RPC.GetTransaction(ctx, reg["stake_txid"].(string)); err != nil || !tx.InMempool {
			t.Fatalf("stake transaction: %+v %v", tx, err)
		}
	}
	refused("POST", "/api/agent/register", body(a, ""), 400, "already_registered")
	if p := ok("GET", "/api/agent/profile?address="+a.address, ""); p["tier"] != "participant" || p["registered_at"] != nil ||
		p["average_review_score"] != nil {
		t.Fatalf("unconfirmed profile: %v", p)
	}
	refused("POST", "/api/agent/vouch", body(a, fmt.Sprintf(`,"target_address":%q`, b.address)), 400, "score_too_low")

	// A contract, fulfilled by the counterparty (not by the initiator), reviewed both ways:
	// all in the mempool.
	cr := ok("POST", "/api/agent/contract/create", body(a, fmt.Sprintf(`,"counterparty":%q,"value_coin":2.5`, b.address)))
	if cr["status"] != "open" || cr["value_coin"] != "2.50000000" || cr["initiator"] != a.address || cr["counterparty"] != b.address {
		t.Fatalf("create: %v", cr)
	}
	id := fmt.Sprintf(`,"contract_id":%q`, cr["contract_id"])
	refused("POST", "/api/agent/contract/fulfil", body(a, id), 400, "not_counterparty")
	fr := ok("POST", "/api/agent/contract/fulfil", body(b, id))
	if fr["status"] != "fulfilled" || fr["contract_id"] != cr["contract_id"] || !hex64.MatchString(fr["release_txid"].(string)) {
		t.Fatalf("fulfil: %v", fr)
	}
	sa, sb := scaled(500, 10), scaled(500, 20)
	if score(a.address) != sa || score(b.address) != sb {
		t.Fatalf("after the fulfilment: %d %d, want %d %d", score(a.address), score(b.address), sa, sb)
	}
	rv := ok("POST", "/api/agent/review", body(a, fmt.Sprintf(`,"subject_address":%q,"score":9%s`, b.address, id)))
	sb = scaled(sb, (2*9-11)*10)
	if rv["new_conduct_score"] != float64(sb) || rv["reviewer"] != a.address || rv["subject"] != b.address || rv["score"] != 9.0 {
		t.Fatalf("review of b: %v, want score %d", rv, sb)
	}
	rv = ok("POST", "/api/agent/review", body(b, fmt.Sprintf(`,"subject_address":%q,"score":3%s`, a.address, id)))
	sa = scaled(sa, (2*3-11)*10)
	if rv["new_conduct_score"] != float64(sa) {
		t.Fatalf("review of a: %v, want score %d", rv, sa)
	}
	refused("POST", "/api/agent/review", body(b, fmt.Sprintf(`,"subject_address":%q,"score":3%s`, a.address, id)), 400, "already_reviewed")

	// One block mines it all; the confirmed scores are the pending ones.
	n.generate(t, 1, burn)
	if mi, _ := n.RPC.GetMempoolInfo(ctx); mi.Size != 0 {
		t.Fatalf("%d transactions left in the mempool after a block", mi.Size)
	}
	pa := ok("GET", "/api/agent/profile?address="+a.address, "")
	pb := ok("GET", "/api/agent/profile?address="+b.address, "")
	if pa["conduct_score"] != float64(sa) || pb["conduct_score"] != float64(sb) || pa["registered_at"] == nil ||
		pb["average_review_score"] != 9.0 || pb["contracts_completed"] != 1.0 || pa["contracts_completed"] != 1.0 {
		t.Fatalf("confirmed profiles:\n%v\n%v", pa, pb)
	}
	// The stake and the escrow are in the nominal balance, not in what is spendable.
	if bal := ok("GET", "/api/wallet/balance?address="+a.address, ""); mustAmount(t, bal["spendable"]) >= 50*amount.Coin ||
		mustAmount(t, bal["balance"]) < 50*amount.Coin || mustAmount(t, bal["balance"])-mustAmount(t, bal["spendable"]) < 50*amount.Coin {
		t.Fatalf("a's balance %v: the stake counts in balance, not in spendable", bal)
	}

	// A second contract expires: no refund before, a refund from its expiry on.
	c2 := ok("POST", "/api/agent/contract/create", body(a, fmt.Sprintf(`,"counterparty":%q,"value_coin":1,"expiry_blocks":10`, b.address)))
	id2 := fmt.Sprintf(`,"contract_id":%q`, c2["contract_id"])
	refused("POST", "/api/agent/contract/refund", body(a, id2), 400, "contract_not_expired")
	n.generate(t, 9, burn)
	refused("POST", "/api/agent/contract/refund", body(a, id2), 400, "contract_not_expired")
	n.generate(t, 1, burn)
	refused("POST", "/api/agent/contract/fulfil", body(b, id2), 400, "contract_expired")
	rr := ok("POST", "/api/agent/contract/refund", body(a, id2))
	if rr["status"] != "expired" || rr["contract_id"] != c2["contract_id"] || !hex64.MatchString(rr["refund_txid"].(string)) {
		t.Fatalf("refund: %v", rr)
	}
	n.generate(t, 1, burn)
	us, err := n.RPC.GetUtxosByAddress(ctx, a.address, false)
	if err != nil {
		t.Fatal(err)
	}
	refunded := false
	for _, u := range us {
		refunded = refunded || u.TxID == rr["refund_txid"]
	}
	if !refunded {
		t.Fatalf("no output of the refund pays the initiator: %+v", us)
	}
	if c := ok("GET", "/api/agent/contract?contract_id="+c2["contract_id"].(string), ""); c["status"] != "expired" ||
		c["closed_by"] != rr["refund_txid"] || c["confirmed"] != true {
		t.Fatalf("refunded contract: %v", c)
	}
	sb = scaled(sb, -50)
	if pb = ok("GET", "/api/agent/profile?address="+b.address, ""); pb["conduct_score"] != float64(sb) || pb["contracts_failed"] != 1.0 {
		t.Fatalf("b after the refund: %v, want score %d", pb, sb)
	}

	// Unknown agents and contracts are 404.
	_, stranger, _ := wallet.NewMnemonic(12, params.Regtest)
	refused("GET", "/api/agent/profile?address="+stranger, "", 404, "agent_not_found")
	refused("GET", "/api/agent/contract?contract_id="+fmt.Sprintf("%064x", 7), "", 404, "contract_not_found")

	// The directory: by score (highest first), then address.
	d := ok("GET", "/api/agent/directory", "")
	agents, _ := d["agents"].([]any)
	if d["total"] != 2.0 || d["offset"] != 0.0 || d["limit"] != 20.0 || len(agents) != 2 {
		t.Fatalf("directory: %v", d)
	}
	if !sort.SliceIsSorted(agents, func(i, j int) bool {
		x, y := agents[i].(map[string]any), agents[j].(map[string]any)
		if x["conduct_score"] != y["conduct_score"] {
			return x["conduct_score"].(float64) > y["conduct_score"].(float64)
		}
		return x["address"].(string) < y["address"].(string)
	}) {
		t.Fatalf("directory order: %v", agents)
	}
	first := agents[0].(map[string]any)
	if want := map[bool]string{true: b.address, false: a.address}[sb > sa]; first["address"] != want {
		t.Fatalf("directory starts with %v, want %s", first, want)
	}
	refused("GET", "/api/agent/directory?limit=101", "", 400, "bad_request")
}

func mustAmount(t *testing.T, v any) uint64 {
	t.Helper()
	s, _ := v.(string)
	a, err := amount.ParseAllowZero(s)
	if err != nil {
		t.Fatalf("amount %v: %v", v, err)
	}
	return a
}
