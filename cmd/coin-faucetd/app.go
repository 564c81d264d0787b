package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/cliutil"
	"github.com/cointoolkit/coin/lib/faucet"
	"github.com/cointoolkit/coin/lib/faucet/daemon"
	"github.com/cointoolkit/coin/lib/faucet/events"
	"github.com/cointoolkit/coin/lib/faucet/httpapi"
	"github.com/cointoolkit/coin/lib/faucet/payout"
	"github.com/cointoolkit/coin/lib/logging"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/policy"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/wallet"
	"github.com/urfave/cli/v2"
)

const appName = "coin-faucetd"

const appDescription = `coin-faucetd serves the faucet's HTTP/JSON API (GET /openapi.json describes it):
   GET  /api/wallet/new      a fresh 12-word mnemonic and its address
   POST /api/faucet          {"address"}: pay the claim amount, once per address per cooldown
   GET  /api/status          block height, mempool size, the faucet's balance and address
   GET  /api/wallet/balance  ?address=: confirmed balance and UTXO count
   POST /api/wallet/send     {"mnemonic", "to", "amount"}: a transfer from a mnemonic's wallet
   POST /api/wallet/derive   {"mnemonic"}: the address of a mnemonic
   /api/agent/...            Proof of Conduct: register, profile, directory, vouch,
                             contract create|fulfil|refund|lookup, review (docs/conduct.md)
   GET  /api/agent/events    Server-Sent Events of agent operations (?address=, ?types=,
                             Last-Event-ID resumes, also across restarts; docs/agents.md)
   GET  /                    the web page: claim form, status, agents, contracts
   POST /mcp                 the same operations as MCP tools (streamable HTTP;
                             the A2A card /.well-known/agent-card.json, the MCP card
                             /.well-known/mcp.json and /llms.txt point to it;
                             docs/agents.md)

The faucet's funds are the wallet in --wallet-dir (its passphrase from --passphrase-file,
else COIN_WALLET_PASSPHRASE, else a terminal prompt) or the mnemonic in --mnemonic-file;
fund the faucet's address (printed at start and in /api/status). Claims are kept in
--data-dir (LevelDB) with the signed transaction that pays them, written before it is
broadcast and sent again until it is mined, so a claim answered 200 is paid exactly once
whatever crashes, and a restart resets neither the per-address limit nor the hourly
per-client and budget counts (paid claims are listed by time with their client). Concurrent claims
are paid by one spender that batches waiting claims into one transaction and spends its
own unconfirmed change, so no claim waits for a block. Mainnet is refused.

Limits (429 with Retry-After and a code naming the limit): one claim per address per
--cooldown (address_rate_limited); --claims-per-ip per client network per hour and
--requests-per-second on every endpoint (client_rate_limited); --budget-per-hour claims
for the whole faucet (budget_exhausted); --max-streams-per-client event streams per client
(stream_limit) and --max-streams in all, at most three quarters of --max-connections, so the
rest always serves ordinary requests. Behind a reverse proxy set --trusted-proxies.
On regtest, a local chain where every claim comes from one client, --claims-per-ip and
--budget-per-hour default to no limit; testnet keeps 5 and 100 (give them to change it).

Secrets: --mnemonic-file and --passphrase-file must give group and others no access
(chmod 600), else coin-faucetd refuses to start. The transactions of agent operations and
sends are journaled before they are sent and sent again until mined, as claims are.

Logs: --log-format text|json; a bare --log-file also writes <data-dir>/faucetd.log,
--log-file PATH another file. --metrics-bind serves Prometheus metrics at /metrics (claims
by outcome, the faucet's balance, HTTP latency by route; docs/operations.md).

Every flag can also be set with the environment variable shown in its help. SIGINT or
SIGTERM stop the service cleanly.

Examples:
   coin-faucetd --network regtest --rpc http://127.0.0.1:38332 --mnemonic-file faucet.txt
   coin-faucetd --network testnet --wallet-dir /var/lib/faucet/wallet --passphrase-file pass.txt \
       --listen 0.0.0.0:8080 --amount 10 --cooldown 24h
   coin-faucetd openapi > openapi.json`

func newApp() *cli.App {
	return cliutil.Conventions(&cli.App{
		Name:                 appName,
		Usage:                "serve the COIN testnet faucet HTTP API",
		Description:          appDescription,
		EnableBashCompletion: true,
		HideHelpCommand:      true,
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return fmt.Errorf("%w (see '%s --help')", err, appName)
		},
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "network", Value: "testnet", EnvVars: []string{"COIN_NETWORK"}, Usage: "`NET`: testnet or regtest (mainnet is refused)"},
			&cli.StringFlag{Name: "rpc", EnvVars: []string{"COIN_RPC"}, Usage: "node RPC `URL` (default: http://127.0.0.1:PORT with the RPC port of --network); credentials as http://USER:PASSWORD@HOST:PORT or --rpc-user"},
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:8080", EnvVars: []string{"COIN_FAUCET_LISTEN"}, Usage: "HTTP listen address `HOST:PORT`"},
			&cli.StringFlag{Name: "data-dir", EnvVars: []string{"COIN_FAUCET_DATA_DIR"}, Usage: "`DIR` of the claims database (default: ~/.coin/<network>/faucet)"},
			&cli.StringFlag{Name: "wallet-dir", EnvVars: []string{"COIN_FAUCET_WALLET_DIR"}, Usage: "the faucet's funds: a coin-wallet `DIR`"},
			&cli.StringFlag{Name: "passphrase-file", EnvVars: []string{"COIN_FAUCET_PASSPHRASE_FILE"},
				Usage: "read the --wallet-dir passphrase from `FILE` (default: COIN_WALLET_PASSPHRASE, else a terminal prompt)"},
			&cli.StringFlag{Name: "mnemonic-file", EnvVars: []string{"COIN_FAUCET_MNEMONIC_FILE"}, Usage: "the faucet's funds: the mnemonic in `FILE` (instead of --wallet-dir)"},
			&cli.StringFlag{Name: "amount", Value: "100", EnvVars: []string{"COIN_FAUCET_AMOUNT"}, Usage: "`COIN` paid per claim"},
			&cli.DurationFlag{Name: "cooldown", Value: time.Hour, EnvVars: []string{"COIN_FAUCET_COOLDOWN"}, Usage: "`DURATION` between two claims of one address"},
			&cli.Uint64Flag{Name: "fee-rate", Value: wallet.DefaultFeeRate, EnvVars: []string{"COIN_FAUCET_FEE_RATE"}, Usage: "fee in subunits per byte of the faucet's transactions and of /api/wallet/send"},
			&cli.Float64Flag{Name: "ip-rate", Value: faucet.DefaultIPRate, EnvVars: []string{"COIN_FAUCET_IP_RATE"},
				Usage: "requests per minute per client IP on the endpoints that take a mnemonic (wallet send and derive, agent register, vouch, contract create, fulfil and refund, review); 0 or less: no limit"},
			&cli.IntFlag{Name: "ip-burst", Value: faucet.DefaultIPBurst, EnvVars: []string{"COIN_FAUCET_IP_BURST"}, Usage: "burst allowed above --ip-rate"},
			&cli.Float64Flag{Name: "requests-per-second", Value: faucet.DefaultRequestRate, EnvVars: []string{"COIN_REQUESTS_PER_SECOND"},
				Usage: "requests per second per client on every endpoint (a mnemonic endpoint also takes one of --ip-rate's); 0: no limit"},
			&cli.IntFlag{Name: "requests-burst", Value: faucet.DefaultRequestBurst, EnvVars: []string{"COIN_REQUESTS_BURST"}, Usage: "burst allowed above --requests-per-second"},
			&cli.IntFlag{Name: "claims-per-ip", EnvVars: []string{"COIN_CLAIMS_PER_IP"}, DefaultText: fmt.Sprintf("%d on testnet, no limit on regtest", faucet.DefaultClaimsPerClient),
				Usage: "claims paid per hour per client network (IPv4 address, IPv6 /64); 0: no limit"},
			&cli.IntFlag{Name: "budget-per-hour", EnvVars: []string{"COIN_BUDGET_PER_HOUR"}, DefaultText: fmt.Sprintf("%d on testnet, no limit on regtest", faucet.DefaultBudgetPerHour),
				Usage: "claims paid per hour by the whole faucet; 0: no limit"},
			&cli.IntFlag{Name: "trusted-proxies", Value: 0, EnvVars: []string{"COIN_TRUSTED_PROXIES"},
				Usage: "how many X-Forwarded-For hops (reverse proxies of yours) to trust to name the client; 0: the client is the socket's peer"},
			&cli.IntFlag{Name: "max-connections", Value: daemon.DefaultMaxConnections, EnvVars: []string{"COIN_FAUCET_MAX_CONNECTIONS"},
				Usage: "most HTTP connections open at once; more wait to be accepted"},
			&cli.IntFlag{Name: "max-streams", Value: 0, EnvVars: []string{"COIN_FAUCET_MAX_STREAMS"},
				Usage: "most event streams (/api/agent/events) open at once; 0: three quarters of --max-connections. At most that: the last quarter of the connections is kept for ordinary requests"},
			&cli.IntFlag{Name: "max-streams-per-client", Value: httpapi.DefaultMaxStreamsPerClient, EnvVars: []string{"COIN_FAUCET_MAX_STREAMS_PER_CLIENT"},
				Usage: "most event streams one client (IPv4 address, IPv6 /64) holds at once; more are 429 stream_limit"},
			&cli.DurationFlag{Name: "stream-max-age", Value: events.DefaultMaxAge, EnvVars: []string{"COIN_FAUCET_STREAM_MAX_AGE"},
				Usage: "`DURATION` after which an event stream ends (the client reconnects with Last-Event-ID and misses nothing), so a client that stops reading does not hold its connection"},
			&cli.Int64Flag{Name: "max-body", Value: httpapi.DefaultMaxBodyBytes, EnvVars: []string{"COIN_FAUCET_MAX_BODY"}, Usage: "largest request body in `BYTES`"},
			&cli.IntFlag{Name: "max-batch", Value: payout.DefaultMaxBatch, EnvVars: []string{"COIN_FAUCET_MAX_BATCH"}, Usage: "most claims paid by one transaction"},
			&cli.IntFlag{Name: "max-chain-depth", Value: payout.DefaultMaxChainDepth, EnvVars: []string{"COIN_FAUCET_MAX_CHAIN_DEPTH"},
				Usage: "most unconfirmed ancestors of a faucet transaction"},
			&cli.StringFlag{Name: "access-log", Value: "-", EnvVars: []string{"COIN_FAUCET_ACCESS_LOG"},
				Usage: "access log: - for standard error, a `FILE` to append to, or off"},
			&cli.StringFlag{Name: "log-level", Aliases: []string{"debuglevel"}, Value: "info", EnvVars: []string{"COIN_LOG_LEVEL"},
				Usage: "error, warn, info, debug or trace, for everything or per subsystem (faucet, http: the access log): debug or info,http=warn"},
			&cli.StringFlag{Name: "log-format", Value: "text", EnvVars: []string{"COIN_LOG_FORMAT"}, Usage: "`FORMAT` of the log and the access log: text (key=value lines) or json"},
			&cli.GenericFlag{Name: "log-file", Value: &logging.FileFlag{}, EnvVars: []string{"COIN_FAUCET_LOG_FILE"},
				Usage: "also write the log to `PATH`; a bare --log-file (no PATH) writes <data-dir>/faucetd.log"},
			&cli.StringFlag{Name: "metrics-bind", EnvVars: []string{"COIN_FAUCET_METRICS_BIND"},
				Usage: "serve Prometheus metrics at http://`ADDR`/metrics (host:port; a bare :port or port is 127.0.0.1); off when omitted"},
		}, cliutil.RPCCredentialFlags()...),
		Commands: []*cli.Command{
			{
				Name:  "openapi",
				Usage: "print the OpenAPI 3.1 document of the API",
				Action: func(c *cli.Context) error {
					_, err := c.App.Writer.Write(httpapi.OpenAPI)
					return err
				},
			},
			cliutil.DocCommand(),
		},
		Action: run,
	})
}

func run(c *cli.Context) error {
	if c.Args().Present() {
		return cliutil.UsageError(c, "unexpected argument %q", c.Args().First())
	}
	net, err := params.ByName(c.String("network"))
	if err != nil {
		return cliutil.BadUsage(c, fmt.Errorf("--network: %w", err))
	}
	if err := faucet.CheckNetwork(net); err != nil {
		return cliutil.UsageError(c, "--network %s: %v", net.Name, err)
	}
	rpcURL, err := rpcapi.NodeURL(c.String("rpc"), net)
	if err != nil {
		return err
	}
	// Credentials go to the client only; rpcURL, which the faucet logs, carries none.
	rpcURL, rpcAuth, err := cliutil.NodeCredentials(c, rpcURL)
	if err != nil {
		return err
	}
	amt, err := amount.Parse(strings.TrimSpace(c.String("amount")))
	if err != nil {
		return cliutil.BadUsage(c, fmt.Errorf("--amount: %w", err))
	}
	if err := faucet.CheckAmount(amt); err != nil {
		return cliutil.BadUsage(c, fmt.Errorf("--amount: %w", err))
	}
	cooldown := c.Duration("cooldown")
	if cooldown <= 0 {
		return cliutil.UsageError(c, "--cooldown must be positive")
	}
	feeRate := c.Uint64("fee-rate")
	if feeRate < policy.MinRelayFeePerByte || feeRate > wallet.MaxFeeRate {
		return cliutil.BadUsage(c, fmt.Errorf("--fee-rate: %w", wallet.ErrBadFeeRate))
	}
	maxConns := c.Int("max-connections")
	if maxConns < 1 {
		return cliutil.UsageError(c, "--max-connections must be at least 1")
	}
	maxStreams, err := httpapi.StreamShare(maxConns, c.Int("max-streams"))
	if err != nil {
		return cliutil.UsageError(c, "--max-streams: %v", err)
	}
	if maxStreams == 0 {
		maxStreams = -1 // the server's "none"
	}
	if c.Int("max-streams-per-client") < 1 {
		return cliutil.UsageError(c, "--max-streams-per-client must be at least 1")
	}
	if c.Duration("stream-max-age") <= 0 {
		return cliutil.UsageError(c, "--stream-max-age must be positive")
	}
	trusted := c.Int("trusted-proxies")
	dataDir := c.String("data-dir")
	if dataDir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return fmt.Errorf("no --data-dir and no home directory: %w", err)
		}
		dataDir = filepath.Join(net.DefaultDataDir(home), "faucet")
	}
	levels, err := logging.ParseLevels(c.String("log-level"), "faucet", "http")
	if err != nil {
		return cliutil.BadUsage(c, fmt.Errorf("--log-level: %w", err))
	}
	format, err := logging.ParseFormat(c.String("log-format"))
	if err != nil {
		return cliutil.BadUsage(c, fmt.Errorf("--log-format: %w", err))
	}
	logFile := c.Generic("log-file").(*logging.FileFlag).Path(filepath.Join(dataDir, "faucetd.log"))
	logger, logCloser, err := logging.Output{Levels: levels, Format: format, File: logFile}.Open()
	if err != nil {
		return fmt.Errorf("--log-file: %w", err)
	}
	defer logCloser.Close()
	accessLog, closeLog, err := openAccessLog(c.String("access-log"), levels, format)
	if err != nil {
		return err
	}
	defer closeLog()

	keys, err := faucetKeys(c, net)
	if err != nil {
		return err
	}
	defer func() {
		for i := range keys {
			keys[i].Wipe()
		}
	}()

	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("--data-dir: %w", err)
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	perClient, budget := claimLimits(c, net)
	return daemon.Run(ctx, daemon.Config{Net: net, RPCURL: rpcURL, RPCOptions: rpcAuth, Keys: keys, DataDir: dataDir,
		Listen: c.String("listen"), MaxConnections: maxConns, MaxBatch: c.Int("max-batch"), MaxChainDepth: c.Int("max-chain-depth"),
		StreamMaxAge: c.Duration("stream-max-age"), MetricsBind: c.String("metrics-bind"), Logger: logger, AccessLog: accessLog,
		Faucet: faucet.Config{Amount: amt, Cooldown: cooldown, FeeRate: feeRate,
			IPRate: ipRate(c.Float64("ip-rate")), IPBurst: c.Int("ip-burst"),
			RequestRate: ipRate(c.Float64("requests-per-second")), RequestBurst: c.Int("requests-burst"),
			ClaimsPerClient: perClient, BudgetPerHour: budget},
		HTTP: httpapi.Options{TrustedProxies: trusted, MaxBodyBytes: c.Int64("max-body"),
			MaxStreams: maxStreams, MaxStreamsPerClient: c.Int("max-streams-per-client")}})
}

// ipRate maps the flag's "0 or less: no limit" to the server's "negative: no limit".
func ipRate(v float64) float64 {
	if v <= 0 {
		return -1
	}
	return v
}

// offIfZero maps a flag's "0: no limit" to the server's "negative: off".
// claimLimits are the per-client and hourly budget limits: the flags' when given (0: off),
// else the network's defaults (faucet.DefaultLimits: off on regtest). Negative is off.
func claimLimits(c *cli.Context, net *params.Network) (perClient, budget int) {
	perClient, budget = faucet.DefaultLimits(net)
	if c.IsSet("claims-per-ip") {
		perClient = offIfZero(c.Int("claims-per-ip"))
	}
	if c.IsSet("budget-per-hour") {
		budget = offIfZero(c.Int("budget-per-hour"))
	}
	return perClient, budget
}

func offIfZero(v int) int {
	if v <= 0 {
		return -1
	}
	return v
}

// openAccessLog is the access logger on standard error ("-"), on a file, or none ("off").
func openAccessLog(dest string, levels logging.Levels, format logging.Format) (*slog.Logger, func(), error) {
	switch dest {
	case "off", "":
		return nil, func() {}, nil
	case "-":
		return logging.NewFormat(os.Stderr, levels, format), func() {}, nil
	}
	f, err := os.OpenFile(dest, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("--access-log: %w", err)
	}
	return logging.NewFormat(f, levels, format), func() { f.Close() }, nil
}

// faucetKeys loads the faucet's keys from --wallet-dir or --mnemonic-file.
func faucetKeys(c *cli.Context, n *params.Network) ([]wallet.Key, error) {
	wdir, mfile := c.String("wallet-dir"), c.String("mnemonic-file")
	switch {
	case wdir != "" && mfile != "":
		return nil, errors.New("give either --wallet-dir or --mnemonic-file, not both")
	case mfile != "":
		m, err := cliutil.ReadMnemonic(mfile, "", "faucet mnemonic: ") // the words or the JSON of 'coin-wallet new'
		if err != nil {
			return nil, fmt.Errorf("--mnemonic-file: %w", err)
		}
		ring, err := wallet.KeyringFromMnemonic(m, "", n, 0)
		if err != nil {
			return nil, fmt.Errorf("--mnemonic-file: %w", err)
		}
		defer ring.Wipe()
		k, err := ring.Key(0)
		if err != nil {
			return nil, err
		}
		return []wallet.Key{k}, nil
	case wdir != "":
		s, err := wallet.Open(wdir, n)
		if err != nil {
			return nil, fmt.Errorf("--wallet-dir: %w", err)
		}
		defer s.Close()
		pass, err := cliutil.SecretSource{Path: c.String("passphrase-file"), Env: "COIN_WALLET_PASSPHRASE", Prompt: "faucet wallet passphrase: ",
			Hint: "give --passphrase-file FILE or set COIN_WALLET_PASSPHRASE"}.ReadPassphrase("")
		if err != nil {
			return nil, err
		}
		return s.UnlockKeys(pass)
	}
	return nil, errors.New("the faucet needs funds: give --wallet-dir (with a passphrase) or --mnemonic-file")
}
