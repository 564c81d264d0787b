package rpcserver_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/node"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/rpcserver"
	"github.com/cointoolkit/coin/lib/types"
)

var (
	testWallet  = chaingen.WalletFromSeed("test", bytes.Repeat([]byte{7}, 32))
	otherWallet = chaingen.WalletFromSeed("other", bytes.Repeat([]byte{9}, 32))
	testKey     = testWallet.Key
	testPKH     = testWallet.PKH
	otherPKH    = otherWallet.PKH
)

// env is a real node (chain on LevelDB in a temporary directory, mempool) behind the JSON-RPC
// server on a loopback HTTP listener, with a typed client.
type env struct {
	t      testing.TB
	net    *params.Network
	node   *node.Node
	rpc    *jsonrpc.Server
	srv    *httptest.Server
	client *rpcapi.Client
	gen    *chaingen.Generator // builds the blocks (paying testPKH) and the transfers
	addr   string              // testPKH's address on the network
	coins  []coin              // confirmed, mature outputs paying testPKH not handed out yet
	fees   map[types.Hash]uint64
}

type coin struct {
	op    types.Outpoint
	value uint64
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func newEnv(t testing.TB, net *params.Network) *env {
	t.Helper()
	return newEnvWith(t, net, nil)
}

// newEnvWith is newEnv with the node's configuration changed by adjust.
func newEnvWith(t testing.TB, net *params.Network, adjust func(*node.Config)) *env {
	t.Helper()
	cfg := node.Config{Network: net, DataDir: t.TempDir(), Logger: quietLogger(), Values: consensus.NominalValue{}}
	if adjust != nil {
		adjust(&cfg)
	}
	n, err := node.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := jsonrpc.NewServer(jsonrpc.Options{Logger: quietLogger(), MaxConcurrent: 64})
	rpcserver.Register(s, n.Chain(), n.Mempool(), n)
	srv := httptest.NewServer(s)
	c := rpcapi.NewClient(srv.URL, jsonrpc.WithTimeout(time.Minute))
	t.Cleanup(func() {
		c.Close()
		srv.Close()
		n.Chain().Close()
	})
	addr, err := keys.EncodeAddress(net.HRP, keys.PubKeyHash(testPKH))
	if err != nil {
		t.Fatal(err)
	}
	g := chaingen.New(t, net)
	g.SetMiner(testWallet)
	g.AddWallet(otherWallet)
	return &env{t: t, net: net, node: n, rpc: s, srv: srv, client: c, gen: g, addr: addr, fees: map[types.Hash]uint64{}}
}

// newFundedEnv is a regtest node with 101 blocks paying testPKH and a confirmed fan-out of
// the first coinbase into 50 outputs of 1 COIN less the fee each.
func newFundedEnv(t testing.TB) *env {
	t.Helper()
	e := newEnv(t, params.Regtest)
	var first *types.Block
	for i := 0; i < 101; i++ {
		b := e.mineBlock()
		if first == nil {
			first = b
		}
	}
	cb := first.Transactions[0]
	fan := e.transfer([]coin{{types.Outpoint{TxID: cb.TxID()}, cb.Outputs[0].Value}}, 100_000, 50)
	e.mineBlock(fan)
	for i := range fan.Outputs {
		e.coins = append(e.coins, out(fan, i))
	}
	return e
}

// block builds a solved block on the tip, timestamped now (or at the earliest time allowed),
// paying testPKH subsidy + fees of txs.
func (e *env) block(txs ...*types.Transaction) *types.Block {
	e.t.Helper()
	next := e.node.Chain().NextBlock()
	ts := max(uint64(time.Now().Unix()), next.MinTimestamp)
	return e.gen.NextOn("", chaingen.Template{Parent: next.Parent, Height: next.Height, Target: next.Target,
		Timestamp: ts}, txs)
}

// mineBlock submits a block with txs through the node's Backend.
func (e *env) mineBlock(txs ...*types.Transaction) *types.Block {
	e.t.Helper()
	b := e.block(txs...)
	if _, err := e.node.SubmitBlock(context.Background(), b); err != nil {
		e.t.Fatalf("SubmitBlock: %v", err)
	}
	return b
}

func (e *env) take(n int) []coin {
	e.t.Helper()
	if len(e.coins) < n {
		e.t.Fatalf("%d coins left, want %d", len(e.coins), n)
	}
	c := e.coins[:n:n]
	e.coins = e.coins[n:]
	return c
}

// spend starts a transaction of ins signed with testKey (whoever the outputs pay).
func (e *env) spend(ins []coin) *chaingen.TxBuilder {
	outs := make([]chaingen.Output, len(ins))
	for i, c := range ins {
		outs[i] = chaingen.Output{Outpoint: c.op, Value: c.value}
	}
	return e.gen.Spend(outs...).SignedBy(testWallet)
}

// transfer spends ins to testPKH in outs outputs leaving fee, signed with testKey.
func (e *env) transfer(ins []coin, fee uint64, outs int) *types.Transaction {
	e.t.Helper()
	tx := e.spend(ins).Fee(fee).Change(testPKH, outs).Tx()
	e.fees[tx.TxID()] = fee
	return tx
}

// atRate is a transfer paying exactly rate subunits per byte.
func (e *env) atRate(ins []coin, rate uint64, outs int) *types.Transaction {
	e.t.Helper()
	tx := e.spend(ins).FeeRate(rate).Change(testPKH, outs).Tx()
	e.fees[tx.TxID()], _ = e.gen.Fee(tx)
	return tx
}

func out(tx *types.Transaction, i int) coin {
	return coin{types.Outpoint{TxID: tx.TxID(), Index: uint32(i)}, tx.Outputs[i].Value}
}

func txHex(tx *types.Transaction) string { return hex.EncodeToString(tx.Bytes()) }

func blockHex(b *types.Block) string { return hex.EncodeToString(b.Bytes()) }

// send submits tx over RPC and expects success.
func (e *env) send(txs ...*types.Transaction) {
	e.t.Helper()
	for _, tx := range txs {
		id, err := e.client.SendRawTransaction(context.Background(), txHex(tx))
		if err != nil {
			e.t.Fatalf("sendrawtransaction: %v", err)
		}
		if id != tx.TxID().String() {
			e.t.Fatalf("sendrawtransaction returned %s, want %s", id, tx.TxID())
		}
	}
}

// call makes a call with any params and returns the raw result or the *jsonrpc.Error.
func (e *env) call(method string, params ...any) (json.RawMessage, *jsonrpc.Error) {
	e.t.Helper()
	if params == nil {
		params = []any{}
	}
	var raw json.RawMessage
	err := e.client.Call(context.Background(), method, params, &raw)
	if err == nil {
		return raw, nil
	}
	var re *jsonrpc.Error
	if !errors.As(err, &re) {
		e.t.Fatalf("%s: transport error: %v", method, err)
	}
	return nil, re
}

// mustCall makes a call that must succeed.
func (e *env) mustCall(method string, params ...any) json.RawMessage {
	e.t.Helper()
	raw, err := e.call(method, params...)
	if err != nil {
		e.t.Fatalf("%s%v: %v", method, params, err)
	}
	return raw
}

// wantError makes a call that must fail with code and a message starting with prefix (or
// equal to it when exact).
func (e *env) wantError(code int, prefix string, exact bool, method string, params ...any) *jsonrpc.Error {
	e.t.Helper()
	_, err := e.call(method, params...)
	if err == nil {
		e.t.Fatalf("%s succeeded, want error %d %q", method, code, prefix)
	}
	if err.Code != code {
		e.t.Fatalf("%s: error %d %q, want code %d", method, err.Code, err.Message, code)
	}
	if exact && err.Message != prefix || !exact && !strings.HasPrefix(err.Message, prefix) {
		e.t.Fatalf("%s: message %q, want %s %q", method, err.Message, map[bool]string{true: "exactly", false: "prefix"}[exact], prefix)
	}
	return err
}

// post sends a raw HTTP body and returns status and body.
func (e *env) post(body string) (int, []byte) {
	e.t.Helper()
	resp, err := http.Post(e.srv.URL, "application/json", strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.StatusCode, data
}

// state is what must not change when a request fails.
type state struct {
	Tip     string
	Height  uint64
	UtxoSet rpcapi.TxOutSetInfo
	Mempool rpcapi.MempoolInfo
}

func (e *env) state() state {
	e.t.Helper()
	var s state
	tip := e.node.Chain().Tip()
	s.Tip, s.Height = tip.Hash.String(), tip.Height
	if err := json.Unmarshal(e.mustCall("gettxoutsetinfo"), &s.UtxoSet); err != nil {
		e.t.Fatal(err)
	}
	if err := json.Unmarshal(e.mustCall("getmempoolinfo"), &s.Mempool); err != nil {
		e.t.Fatal(err)
	}
	return s
}

// decodeObject decodes a JSON object keeping numbers as json.Number.
func decodeObject(t testing.TB, raw []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return m
}

func decodeArray(t testing.TB, raw []byte) []any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var a []any
	if err := d.Decode(&a); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return a
}

// JSON types of the spec tables. "coin" is a JSON number with exactly 8 decimals.
const (
	tString  = "string"
	tInteger = "integer"
	tNumber  = "number"
	tCoin    = "coin"
	tBool    = "boolean"
	tArray   = "array"
	tObject  = "object"
)

func jsonType(v any) string {
	switch x := v.(type) {
	case string:
		return tString
	case bool:
		return tBool
	case []any:
		return tArray
	case map[string]any:
		return tObject
	case json.Number:
		s := string(x)
		if !strings.ContainsAny(s, ".eE") {
			return tInteger
		}
		return tNumber
	case nil:
		return "null"
	}
	return "unknown"
}

// checkFields checks that obj has every field of spec with its JSON type.
func checkFields(t testing.TB, what string, obj map[string]any, spec map[string]string) {
	t.Helper()
	for name, want := range spec {
		v, ok := obj[name]
		if !ok {
			t.Errorf("%s: field %q missing (have %v)", what, name, keysOf(obj))
			continue
		}
		got := jsonType(v)
		switch want {
		case tCoin:
			n, isNum := v.(json.Number)
			s := string(n)
			dot := strings.IndexByte(s, '.')
			if !isNum || dot < 1 || len(s)-dot-1 != 8 || strings.ContainsAny(s, "eE-") {
				t.Errorf("%s: field %q = %v (%s), want a JSON number with 8 decimals", what, name, v, got)
			}
		case tNumber:
			if got != tNumber && got != tInteger {
				t.Errorf("%s: field %q is %s, want a number", what, name, got)
			}
		default:
			if got != want {
				t.Errorf("%s: field %q is %s (%v), want %s", what, name, got, v, want)
			}
		}
	}
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func isHash(v any) bool {
	s, ok := v.(string)
	if !ok || len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

func num(t testing.TB, v any) uint64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v is not a number", v)
	}
	var u uint64
	if err := json.Unmarshal([]byte(n), &u); err != nil {
		t.Fatalf("%v is not an unsigned integer: %v", v, err)
	}
	return u
}
