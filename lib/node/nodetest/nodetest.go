// Package nodetest starts real regtest nodes inside a test process, for the packages whose
// tests talk to a node over RPC: the node's own chain, mempool and rules, not a double.
//
// New serves the node's RPC methods through an httptest server without running the node
// (no P2P, no background loops): enough for a client that only calls methods. Run runs the
// whole node, RPC listener and all, as coin-node does.
package nodetest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/node"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/rpcserver"
)

// Config is a regtest node's configuration in a temporary data directory, quiet, changed by
// adjust when it is not nil.
func Config(t testing.TB, adjust func(*node.Config)) node.Config {
	t.Helper()
	cfg := node.Config{Network: params.Regtest, DataDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)}
	if adjust != nil {
		adjust(&cfg)
	}
	return cfg
}

// New opens a node of cfg and serves its RPC methods over an httptest server; the client
// talks to it. Both close when the test ends.
func New(t testing.TB, cfg node.Config) (*node.Node, *rpcapi.Client) {
	t.Helper()
	n, err := node.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(n, cfg.Logger))
	c := rpcapi.NewClient(srv.URL, jsonrpc.WithTimeout(time.Minute))
	t.Cleanup(func() {
		c.Close()
		srv.Close()
		n.Chain().Close()
	})
	return n, c
}

// Handler serves n's RPC methods over HTTP, as New's server does, logging to logger.
func Handler(n *node.Node, logger *slog.Logger) http.Handler {
	s := jsonrpc.NewServer(jsonrpc.Options{Logger: logger, MaxConcurrent: 64})
	rpcserver.Register(s, n.Chain(), n.Mempool(), n)
	return s
}

// Run runs a node of cfg (its RPC on a free loopback port unless cfg names one) until the
// test ends, and returns it with its RPC URL once the RPC answers.
func Run(t testing.TB, cfg node.Config) (*node.Node, string) {
	t.Helper()
	if cfg.RPCBind == "" {
		cfg.RPCBind = fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t))
	}
	if cfg.MinFreeDiskPercent == 0 {
		cfg.MinFreeDiskPercent = 1e-9 // a full test machine's disk is not the node's concern here
	}
	n, err := node.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	url := "http://" + cfg.RPCBind
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("node: %v", err)
		}
	})
	c := rpcapi.NewClient(url, jsonrpc.WithTimeout(time.Minute))
	defer c.Close()
	for i := 0; ; i++ { // until the RPC listens
		if _, err := c.GetBlockCount(ctx); err == nil {
			break
		} else if i == 250 {
			t.Fatalf("the node's RPC does not answer: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return n, url
}
