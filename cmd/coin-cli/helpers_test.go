package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/cliutil"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

func TestMain(m *testing.M) {
	// The tests choose every option themselves.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "COIN_") {
			os.Unsetenv(k)
		}
	}
	code := m.Run()
	cleanupBinary()
	os.Exit(code)
}

const (
	hash0 = "4940fcad1192befc425faacbdf27278cb5bef529c8b695261cec44dcb2cf00cc"
	addr1 = "tcoin1qexampleaddress"
)

// block0 is what the fake node returns for getblock hash0; its pretty-printed form is
// block0JSON.
var block0 = rpcapi.Block{Hash: hash0, Height: 0, Version: 1, PrevHash: strings.Repeat("0", 64),
	MerkleRoot: strings.Repeat("ab", 32), Timestamp: 1700000000, DifficultyTarget: 0x207fffff,
	Nonce: 0, TxCount: 1, Tx: []string{strings.Repeat("cd", 32)}, Confirmations: 1, Size: 200}

const block0JSON = `{
  "hash": "4940fcad1192befc425faacbdf27278cb5bef529c8b695261cec44dcb2cf00cc",
  "height": 0,
  "version": 1,
  "prev_hash": "0000000000000000000000000000000000000000000000000000000000000000",
  "merkle_root": "abababababababababababababababababababababababababababababababab",
  "timestamp": 1700000000,
  "difficulty_target": 545259519,
  "nonce": 0,
  "tx_count": 1,
  "tx": [
    "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"
  ],
  "confirmations": 1,
  "size": 200
}
`

var utxos = []rpcapi.UTXO{
	{TxID: "aa11", Index: 0, Value: 5000000000, BlockHeight: 1, IsCoinbase: true, ClusterID: "c1", PubKeyHash: "p1", EffectiveValue: 5000000000, Locked: true, Confirmations: 1},
	{TxID: "bb22", Index: 1, Value: 250, BlockHeight: 2, ClusterID: "c2", PubKeyHash: "p1", EffectiveValue: 249},
}

var mempoolUTXO = rpcapi.UTXO{TxID: "cc33", Index: 0, Value: 7, ClusterID: "c3", PubKeyHash: "p1", EffectiveValue: 7}

// mempoolUTXOJSON is how mempoolUTXO prints as the last element of an indented array.
const mempoolUTXOJSON = `  {
    "txid": "cc33",
    "index": 0,
    "value": 7,
    "block_height": 0,
    "is_coinbase": false,
    "cluster_id": "c3",
    "pubkey_hash": "p1",
    "effective_value": 7,
    "locked": false,
    "confirmations": 0
  }
]
`

// fakeNode serves a few methods with lib/jsonrpc's server. It is not the node: only enough
// to see coin-cli's requests and its handling of results and errors.
type fakeNode struct {
	*httptest.Server
	requests atomic.Int32 // HTTP requests received
	warmups  atomic.Int32 // calls of "warmingup" to answer with -28 before "ready"
}

func newFakeNode(t *testing.T) *fakeNode {
	t.Helper()
	srv := jsonrpc.NewServer(jsonrpc.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	f := &fakeNode{}
	specs := func(m string) []jsonrpc.ParamSpec {
		rm, ok := rpcapi.Lookup(m)
		if !ok {
			t.Fatalf("no method %s", m)
		}
		var ps []jsonrpc.ParamSpec
		for _, p := range rm.Params {
			ps = append(ps, jsonrpc.ParamSpec{Name: p.Name, Type: p.Type, Optional: p.Optional})
		}
		return ps
	}
	srv.Register(jsonrpc.Method{Name: "getblockcount", Handler: func(context.Context, jsonrpc.Params) (any, error) {
		return uint64(42), nil
	}})
	srv.Register(jsonrpc.Method{Name: "getblockhash", Params: specs("getblockhash"), Handler: func(_ context.Context, p jsonrpc.Params) (any, error) {
		h, err := p.Uint64(0)
		if err != nil {
			return nil, err
		}
		if h != 0 {
			return nil, jsonrpc.DomainError("block height out of range")
		}
		return hash0, nil
	}})
	srv.Register(jsonrpc.Method{Name: "getblock", Params: specs("getblock"), Handler: func(_ context.Context, p jsonrpc.Params) (any, error) {
		h, err := p.String(0)
		if err != nil {
			return nil, err
		}
		if h != hash0 {
			return nil, jsonrpc.DomainError("block not found")
		}
		return block0, nil
	}})
	srv.Register(jsonrpc.Method{Name: "getutxosbyaddress", Params: specs("getutxosbyaddress"), Handler: func(_ context.Context, p jsonrpc.Params) (any, error) {
		if _, err := p.String(0); err != nil {
			return nil, err
		}
		mem, err := p.OptBool(1, false)
		if err != nil {
			return nil, err
		}
		if mem {
			return append(append([]rpcapi.UTXO{}, utxos...), mempoolUTXO), nil
		}
		return utxos, nil
	}})
	srv.Register(jsonrpc.Method{Name: "generatetoaddress", Params: specs("generatetoaddress"), Handler: func(_ context.Context, p jsonrpc.Params) (any, error) {
		n, err := p.Uint64(0)
		if err != nil {
			return nil, err
		}
		out := []string{}
		for i := uint64(0); i < n; i++ {
			out = append(out, hash0)
		}
		return out, nil
	}})
	srv.Register(jsonrpc.Method{Name: "sendrawtransaction", Params: specs("sendrawtransaction"), Handler: func(_ context.Context, p jsonrpc.Params) (any, error) {
		b, err := p.Hex(0)
		if err != nil {
			return nil, err
		}
		return "txid-of-" + strings.ToUpper(hex.EncodeToString(b)), nil
	}})
	// Not in rpcapi.Methods: reached with "call".
	var anyParams []jsonrpc.ParamSpec
	for i := 0; i < 10; i++ {
		anyParams = append(anyParams, jsonrpc.ParamSpec{Name: fmt.Sprint("p", i), Optional: true})
	}
	srv.Register(jsonrpc.Method{Name: "echo", Params: anyParams, Handler: func(_ context.Context, p jsonrpc.Params) (any, error) {
		out := make([]json.RawMessage, len(p))
		for i, v := range p {
			out[i] = append(json.RawMessage(nil), v...)
		}
		return out, nil
	}})
	srv.Register(jsonrpc.Method{Name: "nothing", Handler: func(context.Context, jsonrpc.Params) (any, error) {
		return nil, nil
	}})
	srv.Register(jsonrpc.Method{Name: "slow", Handler: func(ctx context.Context, _ jsonrpc.Params) (any, error) {
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
		}
		return "late", nil
	}})
	srv.Register(jsonrpc.Method{Name: "warmingup", Handler: func(context.Context, jsonrpc.Params) (any, error) {
		if f.warmups.Add(-1) >= 0 {
			return nil, jsonrpc.NewError(codeInWarmup, "Loading block index...")
		}
		return "ready", nil
	}})
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// result is what a run of coin-cli printed and its exit status.
type result struct {
	stdout, stderr string
	code           int
}

// runApp runs newApp() in the process with stdin and args, and renders its error the way
// cliutil.Exit does.
func runApp(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	app := newApp()
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter, app.Reader = &out, &errOut, strings.NewReader(stdin)
	err := cliutil.Run(app, append([]string{appName}, args...))
	code, msg := exitStatus(err)
	return result{stdout: out.String(), stderr: errOut.String() + msg, code: code}
}

// exitStatus is what cliutil.Exit prints and returns for err.
func exitStatus(err error) (int, string) {
	if err == nil {
		return 0, ""
	}
	var ee *cliutil.ExitError
	if errors.As(err, &ee) {
		return ee.Code, strings.TrimRight(ee.Message, "\n") + "\n"
	}
	return 1, "error: " + err.Error() + "\n"
}

// closedURL is the URL of a local port nothing listens on.
func closedURL() string {
	srv := httptest.NewServer(nil)
	u := srv.URL
	srv.Close()
	return u
}
