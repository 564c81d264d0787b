package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/cointoolkit/coin/lib/rpcauth"
	"github.com/cointoolkit/coin/lib/rpcserver"
)

// The RPC server's flags: protocol §11's "who may call". lib/node serves it.

// rpcFlags are the options of the JSON-RPC server besides --rpc-bind, with its notification
// stream's bound and --blocknotify, the other notification (docs/operations.md).
func rpcFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "rpc-auth", EnvVars: []string{"COIN_RPC_AUTH"},
			Usage: "accept HTTP Basic credentials `USER:SALT$HASH` (Bitcoin Core's rpcauth form; make one with 'coin-cli rpcauth USER'; quote it with single quotes); repeatable. Required when --rpc-bind is not a loopback address"},
		&cli.StringSliceFlag{Name: "rpc-allow-origin", EnvVars: []string{"COIN_RPC_ALLOW_ORIGIN"},
			Usage: "serve browser requests from this `ORIGIN` (scheme://host[:port]); repeatable. Requests with any other Origin header get 403"},
		&cli.StringSliceFlag{Name: "rpc-allow-host", EnvVars: []string{"COIN_RPC_ALLOW_HOST"},
			Usage: "accept `NAME` as the Host of RPC requests, besides the bind address, localhost, 127.0.0.1 and [::1]; repeatable. For clients that call the node by a private network's DNS name (a Kubernetes Service's); any other name gets 403 (DNS rebinding, docs/security.md)"},
		&cli.IntFlag{Name: "rpc-max-connections", Value: rpcserver.DefaultMaxConnections, EnvVars: []string{"COIN_RPC_MAX_CONNECTIONS"},
			Usage: "`N` RPC connections open at once at most; more wait in the accept queue"},
		&cli.IntFlag{Name: "rpc-max-streams", Value: rpcserver.DefaultMaxStreams, EnvVars: []string{"COIN_RPC_MAX_STREAMS"},
			Usage: "`N` notification streams (GET /stream on the RPC listener) open at once at most; more get 503. Each holds one of the --rpc-max-connections"},
		&cli.StringFlag{Name: "blocknotify", EnvVars: []string{"COIN_BLOCKNOTIFY"},
			Usage: "run `CMD` each time the tip changes, every %s replaced by the new tip's hash, as Bitcoin Core's -blocknotify: through /bin/sh -c (the command is yours; only the hash is inserted), at most 4 at once, each killed after 5 minutes; tips that find 64 runs waiting are skipped with a warning"},
	}
}

// rpcConfig is the RPC server of --rpc-bind with the flags' access rules, or nil when RPC is
// off.
func rpcConfig(c *cli.Context) (*rpcserver.HTTPConfig, error) {
	bind := c.String("rpc-bind")
	if bind == "" {
		return nil, nil
	}
	auth, err := rpcauth.ParseAll(c.StringSlice("rpc-auth"))
	if err != nil {
		return nil, fmt.Errorf("--rpc-auth: %w", err)
	}
	if c.Int("rpc-max-streams") < 1 {
		return nil, fmt.Errorf("--rpc-max-streams %d: want at least 1", c.Int("rpc-max-streams"))
	}
	if c.Int("rpc-max-connections") < 1 {
		return nil, fmt.Errorf("--rpc-max-connections %d: want at least 1", c.Int("rpc-max-connections"))
	}
	for _, o := range c.StringSlice("rpc-allow-origin") {
		if _, err := rpcserver.ParseOrigin(o); err != nil {
			return nil, fmt.Errorf("--rpc-allow-origin: %w", err)
		}
	}
	for _, h := range c.StringSlice("rpc-allow-host") {
		if _, err := rpcserver.ParseAllowHost(h); err != nil {
			return nil, fmt.Errorf("--rpc-allow-host: %w", err)
		}
	}
	return &rpcserver.HTTPConfig{Bind: bind, AllowOrigins: c.StringSlice("rpc-allow-origin"), AllowHosts: c.StringSlice("rpc-allow-host"),
		Auth: auth, MaxConnections: c.Int("rpc-max-connections"), MaxStreams: c.Int("rpc-max-streams")}, nil
}

// noAuthError explains a non-loopback --rpc-bind without credentials.
func noAuthError(bind string) error {
	return fmt.Errorf("--rpc-bind %s is not a loopback address: anyone who can reach it could control this node.\n"+
		"Require credentials with --rpc-auth USER:SALT$HASH (make one with 'coin-cli rpcauth USER'), or bind 127.0.0.1", bind)
}
