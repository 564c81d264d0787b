package rpcserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/types"
)

// The errors of the RPC: domain errors with their messages and reasons, invalid
// parameters, malformed bodies.

// TestDomainErrors: each domain error has code -1 and its message, and changes nothing.
func TestDomainErrors(t *testing.T) {
	e := newFundedEnv(t)
	before := e.state()
	unknown := types.Blake3([]byte("unknown")).String()
	mainnetAddr, _ := keys.EncodeAddress(params.Mainnet.HRP, keys.PubKeyHash(testPKH))

	e.wantError(jsonrpc.CodeMisc, "block not found", true, "getblock", unknown)
	e.wantError(jsonrpc.CodeMisc, "block not found", true, "getblockheader", unknown)
	e.wantError(jsonrpc.CodeMisc, "transaction not found", true, "gettransaction", unknown)
	e.wantError(jsonrpc.CodeMisc, "transaction not found", true, "getrawtransaction", unknown)
	e.wantError(jsonrpc.CodeMisc, "block height out of range", true, "getblockhash", before.Height+1)
	for _, bad := range []string{"nope", mainnetAddr, strings.ToUpper(e.addr[:10]) + e.addr[10:], flipLast(e.addr)} {
		e.wantError(jsonrpc.CodeMisc, "invalid address", false, "getblocktemplate", bad)
		e.wantError(jsonrpc.CodeMisc, "invalid address", false, "getutxosbyaddress", bad)
		e.wantError(jsonrpc.CodeMisc, "invalid address", false, "generatetoaddress", 1, bad)
	}
	if s := e.state(); s != before {
		t.Fatalf("state changed: %+v → %+v", before, s)
	}

	ghost := coin{types.Outpoint{TxID: types.Blake3([]byte("ghost"))}, 100_000_000}
	e.wantError(jsonrpc.CodeMisc, "missing inputs", false, "sendrawtransaction", txHex(e.transfer([]coin{ghost}, 10_000, 1)))
	in := e.take(1)
	size := e.transfer(in, 0, 1).SerializeSize()
	e.wantError(jsonrpc.CodeMisc, "insufficient fee", false, "sendrawtransaction", txHex(e.transfer(in, uint64(size)-1, 1)))
	first := e.transfer(in, uint64(size), 1)
	e.send(first)
	e.wantError(jsonrpc.CodeMisc, "conflicts with a mempool transaction", false, "sendrawtransaction", txHex(e.transfer(in, 50_000, 1)))
	e.wantError(jsonrpc.CodeMisc, "transaction decode failed", false, "sendrawtransaction", "00")
	bad := e.transfer(e.take(1), 10_000, 1)
	bad.Inputs[0].Signature[0] ^= 1
	e.wantError(jsonrpc.CodeMisc, "invalid transaction", false, "sendrawtransaction", txHex(bad))
	if info, _ := e.client.GetMempoolInfo(context.Background()); info.Size != 1 {
		t.Fatalf("mempool has %d transactions, want 1", info.Size)
	}
	before = e.state()

	// A template goes stale when another block arrives first.
	tmpl, err := e.client.GetBlockTemplate(context.Background(), e.addr)
	if err != nil {
		t.Fatal(err)
	}
	staleBlock := blockFromTemplate(t, tmpl)
	if err := types.SolveBlock(staleBlock, 1<<24); err != nil {
		t.Fatal(err)
	}
	e.mineBlock()
	before = e.state()
	e.wantError(jsonrpc.CodeMisc, "stale block template", false, "submitblock", blockHex(staleBlock))
	if s := e.state(); s != before {
		t.Fatalf("state changed: %+v → %+v", before, s)
	}

	// A block on the tip with a nonce that misses the target.
	b := e.block()
	for consensus.CheckProofOfWork(&b.Header, b.Hash(), e.net.PowLimit) == nil {
		b.Header.Nonce++
	}
	e.wantError(jsonrpc.CodeMisc, "invalid proof of work", false, "submitblock", blockHex(b))
	if s := e.state(); s != before || e.node.Chain().NodeByHash(b.Hash()) != nil {
		t.Fatalf("a block with bad proof of work changed the state: %+v → %+v", before, s)
	}
	// The same block solved is fine.
	if err := types.SolveBlock(b, 1<<24); err != nil {
		t.Fatal(err)
	}
	if err := e.client.SubmitBlock(context.Background(), blockHex(b)); err != nil {
		t.Fatalf("submitblock after solving: %v", err)
	}
	// The coinbase may not claim more than subsidy + fees + release.
	greedy := e.block()
	greedy.Transactions[0].Outputs[0].Value++
	greedy.Header.MerkleRoot = types.MerkleRoot(greedy.TxIDs())
	types.SolveBlock(greedy, 1<<24)
	before = e.state()
	e.wantError(jsonrpc.CodeMisc, "coinbase pays", false, "submitblock", blockHex(greedy))
	if s := e.state(); s != before {
		t.Fatalf("state changed: %+v → %+v", before, s)
	}
}

func TestInvalidParams(t *testing.T) {
	e := newFundedEnv(t)
	before := e.state()
	tip := before.Tip
	cases := []struct {
		method string
		params []any
	}{
		// Bad hex.
		{"submitblock", []any{"zz"}},
		{"submitblock", []any{"abc"}},
		{"submitblock", []any{"0x00"}},
		{"submitblock", []any{42}},
		{"sendrawtransaction", []any{"not hex"}},
		{"sendrawtransaction", []any{"0"}},
		{"sendrawtransaction", []any{nil}},
		{"getblock", []any{"xyz"}},
		{"getblock", []any{tip[:63]}},
		{"getblockheader", []any{tip + "00"}},
		{"gettransaction", []any{42}},
		{"getclusterbalance", []any{"g" + tip[1:]}},
		{"getblockhash", []any{-1}},
		{"getblockhash", []any{"1"}},
		{"getblockhash", []any{1.5}},
		{"getutxosbyaddress", []any{e.addr, "yes"}},
		{"generatetoaddress", []any{10_001, e.addr}},
		// Wrong parameter count.
		{"getblockcount", []any{1}},
		{"getblock", []any{}},
		{"getblock", []any{tip, tip}},
		{"submitblock", []any{}},
		{"submitblock", []any{"00", "00"}},
		{"sendrawtransaction", []any{}},
		{"generatetoaddress", []any{1}},
		{"getutxosbyaddress", []any{e.addr, true, 1}},
		{"getblocktemplate", []any{}},
		{"help", []any{"getblock", "x"}},
	}
	for _, c := range cases {
		e.wantError(jsonrpc.CodeInvalidParams, "", false, c.method, c.params...)
	}
	if s := e.state(); s != before {
		t.Fatalf("state changed: %+v → %+v", before, s)
	}
	// By-name parameters use the catalogue's names.
	status, body := e.post(`{"jsonrpc":"2.0","method":"getblockheader","params":{"hash":"` + tip + `"},"id":7}`)
	if status != http.StatusOK || !strings.Contains(string(body), `"hash":"`+tip+`"`) {
		t.Fatalf("by-name getblockheader: HTTP %d %s", status, body)
	}
	status, body = e.post(`{"jsonrpc":"2.0","method":"getblockheader","params":{"blockhash":"` + tip + `"},"id":7}`)
	if status != http.StatusOK || !strings.Contains(string(body), `"code":-32602`) {
		t.Fatalf("by-name getblockheader with a wrong name: HTTP %d %s", status, body)
	}
}

// TestMalformedBodies sends broken requests, including broken and invalid blocks, and checks
// that the chain, the UTXO set and the mempool are unchanged.
func TestMalformedBodies(t *testing.T) {
	e := newFundedEnv(t)
	e.send(e.transfer(e.take(1), 10_000, 1))
	good := e.block(e.transfer(e.take(1), 10_000, 1))
	goodHex := blockHex(good)
	// A copy of the good block with a broken signature has the same hash.
	badSig := e.block(e.transfer(e.take(1), 10_000, 1))
	badSig.Transactions[1].Inputs[0].Signature[10] ^= 0xff
	// A copy with a changed output (merkle root mismatch).
	badRoot, _ := types.DecodeBlock(good.Bytes())
	badRoot.Transactions[1].Outputs[0].Value--
	before := e.state()

	req := func(method string, params string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s,"id":1}`, method, params)
	}
	bodies := []string{
		"",
		"{",
		"null",
		"[]",
		"[1,2,3]",
		`{"jsonrpc":"2.0","method":"submitblock","params":["` + goodHex,
		`{"jsonrpc":"1.0","method":"submitblock","params":["` + goodHex + `"],"id":1}`,
		`{"method":"submitblock","params":["` + goodHex + `"],"id":1}`,
		`{"jsonrpc":"2.0","method":"submitblock","params":"` + goodHex + `","id":1}`,
		`{"jsonrpc":"2.0","method":"submitblock","params":{"data":"` + goodHex + `"},"id":1}`,
		`{"jsonrpc":"2.0","method":"submitblock","method":"getblockcount","params":["` + goodHex + `"],"id":1}`,
		req("submitblock", `["`+goodHex[:len(goodHex)/2]+`"]`),
		req("submitblock", `["`+goodHex[:len(goodHex)-2]+`"]`),
		req("submitblock", `["`+goodHex+`00"]`),
		req("submitblock", `["`+strings.Repeat("ff", 200)+`"]`),
		req("submitblock", `["`+blockHex(badRoot)+`"]`),
		req("submitblock", `["`+blockHex(badSig)+`"]`),
		req("sendrawtransaction", `["`+strings.Repeat("00", 500)+`"]`),
		`[` + req("submitblock", `["00"]`) + `,` + req("submitblock", `["`+blockHex(badRoot)+`"]`) + `,{"bad":1}]`,
		`{"jsonrpc":"2.0","method":"submitblock","params":["` + blockHex(badRoot) + `"]}`, // a notification
		req("submitblock", `["`+strings.Repeat("00", 5<<20)+`"]`),                         // beyond the body limit
	}
	for i, body := range bodies {
		status, resp := e.post(body)
		if status != http.StatusOK && status != http.StatusNoContent && status != http.StatusBadRequest &&
			status != http.StatusRequestEntityTooLarge {
			t.Errorf("body %d: HTTP %d %s", i, status, resp)
		}
		if strings.Contains(string(resp), `"result"`) {
			t.Errorf("body %d: a malformed request succeeded: %.200s", i, resp)
		}
		if s := e.state(); s != before {
			t.Fatalf("body %d changed the state: %+v → %+v", i, before, s)
		}
	}
	// GET is refused.
	resp, err := http.Get(e.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: HTTP %d", resp.StatusCode)
	}
	if s := e.state(); s != before {
		t.Fatalf("state changed: %+v → %+v", before, s)
	}
	// The good block is still accepted: the broken copies were not remembered against it.
	if err := e.client.SubmitBlock(context.Background(), goodHex); err != nil {
		t.Fatalf("good block after the broken ones: %v", err)
	}
	if e.node.Chain().Tip().Hash != good.Hash() {
		t.Fatal("the good block is not the tip")
	}
	// The block with a broken signature is forgotten: fixing it makes it acceptable later.
	if e.node.Chain().NodeByHash(badSig.Hash()) != nil {
		t.Fatal("the block with a broken signature is remembered")
	}
}

// flipLast changes an address's last character, breaking its checksum.
func flipLast(s string) string {
	c := byte('q')
	if s[len(s)-1] == c {
		c = 'p'
	}
	return s[:len(s)-1] + string(c)
}

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
	e.wantReason(mempool.ErrFeeTooLow, "sendrawtransaction", txHex(e.transfer(in, uint64(size)-1, 1)))
	first := e.transfer(in, uint64(size), 1)
	e.send(first)
	e.wantReason(mempool.ErrAlreadyInMempool, "sendrawtransaction", txHex(first))
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
	if !errors.Is(err, mempool.ErrAlreadyInChain) || errors.Is(err, mempool.ErrAlreadyInMempool) || errors.Is(err, consensus.ErrMissingInputs) {
		t.Fatalf("SendRawTransaction of a mined transaction: %v", err)
	}

	// Blocks: stale template, bad proof of work, a greedy coinbase, a duplicate.
	tmpl, err := e.client.GetBlockTemplate(context.Background(), e.addr)
	if err != nil {
		t.Fatal(err)
	}
	stale := blockFromTemplate(t, tmpl)
	if err := types.SolveBlock(stale, 1<<24); err != nil {
		t.Fatal(err)
	}
	old := e.mineBlock()
	e.wantReason(reason.StaleTemplate, "submitblock", blockHex(stale))
	e.wantReason(consensus.ErrDuplicateBlock, "submitblock", blockHex(old))
	b := e.block()
	for consensus.CheckProofOfWork(&b.Header, b.Hash(), e.net.PowLimit) == nil {
		b.Header.Nonce++
	}
	e.wantReason(consensus.ErrBadProofOfWork, "submitblock", blockHex(b))
	greedy := func(more uint64) string {
		g := e.block()
		g.Transactions[0].Outputs[0].Value += more
		g.Header.MerkleRoot = types.MerkleRoot(g.TxIDs())
		if err := types.SolveBlock(g, 1<<24); err != nil {
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
