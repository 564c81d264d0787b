// Package daemon runs the faucet (coin-faucetd) as lib/node runs coin-node: it opens the
// claim store and the event log in the data directory, connects to the node, starts the
// payout engine, the event source and the transaction journal's resender, and serves the
// HTTP API (with the MCP door and the Web pages) until its context ends, then stops them in
// order. cmd/coin-faucetd holds the flags and hands their values over in a Config.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/chainfollow"
	"github.com/cointoolkit/coin/lib/faucet"
	"github.com/cointoolkit/coin/lib/faucet/events"
	"github.com/cointoolkit/coin/lib/faucet/httpapi"
	"github.com/cointoolkit/coin/lib/faucet/payout"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/logging"
	"github.com/cointoolkit/coin/lib/metrics"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
	"golang.org/x/net/netutil"
)

// Config is a faucet daemon's configuration.
type Config struct {
	// Faucet configures the service; Run sets its Net, Node, Engine, Claims and Log. HTTP
	// configures its HTTP door (lib/faucet/httpapi); Run sets its Events and AccessLog.
	Faucet faucet.Config
	HTTP   httpapi.Options
	Net    *params.Network
	// RPCURL is the node's RPC URL, without credentials (it is logged); RPCOptions carry
	// them.
	RPCURL     string
	RPCOptions []jsonrpc.ClientOption
	// Keys are the faucet's funds (Run does not wipe them).
	Keys []wallet.Key
	// DataDir holds the claim store (db) and the event log (events).
	DataDir string
	// Listen is the HTTP address; at most MaxConnections connections are open at once.
	Listen         string
	MaxConnections int
	// MaxBatch and MaxChainDepth bound the engine's transactions (faucet.EngineConfig).
	MaxBatch, MaxChainDepth int
	// StreamMaxAge ends an event stream after this long (events.HandlerConfig.MaxAge).
	StreamMaxAge time.Duration
	// MetricsBind serves Prometheus metrics there; "": none.
	MetricsBind string
	// Logger gets the daemon's records; AccessLog one per request (nil: none).
	Logger, AccessLog *slog.Logger
}

// DefaultMaxConnections bounds the HTTP connections open at once (protocol §14): enough for
// a busy faucet's clients with keep-alive, far below the process's file limit.
const DefaultMaxConnections = 512

// Run runs the faucet until ctx ends (then it shuts down cleanly and returns nil) or its
// HTTP server fails.
func Run(ctx context.Context, cfg Config) error {
	if len(cfg.Keys) == 0 {
		return errors.New("the faucet needs funds: no keys")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	daemonLog := logger.With(logging.SubsystemKey, "faucet")
	claims, err := payout.OpenClaimStore(filepath.Join(cfg.DataDir, "db"), cfg.Faucet.Cooldown)
	if err != nil {
		return err
	}
	defer claims.Close()
	// The agent event log (GET /api/agent/events), apart from the claims.
	evStore, err := events.OpenStore(filepath.Join(cfg.DataDir, "events"), 0)
	if err != nil {
		return err
	}
	defer evStore.Close()
	hub := events.NewHub(evStore, 0)

	node := rpcapi.NewClient(cfg.RPCURL, append([]jsonrpc.ClientOption{jsonrpc.WithTimeout(30 * time.Second)}, cfg.RPCOptions...)...)
	defer node.Close()
	if err := checkNode(ctx, node, cfg.Net, cfg.RPCURL, daemonLog); err != nil {
		return err
	}

	// One follower of the node's chain (its push stream) feeds the engine and the event log.
	ownTxs := &ownTxNode{NodeClient: node}
	source, err := events.NewSource(events.SourceConfig{Node: ownTxs, Hub: hub, HRP: cfg.Net.HRP, Logger: logger})
	if err != nil {
		return err
	}
	chain := chainfollow.New(node, chainfollow.Config{Start: source.Position(), Mempool: true, PollInterval: 100 * time.Millisecond, Logger: logger})
	engine, err := payout.NewEngine(node, payout.EngineConfig{Net: cfg.Net, Keys: cfg.Keys, FeeRate: cfg.Faucet.FeeRate, Chain: chain,
		MaxBatch: cfg.MaxBatch, MaxChainDepth: cfg.MaxChainDepth, Journal: claims, Logger: logger})
	if err != nil {
		return err
	}
	fc, hc := cfg.Faucet, cfg.HTTP
	fc.Net, fc.Node, fc.Engine, fc.Claims, fc.Logger = cfg.Net, node, engine, claims, logger
	hc.AccessLog = cfg.AccessLog
	hc.Events = hub.Handler(events.HandlerConfig{HRP: cfg.Net.HRP, MaxAge: cfg.StreamMaxAge,
		Replay: events.ReplayLimits{Client: func(r *http.Request) string { return httpapi.ClientNetwork(r, hc.TrustedProxies) }}})
	srv, err := httpapi.NewServer(fc, hc)
	if err != nil {
		return err
	}
	fc = srv.Config()        // with its defaults
	ownTxs.svc = srv.Service // before the follower runs (below), the source's only caller
	chain.Subscribe(source.Apply)
	ln, err := listen(cfg.Listen, cfg.MaxConnections)
	if err != nil {
		return err
	}
	if !isLoopback(ln.Addr()) {
		daemonLog.Warn("--listen is not a loopback address: mnemonics travel in request bodies (send, derive, agent endpoints), "+
			"so put a TLS-terminating reverse proxy in front and set --trusted-proxies", "listen", ln.Addr().String())
	}
	handler := srv.Handler()
	if cfg.MetricsBind != "" {
		fm := httpapi.NewMetrics(srv)
		ms, err := metrics.Listen(cfg.MetricsBind, fm.Registry(), daemonLog)
		if err != nil {
			ln.Close()
			return err
		}
		defer ms.Close()
		go func() {
			if err := ms.Serve(); err != nil {
				daemonLog.Error("metrics server failed", "err", err)
			}
		}()
		daemonLog.Info("metrics server listening", "addr", "http://"+ms.Addr().String()+metrics.Path)
		handler = fm.Wrap(handler)
	}
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 30 * time.Second, MaxHeaderBytes: 16 << 10,
		ErrorLog: log.New(io.Discard, "", 0)}

	engineCtx, stopEngine := context.WithCancel(context.WithoutCancel(ctx))
	engineDone := make(chan struct{})
	go func() { engine.Run(engineCtx); close(engineDone) }()
	sourceDone := make(chan struct{})
	go func() { chain.Run(engineCtx); close(sourceDone) }()
	// The operations' transactions are journaled and sent again until mined.
	journalDone := make(chan struct{})
	go func() { srv.RunTxJournal(engineCtx, 0); close(journalDone) }()
	hs.RegisterOnShutdown(hub.Close) // end the event streams, which never go idle
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()
	daemonLog.Info("coin-faucetd started", "network", cfg.Net.Name, "address", cfg.Keys[0].Address, "amount", amount.Format(fc.Amount),
		"cooldown", fc.Cooldown, "claims_per_ip", limitText(fc.ClaimsPerClient), "budget_per_hour", limitText(fc.BudgetPerHour),
		"node", cfg.RPCURL, "listen", "http://"+ln.Addr().String())

	var runErr error
	select {
	case <-ctx.Done():
		daemonLog.Info("coin-faucetd shutting down")
	case err := <-serveErr:
		runErr = fmt.Errorf("http server: %w", err)
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = hs.Shutdown(shutCtx)
	stopEngine()
	<-engineDone
	<-sourceDone
	<-journalDone
	return runErr
}

// limitText is a limit for the start-up log line.
func limitText(v int) string {
	if v <= 0 {
		return "off"
	}
	return strconv.Itoa(v)
}

// listen opens the HTTP listener, accepting at most maxConns connections at once (the
// others wait in the kernel's backlog until one closes).
func listen(addr string, maxConns int) (net.Listener, error) {
	if maxConns < 1 {
		return nil, errors.New("--max-connections must be at least 1")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	return netutil.LimitListener(ln, maxConns), nil
}

// isLoopback reports whether a listener's address is a loopback address (an unspecified
// address such as 0.0.0.0 listens on every interface: not loopback).
func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// checkNode warns when the node is unreachable (the faucet keeps trying) and refuses a
// node of another network.
func checkNode(ctx context.Context, node *rpcapi.Client, n *params.Network, rpcURL string, logger *slog.Logger) error {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, err := node.GetBlockchainInfo(cctx)
	if err != nil {
		logger.Warn("the node does not answer; claims fail until it does", "node", rpcURL, "err", err)
		return nil
	}
	if info.Network != "" && info.Network != n.Name {
		return fmt.Errorf("the node at %s is on %s, not %s (check --rpc and --network)", rpcURL, info.Network, n.Name)
	}
	return nil
}

// ownTxNode is the node as the agent event source asks it: the faucet's own transactions,
// while journaled, come from the journal (faucet.Service.JournaledTx) instead of a
// getrawtransaction each. With the faucet's agent endpoints busy they are most of the
// mempool the source reads, and each call cost the node and the faucet CPU the endpoints'
// callers wait for.
type ownTxNode struct {
	events.NodeClient
	svc *faucet.Service
}

func (n *ownTxNode) GetRawTransaction(ctx context.Context, txid string) (*types.Transaction, error) {
	if id, err := types.ParseHash(txid); err == nil && n.svc != nil {
		if tx, ok := n.svc.JournaledTx(id); ok {
			return tx, nil
		}
	}
	return n.NodeClient.GetRawTransaction(ctx, txid)
}
