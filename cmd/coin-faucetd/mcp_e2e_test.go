package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/faucet/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPAgentContractEndToEnd runs a whole agent contract through MCP alone, with the
// SDK's client, against coin-faucetd and a regtest node: two new wallets, funded by the
// faucet, register, contract, fulfil and review each other; the scores the tools report
// are the HTTP API's profiles and protocol §9's arithmetic.
func TestMCPAgentContractEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	fx := startFaucetNet(t, 6)
	n, burn, faucetAddr := fx.node, fx.burn, fx.faucetAddr
	ctx := context.Background()
	f := startFaucetd(t, fx.faucetdArgs()...)

	client := sdk.NewClient(&sdk.Implementation{Name: "e2e-agent", Version: "0"}, nil)
	s, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: f.url + mcp.Path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tools, err := s.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != len(mcp.Tools()) {
		t.Fatalf("tools/list: %d tools, %v", len(tools.Tools), err)
	}

	call := func(name string, args map[string]any, out any) {
		t.Helper()
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if te := mcp.ErrorOf(res); te != nil {
			t.Fatalf("%s: %+v\nfaucetd:\n%s", name, te, f.Out.Tail(20))
		}
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %s: %v", name, b, err)
		}
	}
	refused := func(name string, args map[string]any, code string) {
		t.Helper()
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if te := mcp.ErrorOf(res); te == nil || te.Error.Code != code || te.Status != 400 {
			t.Fatalf("%s: %+v, want 400 %s", name, te, code)
		}
	}

	var a, b api.NewWalletResult
	call("wallet_new", nil, &a)
	call("wallet_new", nil, &b)
	for _, w := range []api.NewWalletResult{a, b} {
		var c api.ClaimResult
		call("faucet_claim", map[string]any{"address": w.Address}, &c)
		var r api.RegisterResult
		call("agent_register", map[string]any{"mnemonic": w.Mnemonic}, &r)
		if r.Address != w.Address || r.ConductScore != 500 {
			t.Fatalf("register: %+v", r)
		}
	}
	var cr api.ContractCreateResult
	call("contract_create", map[string]any{"mnemonic": a.Mnemonic, "counterparty": b.Address, "value_coin": 2.5}, &cr)
	if cr.Status != "open" || cr.ValueCoin != "2.50000000" {
		t.Fatalf("create: %+v", cr)
	}
	refused("contract_fulfil", map[string]any{"mnemonic": a.Mnemonic, "contract_id": cr.ContractID}, "not_counterparty")
	var fr api.FulfilResult
	call("contract_fulfil", map[string]any{"mnemonic": b.Mnemonic, "contract_id": cr.ContractID}, &fr)
	if fr.Status != "fulfilled" {
		t.Fatalf("fulfil: %+v", fr)
	}
	sa, sb := scaled(500, 10), scaled(500, 20)
	var rb, ra api.ReviewResult
	call("agent_review", map[string]any{"mnemonic": a.Mnemonic, "subject_address": b.Address, "score": 9, "contract_id": cr.ContractID}, &rb)
	sb = scaled(sb, (2*9-11)*10)
	call("agent_review", map[string]any{"mnemonic": b.Mnemonic, "subject_address": a.Address, "score": 4, "contract_id": cr.ContractID}, &ra)
	sa = scaled(sa, (2*4-11)*10)
	if int(rb.NewConductScore) != sb || int(ra.NewConductScore) != sa {
		t.Fatalf("reviews: %+v %+v, want %d %d", rb, ra, sb, sa)
	}
	refused("agent_review", map[string]any{"mnemonic": a.Mnemonic, "subject_address": b.Address, "score": 9, "contract_id": cr.ContractID}, "already_reviewed")

	// The tools' profiles are the HTTP API's, before and after a block.
	check := func() {
		t.Helper()
		for _, x := range []struct {
			addr  string
			score int
		}{{a.Address, sa}, {b.Address, sb}} {
			var p api.AgentProfile
			call("agent_profile", map[string]any{"address": x.addr}, &p)
			code, hp, _ := httpJSON("GET", f.url+"/api/agent/profile?address="+x.addr, "")
			if code != 200 || int(p.ConductScore) != x.score || hp["conduct_score"] != float64(p.ConductScore) || hp["tier"] != p.Tier ||
				hp["contracts_completed"] != float64(p.ContractsCompleted) || hp["reviews_received"] != float64(p.ReviewsReceived) {
				t.Fatalf("profile of %s: MCP %+v, HTTP %d %v, want score %d", x.addr, p, code, hp, x.score)
			}
		}
	}
	check()
	n.generate(t, 1, burn)
	check()

	// The chain reads follow the contract into the block.
	var tx api.Transaction
	call("transaction_get", map[string]any{"txid": fr.ReleaseTxID}, &tx)
	if tx.Kind != "contract_fulfil" || tx.InMempool || tx.Confirmations != 1 || tx.BlockHeight == nil {
		t.Fatalf("transaction_get: %+v", tx)
	}
	var blk api.Block
	call("block_get", map[string]any{"height": *tx.BlockHeight}, &blk)
	if blk.Hash != tx.BlockHash || blk.TxCount != len(blk.Tx) {
		t.Fatalf("block_get: %+v, tx in %s", blk, tx.BlockHash)
	}
	var dec api.Decay
	call("address_decay", map[string]any{"address": faucetAddr}, &dec)
	if dec.Address != faucetAddr || dec.ClusterID == "" || dec.YearlyDecayPercent == "" {
		t.Fatalf("address_decay: %+v", dec)
	}
	var d api.Directory
	call("agent_directory", map[string]any{"limit": 10}, &d)
	if d.Total != 2 || len(d.Agents) != 2 || d.Limit != 10 {
		t.Fatalf("agent_directory: %+v", d)
	}
}
