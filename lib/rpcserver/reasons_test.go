package rpcserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/miner"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/types"
)

// wantReason makes a call over HTTP that must fail with a domain error of kind: code -1 and
// error.data.reason the kind's reason on the wire, and an error from the rpcapi client that
// errors.Is matches against the kind and its reason, with the *jsonrpc.Error still reachable.
func (e *env) wantReason(kind reason.Kind, method string, params ...any) {
	e.t.Helper()
	msg := e.wireReason(kind, method, params...)
	e.clientReason(kind, msg, method, params...)
}

// wireReason makes a call over HTTP that must fail with code -1 and error.data.reason the
// kind's reason; it returns the message.
func (e *env) wireReason(kind reason.Kind, method string, params ...any) string {
	e.t.Helper()
	if params == nil {
		params = []any{}
	}
	ps, err := json.Marshal(params)
	if err != nil {
		e.t.Fatal(err)
	}
	status, body := e.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, ps))
	var resp struct {
		Error *struct {
			Code    int
			Message string
			Data    map[string]any
		}
	}
	if err := json.Unmarshal(body, &resp); err != nil || status != 200 || resp.Error == nil {
		e.t.Fatalf("%s: HTTP %d %s, want an error", method, status, body)
	}
	if resp.Error.Code != jsonrpc.CodeMisc || resp.Error.Data["reason"] != string(kind.Reason()) {
		e.t.Fatalf("%s: %s, want code -1 and reason %q", method, body, kind.Reason())
	}
	return resp.Error.Message
}

// clientReason makes a call through the rpcapi client that must fail with an error that
// errors.Is matches against kind and its reason, and that errors.As turns into the
// *jsonrpc.Error with code -1 and message msg (any message when msg is "").
func (e *env) clientReason(kind reason.Kind, msg string, method string, params ...any) {
	e.t.Helper()
	if params == nil {
		params = []any{}
	}
	err := e.client.Call(context.Background(), method, params, nil)
	if !errors.Is(err, kind) || !errors.Is(err, kind.Reason()) {
		e.t.Fatalf("%s: client error %v does not match %v (%s)", method, err, kind, kind.Reason())
	}
	var re *jsonrpc.Error
	if !errors.As(err, &re) || re.Code != jsonrpc.CodeMisc || msg != "" && re.Message != msg {
		e.t.Fatalf("%s: client error %#v, want code -1 and message %q", method, re, msg)
	}
}

// TestDomainErrorReasons: every domain error that TestDomainErrors provokes carries the
// reason of its kind, and the client's error matches the kind.
func TestDomainErrorReasons(t *testing.T) {
	e := newFundedEnv(t)
	unknown := types.Blake3([]byte("unknown")).String()
	tip := e.node.Chain().Tip()

	e.wantReason(reason.BlockNotFound, "getblock", unknown)
	e.wantReason(reason.BlockNotFound, "getblockheader", unknown)
	e.wantReason(reason.TxNotFound, "gettransaction", unknown)
	e.wantReason(reason.TxNotFound, "getrawtransaction", unknown)
	e.wantReason(reason.HeightOutOfRange, "getblockhash", tip.Height+1)
	e.wantReason(reason.InvalidAddress, "getblocktemplate", "nope")
	e.wantReason(reason.InvalidAddress, "getutxosbyaddress", "nope")
	e.wantReason(reason.InvalidAddress, "generatetoaddress", 1, "nope")
	e.wantReason(reason.UnknownCommand, "help", "nope")

	ghost := coin{types.Outpoint{TxID: types.Blake3([]byte("ghost"))}, 100_000_000}
	e.wantReason(consensus.ErrMissingInputs, "sendrawtransaction", txHex(e.transfer([]coin{ghost}, 10_000, 1)))
	in := e.take(1)
	size := e.transfer(in, 0, 1).SerializeSize()
	e.wantReason(mempool.ErrInsufficientFee, "sendrawtransaction", txHex(e.transfer(in, uint64(size)-1, 1)))
	first := e.transfer(in, uint64(size), 1)
	e.send(first)
	e.wantReason(mempool.ErrAlreadyInPool, "sendrawtransaction", txHex(first))
	e.wantReason(mempool.ErrConflict, "sendrawtransaction", txHex(e.transfer(in, 50_000, 1)))
	e.wantReason(reason.DecodeFailed, "sendrawtransaction", "00")
	dust := e.transfer(e.take(1), 10_000, 1)
	dust.Outputs = append(dust.Outputs, types.TxOutput{Value: 1, PubKeyHash: testPKH})
	dust.Outputs[0].Value--
	types.SignInputs(dust, testKey, e.net.Magic)
	e.wantReason(mempool.ErrDust, "sendrawtransaction", txHex(dust))
	bad := e.transfer(e.take(1), 10_000, 1)
	bad.Inputs[0].Signature[0] ^= 1
	e.wantReason(consensus.ErrBadSignature, "sendrawtransaction", txHex(bad))

	// A transaction already mined: the kind the faucet once misread as a chain-depth limit.
	mined := e.transfer(e.take(1), 10_000, 1)
	e.mineBlock(mined)
	e.wantReason(mempool.ErrAlreadyInChain, "sendrawtransaction", txHex(mined))
	_, err := e.client.SendRawTransaction(context.Background(), txHex(mined))
	if !errors.Is(err, mempool.ErrAlreadyInChain) || errors.Is(err, mempool.ErrAlreadyInPool) || errors.Is(err, consensus.ErrMissingInputs) {
		t.Fatalf("SendRawTransaction of a mined transaction: %v", err)
	}

	// Blocks: stale template, bad proof of work, a greedy coinbase, a duplicate.
	tmpl, err := e.client.GetBlockTemplate(context.Background(), e.addr)
	if err != nil {
		t.Fatal(err)
	}
	stale := blockFromTemplate(t, tmpl)
	if err := miner.Solve(stale, 1<<24); err != nil {
		t.Fatal(err)
	}
	old := e.mineBlock()
	e.wantReason(reason.StaleTemplate, "submitblock", blockHex(stale))
	e.wantReason(consensus.ErrDuplicateBlock, "submitblock", blockHex(old))
	b := e.block()
	for consensus.CheckProofOfWork(&b.Header, b.Hash(), e.net.PowLimit) == nil {
		b.Header.Nonce++
	}
	e.wantReason(consensus.ErrHighHash, "submitblock", blockHex(b))
	greedy := func(more uint64) string {
		g := e.block()
		g.Transactions[0].Outputs[0].Value += more
		g.Header.MerkleRoot = types.MerkleRoot(g.TxIDs())
		if err := miner.Solve(g, 1<<24); err != nil {
			t.Fatal(err)
		}
		return blockHex(g)
	}
	g1, g2 := greedy(1), greedy(2)
	e.wireReason(consensus.ErrBadCoinbaseValue, "submitblock", g1)
	e.clientReason(consensus.ErrBadCoinbaseValue, "", "submitblock", g2)
	e.wantReason(consensus.ErrKnownInvalid, "submitblock", g1)
	e.wantReason(reason.DecodeFailed, "submitblock", "00")

	t.Run("regtest only", func(t *testing.T) {
		e := newEnv(t, params.Testnet)
		e.wantReason(reason.RegtestOnly, "generatetoaddress", 1, e.addr)
	})
}
