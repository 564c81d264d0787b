package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/cointoolkit/coin/lib/logging"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cointoolkit/coin/lib/cliutil"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/miner"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

const appName = "coin-miner"

// appDescription is the overview of --help and the man page (urfave/cli does not wrap it).
var appDescription = strings.TrimSpace(`
coin-miner asks a node for block templates (getblocktemplate), hashes them on every core
and submits the blocks it solves (submitblock). The node must serve RPC (--rpc-bind).

The address is checked (bech32m checksum and network) before any work. Its prefix names
the network: coin1... is mainnet, tcoin1... is testnet or regtest; --network makes it
explicit, and the node's own network must match.

The threads share the 64-bit nonce space without overlap. The miner checks the node's tip
every 250 ms and its mempool every 2 s, and moves to a fresh template when either changed;
a solution for a tip that was replaced is dropped, never submitted. Every 30 s, and when
the nonce space runs out, the block's timestamp moves to the current time. An unreachable
node is retried with backoff (at most 5 s between attempts) until it answers.

Pace: after an accepted block the miner waits --interval before the next template, so it
mines at most one block per interval. On regtest without --blocks the default is 1s: an
unpaced regtest miner solves hundreds of blocks a second and pushes block time far ahead of
the clock (each block's time must pass the median of the eleven before it). --interval 0
mines as fast as it can; --blocks N alone mines N blocks at once.

Output: the hash of each accepted block goes to standard output, one per line. On a
terminal, standard error shows one status line (hashrate, blocks accepted and rejected,
height), redrawn every second, above which events are logged. Otherwise standard error
gets key=value log lines (log/slog), with a status line every --log-interval. The first 10
accepted blocks are logged one by one at info level, later ones at debug level (the status
line counts them). --quiet prints only warnings and errors. SIGINT or SIGTERM stops the
miner, which prints a summary. --log-format json writes the log lines
(and the summary) as JSON objects; --log-file PATH appends them to PATH as well.

--benchmark hashes a fixed header without a node, first on one thread and then on
--threads threads, and prints the hashrate per thread and in total. When openssl is on the
PATH it also measures the one-stream SHA-256 reference (openssl speed -evp sha256, the
16384-byte row / 64 / 2) and prints the ratio.

Examples:

    coin-miner --rpc http://127.0.0.1:38332 --address tcoin1... --threads 8
    coin-miner --network regtest --address "$addr" --blocks 5
    coin-miner --network regtest --address "$addr" --interval 10s
    COIN_RPC=127.0.0.1:28332 COIN_MINER_ADDRESS=tcoin1... coin-miner
    coin-miner --benchmark --threads 2

Exit status: 0 after SIGINT, SIGTERM or --blocks blocks; 2 for a usage error (a bad or
missing option, such as no --address, or an address that does not parse); 1 when the node
refuses to mine for this address (another network) or another error.`)

// defaultLogInterval is how often a status line is logged when standard error is not a
// terminal.
const defaultLogInterval = 30 * time.Second

// newApp builds the command line. It is set up at once, so that the man page and the
// completions generated from it (gendoc, TestDocsFresh) include the --help flag urfave/cli
// adds, whether or not the app has run.
func newApp() *cli.App {
	app := &cli.App{
		Name:                 appName,
		Usage:                "mine COIN blocks with a node's block templates, on every CPU core",
		UsageText:            appName + " --address ADDRESS [--rpc URL] [--threads N] [--blocks N] | --benchmark",
		Description:          appDescription,
		EnableBashCompletion: true,
		HideHelpCommand:      true,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "rpc", EnvVars: []string{"COIN_RPC"},
				Usage: "node RPC `URL` (default: http://127.0.0.1:PORT, the RPC port of the network); credentials as http://USER:PASSWORD@HOST:PORT or --rpc-user"},
			&cli.StringFlag{Name: "address", Aliases: []string{"a"}, EnvVars: []string{"COIN_MINER_ADDRESS"},
				Usage: "`ADDRESS` the coinbase pays (coin1... mainnet, tcoin1... testnet and regtest)"},
			&cli.StringFlag{Name: "network", EnvVars: []string{"COIN_NETWORK"},
				Usage: "`NET`: mainnet, testnet or regtest (default: from the address prefix and the node)"},
			&cli.IntFlag{Name: "threads", Aliases: []string{"t"}, EnvVars: []string{"COIN_MINER_THREADS"},
				DefaultText: "number of CPUs", Usage: "hashing `N` threads"},
			&cli.Uint64Flag{Name: "blocks", EnvVars: []string{"COIN_MINER_BLOCKS"},
				DefaultText: "0, no limit", Usage: "exit after `N` accepted blocks"},
			&cli.DurationFlag{Name: "interval", EnvVars: []string{"COIN_MINER_INTERVAL"},
				DefaultText: fmt.Sprintf("%s on regtest without --blocks, else 0", miner.DefaultRegtestInterval),
				Usage:       "mine at most one block per `DURATION` (after a block, wait that long before the next template); 0: no pause"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, EnvVars: []string{"COIN_MINER_QUIET"},
				Usage: "print only warnings and errors: no block hashes, status line, per-block log lines or summary"},
			&cli.BoolFlag{Name: "benchmark", EnvVars: []string{"COIN_MINER_BENCHMARK"},
				Usage: "measure the hashrate on a fixed header without a node, then exit"},
			&cli.DurationFlag{Name: "benchmark-time", EnvVars: []string{"COIN_MINER_BENCHMARK_TIME"}, Value: 5 * time.Second,
				Usage: "`DURATION` of each --benchmark run"},
			&cli.StringFlag{Name: "log-level", EnvVars: []string{"COIN_MINER_LOG_LEVEL", "COIN_LOG_LEVEL"}, Value: "info",
				Usage: "`LEVEL`: error, warn, info, debug or trace"},
			&cli.StringFlag{Name: "log-format", EnvVars: []string{"COIN_MINER_LOG_FORMAT", "COIN_LOG_FORMAT"}, Value: "text",
				Usage: "`FORMAT` of the log: text (key=value lines) or json (one object per line)"},
			&cli.GenericFlag{Name: "log-file", Value: &logging.FileFlag{}, EnvVars: []string{"COIN_MINER_LOG_FILE"},
				Usage: "also append the log to `PATH`"},
			&cli.DurationFlag{Name: "log-interval", EnvVars: []string{"COIN_MINER_LOG_INTERVAL"}, Value: defaultLogInterval,
				Usage: "`DURATION` between status log lines when standard error is not a terminal"},
		}, cliutil.RPCCredentialFlags()...),
		Commands: []*cli.Command{cliutil.DocCommand()},
		Action:   run,
	}
	cliutil.Conventions(app).Setup()
	return app
}

// options are the checked flags.
type options struct {
	threads     int
	blocks      uint64
	interval    time.Duration // 0: the miner's default; negative: no pause
	quiet       bool
	level       slog.Level
	format      logging.Format
	logFile     string // "": none
	logInterval time.Duration
	network     *params.Network // nil: not given
}

func readOptions(c *cli.Context) (*options, error) {
	o := &options{threads: c.Int("threads"), blocks: c.Uint64("blocks"), logInterval: c.Duration("log-interval"),
		quiet: c.Bool("quiet")}
	if c.IsSet("interval") {
		switch o.interval = c.Duration("interval"); {
		case o.interval < 0:
			return nil, fmt.Errorf("--interval %s: want a duration of 0 or more", o.interval)
		case o.interval == 0:
			o.interval = -1 // given as 0: no pause, on regtest too
		}
	}
	if o.threads < 0 || o.threads > 4096 {
		return nil, fmt.Errorf("--threads %d: want 1 to 4096 (0: the number of CPUs)", o.threads)
	}
	if o.threads == 0 {
		o.threads = runtime.NumCPU()
	}
	if o.logInterval <= 0 {
		return nil, errors.New("--log-interval must be positive")
	}
	var err error
	if o.level, err = logging.ParseLevel(c.String("log-level")); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	if o.quiet {
		o.level = max(o.level, slog.LevelWarn)
	}
	if o.format, err = logging.ParseFormat(c.String("log-format")); err != nil {
		return nil, fmt.Errorf("--log-format: %w", err)
	}
	if f, ok := c.Generic("log-file").(*logging.FileFlag); ok {
		if o.logFile = f.Path("-"); o.logFile == "-" {
			return nil, fmt.Errorf("--log-file: the miner has no data directory: %w", logging.ErrNoDefaultFile)
		}
	}
	if n := c.String("network"); n != "" {
		if o.network, err = params.ByName(n); err != nil {
			return nil, fmt.Errorf("--network: %w", err)
		}
	}
	return o, nil
}

func run(c *cli.Context) error {
	if c.Args().Present() {
		return cliutil.UsageError(c, "unexpected argument %q", c.Args().First())
	}
	o, err := readOptions(c)
	if err != nil {
		return cliutil.BadUsage(c, err)
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second signal kills at once
	}()
	if c.Bool("benchmark") {
		d := c.Duration("benchmark-time")
		if d <= 0 {
			return cliutil.UsageError(c, "--benchmark-time must be positive")
		}
		return benchmark(ctx, c.App.Writer, o.threads, d)
	}
	return mine(ctx, c, o)
}

func mine(ctx context.Context, c *cli.Context, o *options) error {
	raw := c.String("address")
	if raw == "" {
		return cliutil.UsageError(c, "no mining address: give --address or COIN_MINER_ADDRESS")
	}
	addr, err := miner.ParseAddress(strings.TrimSpace(raw), o.network)
	if err != nil {
		return cliutil.BadUsage(c, fmt.Errorf("--address: %w", err))
	}
	rpcURL, err := nodeURL(c.String("rpc"), o.network, addr)
	if err != nil {
		return err
	}
	// Credentials (in the URL or from --rpc-user) go to the client only: rpcURL, which the
	// miner logs, is the URL without them.
	rpcURL, auth, err := cliutil.NodeCredentials(c, rpcURL)
	if err != nil {
		return err
	}
	con := newConsole(c.App.Writer, c.App.ErrWriter)
	logger, closeLog, err := minerLogger(con, o)
	if err != nil {
		return err
	}
	defer closeLog()
	client := rpcapi.NewClient(rpcURL, append([]jsonrpc.ClientOption{jsonrpc.WithTimeout(time.Minute)}, auth...)...)
	defer client.Close()
	m, err := miner.New(miner.Config{
		Node: client, NodeURL: rpcURL, Address: addr, Network: o.network, Threads: o.threads, Blocks: o.blocks,
		Interval: o.interval, Logger: logger,
		OnBlock: func(e miner.BlockEvent) {
			if e.Accepted && !o.quiet {
				con.printBlock(e.Hash)
			}
		},
	})
	if err != nil {
		return err
	}
	logger.Info("mining", "node", rpcURL, "address", addr.String, "threads", m.Threads(), "kernel", kernelName())
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if !o.quiet {
			con.report(rctx, m, logger, o.logInterval)
		}
	}()
	err = m.Run(ctx)
	cancel()
	<-done
	if st := m.Stats(); o.quiet {
		// --quiet: no summary
	} else if o.format == logging.FormatText && o.logFile == "" {
		con.summary(st, o.level)
	} else {
		// The summary as a record of the chosen format, and in the file too.
		if con.tty {
			con.summary(st, o.level)
		}
		logger.Info("summary", "uptime", st.Elapsed.Round(time.Millisecond), "threads", st.Threads,
			"accepted", st.Accepted, "rejected", st.Rejected, "stale", st.Stale, "submit_errors", st.SubmitErrors,
			"hashes", st.Hashes, "avg_hashrate", miner.FormatRate(st.AvgHashrate), "templates", st.Templates,
			"rolls", st.Rolls, "height", st.Height)
	}
	return err
}

// minerLogger is the miner's log (lib/logging's style: --log-format, --log-file): on the
// console (its time shortened on a terminal, records above the status line) and, with
// --log-file=PATH, appended to the file with full times.
func minerLogger(con *console, o *options) (*slog.Logger, func(), error) {
	if o.format == logging.FormatText && o.logFile == "" {
		return con.logger(o.level), func() {}, nil
	}
	shortTime := func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey && con.tty {
			a.Value = slog.StringValue(a.Value.Time().Format(time.TimeOnly))
		}
		return a
	}
	h := logging.NewHandler(con, o.format, logging.HandlerOptions(o.level, shortTime))
	if o.logFile == "" {
		return slog.New(h), func() {}, nil
	}
	f, err := logging.OpenFile(o.logFile)
	if err != nil {
		return nil, nil, fmt.Errorf("--log-file: %w", err)
	}
	fh := logging.NewHandler(f, o.format, logging.HandlerOptions(o.level, nil))
	return slog.New(slog.NewMultiHandler(h, fh)), func() { f.Close() }, nil
}

// nodeURL is --rpc made a URL ("host:port" is accepted), or the default port's URL of the
// network when --rpc is not given.
func nodeURL(raw string, network *params.Network, addr miner.Address) (string, error) {
	if raw == "" {
		if network == nil && len(addr.Networks) == 1 {
			network = addr.Networks[0]
		}
		if network == nil {
			return "", fmt.Errorf("a %s address is for %s: give --rpc URL or --network to choose the node",
				addr.HRP, addr.NetworkNames())
		}
	}
	return rpcapi.NodeURL(raw, network)
}
