package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/faucet"
	"github.com/cointoolkit/coin/lib/faucet/internal/faucettest"
	"github.com/cointoolkit/coin/lib/faucet/payout"
	"github.com/cointoolkit/coin/lib/logging"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

const faucetMnemonic = "legal winner thank year wave sausage worth useful legal winner thank yellow"

var testNet = params.Regtest

type harness struct {
	// rn is the regtest node (lib/faucet/internal/faucettest); cn wraps it for the faucet,
	// counting its sends and injecting the failures a node does not make on demand.
	rn *faucettest.Node
	cn *countingNode
	// backend is the node the engine and the service use (cn); sends counts the
	// transactions sent to it.
	backend faucet.NodeClient
	sends   func() int
	// mine mines n blocks, confirming the mempool; pooled is a transaction of the mempool
	// (nil when it is not there).
	mine   func(n int)
	pooled func(id string) *types.Transaction
	key    wallet.Key
	claims *payout.ClaimStore
	engine *payout.Engine
	server *Server
	http   *httptest.Server
	log    *proctest.Buffer
	cancel context.CancelFunc
	done   chan struct{}
	dir    string
	ecfg   payout.EngineConfig
	scfg   Config
}

// Config is a harness's configuration of the faucet: the Service's and its HTTP door's.
type Config struct {
	faucet.Config
	Options
}

type harnessOpt func(*payout.EngineConfig, *Config)

func faucetKey(t testing.TB) wallet.Key {
	ring, err := wallet.KeyringFromMnemonic(faucetMnemonic, "", testNet, 0)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ring.Key(0)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// newHarness starts an engine and a server over a regtest node on which the faucet's key
// holds coins mature coinbases (50 COIN each).
func newHarness(t testing.TB, coins int, opts ...harnessOpt) *harness {
	t.Helper()
	h, _, _ := newRegtestHarness(t, coins, opts...)
	return h
}

// configure sets h's engine and server configuration, with opts, and starts them on the
// claim store in dir.
func (h *harness) configure(t testing.TB, dir string, opts ...harnessOpt) {
	t.Helper()
	ecfg := payout.EngineConfig{Net: testNet, Keys: []wallet.Key{h.key}, PollInterval: 20 * time.Millisecond,
		Logger: logging.New(h.log, slog.LevelDebug)}
	// protocol §14's per-client limits are off (every test client is 127.0.0.1) unless a test
	// turns them on.
	scfg := Config{Config: faucet.Config{Net: testNet, Node: h.backend, Cooldown: time.Hour,
		RequestRate: -1, ClaimsPerClient: -1, BudgetPerHour: -1, Logger: logging.New(h.log, slog.LevelDebug)},
		Options: Options{AccessLog: logging.New(h.log, slog.LevelDebug)}}
	for _, o := range opts {
		o(&ecfg, &scfg)
	}
	h.dir, h.ecfg, h.scfg = dir, ecfg, scfg
	h.start(t)
	t.Cleanup(h.stop)
}

// start opens the claim store in h.dir and starts an engine and a server on it.
func (h *harness) start(t testing.TB) {
	t.Helper()
	var err error
	h.claims, err = payout.OpenClaimStore(h.dir, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ecfg, scfg := h.ecfg, h.scfg
	ecfg.Journal, scfg.Claims = h.claims, h.claims
	h.engine, err = payout.NewEngine(h.backend, ecfg)
	if err != nil {
		t.Fatal(err)
	}
	scfg.Engine = h.engine
	h.server, err = NewServer(scfg.Config, scfg.Options)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.done = make(chan struct{})
	go func() { h.engine.Run(ctx); close(h.done) }()
	h.http = httptest.NewServer(h.server.Handler())
}

// stop stops the server and the engine and closes the claim store (as a crash would leave
// them: nothing more is written).
func (h *harness) stop() {
	if h.http == nil {
		return
	}
	h.http.Close()
	h.cancel()
	<-h.done
	h.claims.Close()
	h.http = nil
}

// restart is stop and start: the faucet's process restarted on its data directory, with
// the same node.
func (h *harness) restart(t testing.TB) {
	t.Helper()
	h.stop()
	h.start(t)
}

type response struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    string
}

func (h *harness) do(t testing.TB, method, path, body string) response {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.http.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := response{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}
	if err := json.Unmarshal(raw, &out.Body); err != nil && method != http.MethodHead {
		t.Fatalf("%s %s: response is not a JSON object: %q", method, path, raw)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: Content-Type %q", method, path, ct)
	}
	return out
}

// errCode is the error code of an error response.
func (r response) errCode() string {
	e, _ := r.Body["error"].(map[string]any)
	c, _ := e["code"].(string)
	if m, _ := e["message"].(string); c == "" || m == "" {
		return "<not an error body: " + r.Raw + ">"
	}
	return c
}

func newAddress(t testing.TB) (string, types.Hash) {
	t.Helper()
	_, a, err := wallet.NewMnemonic(12, testNet)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := wallet.DecodeAddress(a, testNet)
	return a, h
}

// reject is the error rpcapi.Client returns for the node's domain error of kind with
// message msg.
func reject(kind reason.Kind, msg string) error {
	return rpcapi.DecodeError(rpcapi.DomainError(kind, msg))
}
