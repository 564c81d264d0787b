package main

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/cliutil"
	"github.com/cointoolkit/coin/lib/logging"
	"github.com/cointoolkit/coin/lib/node"
	"github.com/cointoolkit/coin/lib/p2p"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcserver"
	"github.com/urfave/cli/v2"
)

func newApp() *cli.App {
	return cliutil.Conventions(&cli.App{
		Name:  "coin-node",
		Usage: "run a full node of the COIN network",
		Description: `coin-node keeps the UTXO set and the chain's indexes in <data-dir>/db (LevelDB), the
blocks in <data-dir>/db/blocks (blk*.dat and rev*.dat files) and a mempool (saved to
<data-dir>/mempool.dat), talks to peers on the P2P port and, when --rpc-bind is given, serves the JSON-RPC
interface that coin-cli, coin-miner, coin-wallet and coin-faucetd use.

Examples:
   coin-node --network regtest --rpc-bind 127.0.0.1:38332
   coin-node --network testnet --rpc-bind 127.0.0.1:28332 --connect seed.example:28333
   coin-node --network regtest --rpc-bind 127.0.0.1:38332 --addnode 127.0.0.1:38343 --seednode 127.0.0.1:38353
   COIN_NETWORK=testnet COIN_RPC_BIND=127.0.0.1:28332 coin-node

Finding peers (docs/p2p.md): --connect dials only the peers it names; --addnode keeps a
peer connected besides up to --max-peers others, drawn from the addresses the node learns
(one per network group: IPv4 /16, IPv6 /32); --seednode asks a peer for addresses and
leaves; the network's DNS seeds are asked when nothing else is known (--dnsseed=false:
never). Known addresses are kept in <data-dir>/peers.json.

Every flag can also be set with the environment variable shown in its help.
The data directory holds db/, peers.json (known peer addresses), banlist.json (setban's bans)
and, with a bare --log-file, node.log
(--log-file PATH writes PATH instead; either way the log also goes to standard error).
--log-format json writes one JSON object per record instead of key=value lines.
While catching up the node logs "sync: progress" lines (height, target, percent,
blocks_per_sec, eta) every few seconds; getsyncstatus reports target_height and progress.
--metrics-bind serves Prometheus metrics at http://ADDR/metrics (docs/operations.md).
SIGINT, SIGTERM or the "stop" RPC shut the node down cleanly.

Peers (docs/p2p.md): regtest listens on 127.0.0.1 unless --p2p-bind says otherwise, testnet
and mainnet on every interface; --listen=false accepts no peer. Bytes that are not this
protocol only close the connection; a peer sending invalid blocks or transactions is
discouraged for 24 h in memory (never loopback or --whitelist peers); bans are manual
(coin-cli setban, listbanned, clearbanned) and kept in banlist.json.

Who may call (docs/security.md): the RPC server refuses with HTTP 403 a request whose
Content-Type is not application/json, whose Origin header --rpc-allow-origin does not
list, or whose Host is not the bind address, localhost, 127.0.0.1, [::1] or a name of
--rpc-allow-host. A bind address that is not loopback needs --rpc-auth; clients then send
HTTP Basic credentials (coin-cli --rpc http://USER:PASS@HOST:PORT, or --rpc-user and
--rpc-password-file).
   coin-cli rpcauth alice     # prints the --rpc-auth value and a fresh password
   coin-node --rpc-bind 0.0.0.0:38332 --rpc-auth 'alice:SALT$HASH'`,
		EnableBashCompletion: true,
		HideHelpCommand:      true,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "network", Value: "mainnet", EnvVars: []string{"COIN_NETWORK"}, Usage: "mainnet, testnet or regtest"},
			&cli.StringFlag{Name: "data-dir", EnvVars: []string{"COIN_DATA_DIR"}, Usage: "data directory", DefaultText: "~/.coin/<network>"},
			&cli.StringFlag{Name: "rpc-bind", EnvVars: []string{"COIN_RPC_BIND"}, Usage: "JSON-RPC listen address host:port; RPC is off when omitted (default ports: mainnet 18332, testnet 28332, regtest 38332); an address that is not loopback needs --rpc-auth"},
			&cli.IntFlag{Name: "p2p-port", EnvVars: []string{"COIN_P2P_PORT"}, Usage: "P2P listen port", DefaultText: "18333 mainnet, 28333 testnet, 38333 regtest"},
			&cli.StringSliceFlag{Name: "connect", EnvVars: []string{"COIN_CONNECT"}, Usage: "connect to this peer (host:port) at start-up and keep it connected; repeatable; with --connect the node dials no other peer (no --addnode, --seednode, DNS seed or learned address)"},
			&cli.StringSliceFlag{Name: "p2p-bind", EnvVars: []string{"COIN_P2P_BIND"}, Usage: "listen for peers on `HOST[:PORT]` (the port defaults to --p2p-port; IPv6 in brackets); repeatable", DefaultText: "127.0.0.1 on regtest, every interface on testnet and mainnet"},
			&cli.BoolFlag{Name: "listen", Value: true, EnvVars: []string{"COIN_LISTEN"}, Usage: "accept inbound P2P connections (--listen=false: outbound only)"},
			&cli.StringSliceFlag{Name: "externalip", EnvVars: []string{"COIN_EXTERNALIP"}, Usage: "an `IP` this node is reachable at from outside, announced to its peers (the first one) and listed in getnetworkinfo's localaddresses; repeatable"},
			&cli.StringSliceFlag{Name: "whitelist", EnvVars: []string{"COIN_WHITELIST"}, Usage: "never discourage peers from this `CIDR` range or address for misbehaving (they are only disconnected); loopback never is; repeatable"},
			&cli.StringSliceFlag{Name: "addnode", EnvVars: []string{"COIN_ADDNODE"}, Usage: "keep this peer (host:port, or host on the network's P2P port) connected, reconnecting with backoff, and make the other outbound connections too; repeatable (the addnode RPC adds more)"},
			&cli.StringSliceFlag{Name: "seednode", EnvVars: []string{"COIN_SEEDNODE"}, Usage: "connect to this peer (host:port), ask it for addresses, store them and disconnect; repeatable"},
			&cli.BoolFlag{Name: "dnsseed", Value: true, EnvVars: []string{"COIN_DNSSEED"}, Usage: "ask the network's DNS seeds for addresses when the node knows (nearly) none; --dnsseed=false never asks them (no effect with --connect)"},
			&cli.IntFlag{Name: "max-peers", Value: 16, EnvVars: []string{"COIN_MAX_PEERS"}, Usage: "maximum outbound P2P connections"},
			&cli.IntFlag{Name: "max-inbound", Value: 64, EnvVars: []string{"COIN_MAX_INBOUND"}, Usage: "maximum inbound P2P connections"},
			&cli.IntFlag{Name: "max-inbound-per-ip", Value: 4, EnvVars: []string{"COIN_MAX_INBOUND_PER_IP"}, Usage: "maximum inbound P2P connections from one IP address (0: no limit)"},
			&cli.DurationFlag{Name: "mempool-save-interval", Value: node.DefaultMempoolSaveInterval, EnvVars: []string{"COIN_MEMPOOL_SAVE_INTERVAL"}, Usage: "how often the mempool is written to <data-dir>/mempool.dat (it is also written at a clean stop; 0: only then)"},
			&cli.StringFlag{Name: "log-level", Aliases: []string{"debuglevel"}, Value: "info", EnvVars: []string{"COIN_LOG_LEVEL"}, Usage: "error, warn, info, debug or trace, for everything or per subsystem (node, p2p, rpc): debug or info,p2p=trace"},
			&cli.StringFlag{Name: "log-format", Value: "text", EnvVars: []string{"COIN_LOG_FORMAT"}, Usage: "`FORMAT` of the log: text (key=value lines) or json (one object per line)"},
			&cli.GenericFlag{Name: "log-file", Value: &logging.FileFlag{}, EnvVars: []string{"COIN_LOG_FILE"},
				Usage: "also write the log to `PATH`; a bare --log-file (no PATH) writes <data-dir>/node.log"},
			&cli.StringFlag{Name: "metrics-bind", EnvVars: []string{"COIN_METRICS_BIND"},
				Usage: "serve Prometheus metrics at http://`ADDR`/metrics (host:port; a bare :port or port is 127.0.0.1); off when omitted"},
			&cli.Float64Flag{Name: "min-free-disk", Value: 20, EnvVars: []string{"COIN_MIN_FREE_DISK"}, Usage: "stop cleanly when less than this percentage (0 to 100; 0: never) of the data dir's disk is free"},
			&cli.IntFlag{Name: "mempool-max-mb", Value: 64, EnvVars: []string{"COIN_MEMPOOL_MAX_MB"}, Usage: "mempool size bound in MiB; the lowest fee rates are evicted beyond it"},
			&cli.IntFlag{Name: "coin-cache-mb", Value: chainstate.DefaultCoinCacheMiB, EnvVars: []string{"COIN_COIN_CACHE_MB"}, Usage: "MiB of memory (outside the Go heap) that keep stored unspent outputs, as Bitcoin Core's -dbcache: blocks then read the outputs they spend from memory instead of the database; 0: none"},
		}, rpcFlags()...),
		Commands: []*cli.Command{devnetCommand(), cliutil.DocCommand()},
		Action:   run,
	})
}

// maxCoinCacheMB bounds --coin-cache-mb (1 TiB): beyond it the cache's buckets cannot be sized.
const maxCoinCacheMB = 1 << 20

func run(c *cli.Context) error {
	if c.Args().Present() {
		return cliutil.UsageError(c, "unexpected argument %q", c.Args().First())
	}
	net, err := params.ByName(c.String("network"))
	if err != nil {
		return cliutil.BadUsage(c, fmt.Errorf("--network: %w", err))
	}
	// A negative percentage turned the free-disk rule off without a word: a usage error.
	if v := c.Float64("min-free-disk"); !(v >= 0 && v <= 100) {
		return cliutil.UsageError(c, "--min-free-disk %v: want a percentage from 0 (the rule off) to 100", v)
	}
	if v := c.Int("coin-cache-mb"); v < 0 || v > maxCoinCacheMB {
		return cliutil.UsageError(c, "--coin-cache-mb %d: want 0 (none) to %d MiB", v, maxCoinCacheMB)
	}
	dataDir := c.String("data-dir")
	if dataDir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return fmt.Errorf("no --data-dir and no home directory: %w", err)
		}
		dataDir = net.DefaultDataDir(home)
	}
	levels, err := logging.ParseLevels(c.String("log-level"), logging.DefaultSubsystem, "p2p", "rpc")
	if err != nil {
		return cliutil.BadUsage(c, fmt.Errorf("--log-level: %w", err))
	}
	format, err := logging.ParseFormat(c.String("log-format"))
	if err != nil {
		return cliutil.BadUsage(c, fmt.Errorf("--log-format: %w", err))
	}
	logFile := c.Generic("log-file").(*logging.FileFlag).Path(node.DefaultLogFile(dataDir))
	logger, closer, err := logging.Output{Levels: levels, Format: format, File: logFile}.Open()
	if err != nil {
		return fmt.Errorf("--log-file: %w", err)
	}
	defer closer.Close()
	p2pPort := c.Int("p2p-port")
	if p2pPort == 0 {
		p2pPort = int(net.P2PPort)
	}
	none := func(v int) int { // the flags say 0 for none; p2p.Config says negative
		if v == 0 {
			return -1
		}
		return v
	}
	rpcCfg, err := rpcConfig(c)
	if err != nil {
		return err
	}
	p2pCfg, err := p2pConfig(c, net, p2pPort)
	if err != nil {
		return err
	}
	p2pCfg.MaxOutbound, p2pCfg.MaxInbound = none(c.Int("max-peers")), none(c.Int("max-inbound"))
	p2pCfg.MaxInboundPerIP = none(c.Int("max-inbound-per-ip"))
	cfg := node.Config{
		Network: net, DataDir: dataDir, RPC: rpcCfg,
		P2P:    p2pCfg,
		Logger: logger, MinFreeDiskPercent: c.Float64("min-free-disk"), MempoolMaxBytes: c.Int("mempool-max-mb") << 20,
		MempoolSaveInterval: saveInterval(c.Duration("mempool-save-interval")),
		CoinCacheMiB:        none(c.Int("coin-cache-mb")),
		MetricsBind:         c.String("metrics-bind"),
		BlockNotify:         c.String("blocknotify"),
	}
	// A signal while the node opens its database stops the opening too (node.New).
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	n, err := node.New(ctx, cfg)
	if errors.Is(err, rpcserver.ErrNoAuth) {
		return noAuthError(rpcCfg.Bind)
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil // stopped while opening, as Run stops: the database is consistent
	}
	if err != nil {
		return err
	}
	return n.Run(ctx)
}

// saveInterval is --mempool-save-interval as node.Config takes it: 0 means "only at a clean
// stop", which the node spells as a negative interval.
func saveInterval(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// p2pConfig reads the P2P flags: where to listen (--p2p-bind, --listen), the peers to
// connect to (--connect, --addnode, --seednode, --dnsseed), the external addresses and the
// ranges never discouraged. A bad value is a usage error.
func p2pConfig(c *cli.Context, net *params.Network, port int) (*p2p.Config, error) {
	if port <= 0 || port > 65535 {
		return nil, cli.Exit(fmt.Sprintf("error: --p2p-port %d: want 1 to 65535", port), 2)
	}
	listen, err := p2p.ListenAddrs(c.StringSlice("p2p-bind"), uint16(port), net, c.Bool("listen"))
	if err != nil {
		return nil, cli.Exit("error: --p2p-bind: "+err.Error(), 2)
	}
	cfg := &p2p.Config{ListenAddrs: listen, Connect: c.StringSlice("connect"), NoDNSSeed: !c.Bool("dnsseed")}
	if cfg.AddNodes, err = peerAddrs(c, "addnode", net.P2PPort); err != nil {
		return nil, err
	}
	if cfg.SeedNodes, err = peerAddrs(c, "seednode", net.P2PPort); err != nil {
		return nil, err
	}
	for _, s := range c.StringSlice("externalip") {
		ip, err := netip.ParseAddr(strings.Trim(s, "[]"))
		if err != nil {
			return nil, cli.Exit(fmt.Sprintf("error: --externalip %q: want an IP address", s), 2)
		}
		cfg.ExternalIPs = append(cfg.ExternalIPs, ip.Unmap())
	}
	for _, s := range c.StringSlice("whitelist") {
		pfx, err := p2p.ParseSubnet(s)
		if err != nil {
			return nil, cli.Exit("error: --whitelist: "+err.Error(), 2)
		}
		cfg.Whitelist = append(cfg.Whitelist, pfx)
	}
	return cfg, nil
}

// peerAddrs is a repeatable peer-address flag, each "host:port" or a host on the network's
// P2P port; an invalid one is a usage error (exit 2).
func peerAddrs(c *cli.Context, flag string, defaultPort uint16) ([]string, error) {
	var out []string
	for _, a := range c.StringSlice(flag) {
		n, err := p2p.NormalizeAddr(a, defaultPort)
		if err != nil {
			return nil, cli.Exit(fmt.Sprintf("error: --%s %q: want host:port", flag, a), 2)
		}
		out = append(out, n)
	}
	return out, nil
}
