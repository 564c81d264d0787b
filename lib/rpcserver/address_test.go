package rpcserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/rpcserver"
	"github.com/cointoolkit/coin/lib/types"
)

// pages lists an address's outputs with getutxosbyaddress pages of limit, following the
// cursor, and fails on a duplicate.
func (e *env) pages(addr string, withPool bool, limit int) ([]rpcapi.UTXO, int) {
	e.t.Helper()
	var all []rpcapi.UTXO
	seen := map[string]bool{}
	after, calls := "", 0
	for {
		var page []rpcapi.UTXO
		if err := json.Unmarshal(e.mustCall("getutxosbyaddress", addr, withPool, after, limit), &page); err != nil {
			e.t.Fatal(err)
		}
		calls++
		for _, u := range page {
			k := fmt.Sprintf("%s:%d", u.TxID, u.Index)
			if seen[k] {
				e.t.Fatalf("%s listed twice", k)
			}
			seen[k] = true
		}
		all = append(all, page...)
		if len(page) < limit {
			return all, calls
		}
		after = fmt.Sprintf("%s:%d", page[len(page)-1].TxID, page[len(page)-1].Index)
	}
}

// sums is getaddressbalance computed from a listing, the way the faucet did it.
func sums(addr string, us []rpcapi.UTXO) rpcapi.AddressBalance {
	b := rpcapi.AddressBalance{Address: addr, UtxoCount: uint64(len(us))}
	for _, u := range us {
		b.Balance += u.Value
		switch {
		case u.Locked:
			b.Locked += u.Value
		case u.IsCoinbase && u.Confirmations < consensus.CoinbaseMaturity:
			b.Immature += u.Value
		default:
			b.Spendable += u.EffectiveValue
		}
	}
	return b
}

// TestAddressBalanceAndPages: getaddressbalance agrees with the sums of the full listing,
// confirmed and with the mempool; pages of any size put together are that listing, in
// outpoint order, each output once; the client pages through transparently.
func TestAddressBalanceAndPages(t *testing.T) {
	e := newFundedEnv(t) // 101 coinbases (the first spent by the fan-out) and 50 fan-out outputs
	ctx := context.Background()
	// Something in the mempool: spend two coins, one output back, one to the other address.
	in := e.take(2)
	tx := e.transfer(in, 10_000, 2)
	tx.Outputs[1].PubKeyHash = otherPKH
	types.SignInputs(tx, testKey, e.net.Magic)
	e.send(tx)

	for _, withPool := range []bool{false, true} {
		var full []rpcapi.UTXO
		if err := json.Unmarshal(e.mustCall("getutxosbyaddress", e.addr, withPool, "", rpcapi.UtxoPageMax), &full); err != nil {
			t.Fatal(err)
		}
		if len(full) < 100 {
			t.Fatalf("%d outputs", len(full))
		}
		for i := 1; i < len(full); i++ {
			if a, b := full[i-1], full[i]; a.TxID > b.TxID || a.TxID == b.TxID && a.Index >= b.Index {
				t.Fatalf("not in outpoint order at %d: %s:%d then %s:%d", i, a.TxID, a.Index, b.TxID, b.Index)
			}
		}
		for _, limit := range []int{1, 7, 50, len(full), len(full) + 1} {
			got, calls := e.pages(e.addr, withPool, limit)
			if len(got) != len(full) || calls != len(full)/limit+1 {
				t.Fatalf("limit %d: %d outputs in %d calls, want %d", limit, len(got), calls, len(full))
			}
			for i := range got {
				if got[i] != full[i] {
					t.Fatalf("limit %d: output %d differs: %+v vs %+v", limit, i, got[i], full[i])
				}
			}
		}
		viaClient, err := e.client.GetUtxosByAddress(ctx, e.addr, withPool)
		if err != nil || len(viaClient) != len(full) {
			t.Fatalf("client: %d outputs, %v", len(viaClient), err)
		}
		// Without paging parameters: the default page, which holds them all here.
		var plain []rpcapi.UTXO
		json.Unmarshal(e.mustCall("getutxosbyaddress", e.addr, withPool), &plain)
		if len(plain) != len(full) {
			t.Fatalf("default page: %d outputs", len(plain))
		}

		bal, err := e.client.GetAddressBalance(ctx, e.addr, withPool)
		if err != nil {
			t.Fatal(err)
		}
		want := sums(e.addr, full)
		if *bal != want {
			t.Fatalf("include_mempool=%v: getaddressbalance %+v, the listing sums to %+v", withPool, *bal, want)
		}
		if bal.Immature == 0 || bal.Spendable == 0 || bal.Balance != bal.Spendable+bal.Immature+bal.Locked {
			t.Fatalf("include_mempool=%v: %+v", withPool, *bal)
		}
		raw := decodeObject(t, e.mustCall("getaddressbalance", e.addr, withPool))
		checkFields(t, "getaddressbalance", raw, map[string]string{"address": tString, "balance": tInteger,
			"spendable": tInteger, "locked": tInteger, "immature": tInteger, "utxo_count": tInteger})
	}
	// The mempool's view: the spent inputs leave, the change comes in.
	conf, _ := e.client.GetAddressBalance(ctx, e.addr, false)
	pend, _ := e.client.GetAddressBalance(ctx, e.addr, true)
	if pend.UtxoCount != conf.UtxoCount-1 || pend.Balance != conf.Balance-in[0].value-in[1].value+tx.Outputs[0].Value {
		t.Fatalf("pending %+v vs confirmed %+v", pend, conf)
	}
	other, _ := e.client.GetAddressBalance(ctx, otherAddr(t, e), true)
	if other.UtxoCount != 1 || other.Balance != tx.Outputs[1].Value || other.Spendable != other.Balance {
		t.Fatalf("other address with the mempool: %+v", other)
	}
	if empty, _ := e.client.GetAddressBalance(ctx, otherAddr(t, e), false); empty.UtxoCount != 0 || empty.Balance != 0 {
		t.Fatalf("other address confirmed: %+v", empty)
	}

	for _, params := range [][]any{
		{e.addr, false, "", 0},
		{e.addr, false, "", rpcapi.UtxoPageMax + 1},
		{e.addr, false, "nonsense", 10},
		{e.addr, false, "00:1", 10},
	} {
		if _, err := e.call("getutxosbyaddress", params...); err == nil || err.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("getutxosbyaddress %v: %v, want -32602", params, err)
		}
	}
	e.wantError(jsonrpc.CodeMisc, "invalid address", false, "getaddressbalance", "tcoin1nothing")
}

func otherAddr(t *testing.T, e *env) string {
	t.Helper()
	a, err := keys.EncodeAddress(e.net.HRP, keys.PubKeyHash(otherPKH))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestUtxosByAddressAnswersEveryOutput: the spec's one-parameter call lists every output of
// an address with more than 5,000 of them (before, it answered the first 1,000 and said
// nothing of the rest); the paged form still pages; an address beyond the bound of one
// answer gets result_too_large naming getaddressbalance and the paged form, never a short
// list.
func TestUtxosByAddressAnswersEveryOutput(t *testing.T) {
	e := newEnv(t, params.Regtest)
	var cbs []*types.Block
	for i := 0; i < 106; i++ {
		cbs = append(cbs, e.mineBlock())
	}
	var fans []*types.Transaction
	for _, b := range cbs[:6] {
		cb := b.Transactions[0]
		fans = append(fans, e.transfer([]coin{{types.Outpoint{TxID: cb.TxID()}, cb.Outputs[0].Value}}, 100_000, consensus.MaxTxOutputs))
	}
	e.mineBlock(fans...)
	ctx := context.Background()
	bal, err := e.client.GetAddressBalance(ctx, e.addr, false)
	if err != nil {
		t.Fatal(err)
	}
	want := 6*consensus.MaxTxOutputs + 101 // the fan-outs, the 100 unspent coinbases and the last block's
	if bal.UtxoCount != uint64(want) {
		t.Fatalf("getaddressbalance counts %d outputs, want %d", bal.UtxoCount, want)
	}
	for _, params := range [][]any{{e.addr}, {e.addr, true}, {e.addr, false, ""}, {e.addr, false, nil, nil}} {
		var all []rpcapi.UTXO
		if err := json.Unmarshal(e.mustCall("getutxosbyaddress", params...), &all); err != nil {
			t.Fatal(err)
		}
		if len(all) != want {
			t.Fatalf("getutxosbyaddress %v: %d outputs, want all %d", params[1:], len(all), want)
		}
		if got := sums(e.addr, all); got.Balance != bal.Balance {
			t.Fatalf("getutxosbyaddress %v sums to %d, getaddressbalance says %d", params[1:], got.Balance, bal.Balance)
		}
	}
	if got, _ := e.pages(e.addr, false, rpcapi.UtxoPageMax); len(got) != want {
		t.Fatalf("pages of %d: %d outputs", rpcapi.UtxoPageMax, len(got))
	}
	if got, err := e.client.GetUtxosByAddress(ctx, e.addr, false); err != nil || len(got) != want {
		t.Fatalf("client: %d outputs, %v", len(got), err)
	}

	// Beyond the bound: a refusal of its own kind, and the paged form still answers.
	defer rpcserver.SetUtxoListMax(5_000)()
	var res []rpcapi.UTXO
	err = e.client.Call(ctx, "getutxosbyaddress", []any{e.addr}, &res)
	if !errors.Is(err, reason.ResultTooLarge) || res != nil {
		t.Fatalf("over the bound: %v (%d outputs), want result_too_large", err, len(res))
	}
	for _, s := range []string{"getaddressbalance", "getutxosbyaddress " + e.addr + " INCLUDE_MEMPOOL AFTER LIMIT", fmt.Sprint(want)} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("refusal %q does not say %q", err, s)
		}
	}
	if got, _ := e.pages(e.addr, false, 1_000); len(got) != want {
		t.Fatalf("pages of 1000 over the bound: %d outputs", len(got))
	}
	if got, err := e.client.GetUtxosByAddress(ctx, e.addr, true); err != nil || len(got) != want {
		t.Fatalf("client over the bound: %d outputs, %v", len(got), err)
	}
}
