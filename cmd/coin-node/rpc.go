package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/node"
	"github.com/cointoolkit/coin/lib/rpcauth"
	"github.com/cointoolkit/coin/lib/rpcserver"
)

// The RPC server: the flags of protocol §11's "who may call", the listener and its lifetime
// around node.Run. The node itself runs without RPC (node.Config.RPCBind stays empty).

// rpcFlags are the options of the JSON-RPC server besides --rpc-bind.
func rpcFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "rpc-auth", EnvVars: []string{"COIN_RPC_AUTH"},
			Usage: "accept HTTP Basic credentials `USER:SALT$HASH` (Bitcoin Core's rpcauth form; make one with 'coin-cli rpcauth USER'; quote it with single quotes); repeatable. Required when --rpc-bind is not a loopback address"},
		&cli.StringSliceFlag{Name: "rpc-allow-origin", EnvVars: []string{"COIN_RPC_ALLOW_ORIGIN"},
			Usage: "serve browser requests from this `ORIGIN` (scheme://host[:port]); repeatable. Requests with any other Origin header get 403"},
		&cli.IntFlag{Name: "rpc-max-connections", Value: rpcserver.DefaultMaxConnections, EnvVars: []string{"COIN_RPC_MAX_CONNECTIONS"},
			Usage: "`N` RPC connections open at once at most; more wait in the accept queue"},
	}
}

// listenRPC opens the RPC listener of --rpc-bind with the flags' access rules, or returns nil
// when RPC is off.
func listenRPC(c *cli.Context, logger *slog.Logger) (*rpcserver.HTTPServer, error) {
	bind := c.String("rpc-bind")
	if bind == "" {
		return nil, nil
	}
	auth, err := rpcauth.ParseAll(c.StringSlice("rpc-auth"))
	if err != nil {
		return nil, fmt.Errorf("--rpc-auth: %w", err)
	}
	if c.Int("rpc-max-connections") < 1 {
		return nil, fmt.Errorf("--rpc-max-connections %d: want at least 1", c.Int("rpc-max-connections"))
	}
	for _, o := range c.StringSlice("rpc-allow-origin") {
		if _, err := rpcserver.ParseOrigin(o); err != nil {
			return nil, fmt.Errorf("--rpc-allow-origin: %w", err)
		}
	}
	hs, err := rpcserver.Listen(rpcserver.HTTPConfig{Bind: bind, AllowOrigins: c.StringSlice("rpc-allow-origin"),
		Auth: auth, MaxConnections: c.Int("rpc-max-connections"), Logger: logger})
	if errors.Is(err, rpcserver.ErrNoAuth) {
		return nil, fmt.Errorf("--rpc-bind %s is not a loopback address: anyone who can reach it could control this node.\n"+
			"Require credentials with --rpc-auth USER:SALT$HASH (make one with 'coin-cli rpcauth USER'), or bind 127.0.0.1", bind)
	}
	if err != nil {
		return nil, fmt.Errorf("rpc: listen on %s: %w", bind, err)
	}
	return hs, nil
}

// rpcBackend is the node as the RPC handlers see it, except that the "stop" method asks
// runWithRPC to stop, which closes the RPC server before the node closes its chain.
type rpcBackend struct {
	*node.Node
	stop func()
}

var _ rpcserver.Backend = rpcBackend{}

func (b rpcBackend) RequestStop() { b.stop() }

// rpcShutdownTimeout bounds the wait for calls in progress at shutdown.
const rpcShutdownTimeout = 5 * time.Second

// runWithRPC serves RPC on hs while the node runs, until ctx ends (a signal), the "stop" method
// or the node stops by itself. The RPC server stops first, so no call reads a closed chain.
func runWithRPC(ctx context.Context, n *node.Node, hs *rpcserver.HTTPServer, logger *slog.Logger) error {
	stopReq := make(chan struct{})
	var once sync.Once
	requestStop := func() { once.Do(func() { close(stopReq) }) }
	rpc := jsonrpc.NewServer(jsonrpc.Options{Logger: logger, MaxConcurrent: 64})
	rpcserver.Register(rpc, n.Chain(), n.Mempool(), rpcBackend{Node: n, stop: requestStop})
	go func() {
		if err := hs.Serve(rpc); err != nil {
			logger.Error("rpc server failed", "err", err)
			requestStop()
		}
	}()
	logger.Info("rpc server listening", "addr", hs.Addr().String())

	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- n.Run(runCtx) }()
	shutdown := func() {
		sctx, scancel := context.WithTimeout(context.Background(), rpcShutdownTimeout)
		defer scancel()
		hs.Shutdown(sctx)
	}
	select {
	case <-ctx.Done():
		shutdown()
		cancel() // the node logs the reason "signal"
	case <-stopReq:
		shutdown()
		n.RequestStop() // the node logs the reason "stop requested"
	case err := <-done: // the node stopped by itself (disk space low, P2P failure)
		shutdown()
		return err
	}
	return <-done
}
