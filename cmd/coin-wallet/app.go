package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cointoolkit/coin/lib/cliutil"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/wallet"
	"github.com/urfave/cli/v2"
)

const appName = "coin-wallet"

// passphraseEnv holds the wallet passphrase when no --passphrase-file is given.
const passphraseEnv = "COIN_WALLET_PASSPHRASE"

const appDescription = `coin-wallet derives keys from a BIP-39 mnemonic (SLIP-0010 ed25519 at
m/44'/COIN_TYPE'/account'/0'/index'), keeps the seed encrypted in a wallet directory
(XChaCha20-Poly1305 under an argon2id key from the passphrase) and talks to a node's
JSON-RPC port for balances, UTXOs, transfers and the Proof of Conduct operations of its
first address ('agent': register, vouch, contract create|fulfil|refund|show, review,
profile, list; see 'coin-wallet agent --help').

Commands that need no wallet directory: new, derive. Commands that need no passphrase:
address, balance, utxos, resend, agent profile|list|contract show. create, restore, send,
consolidate, address --new and the agent commands that sign ask for the passphrase:
from --passphrase-file, else the COIN_WALLET_PASSPHRASE environment variable, else a
terminal prompt (on /dev/tty when standard input holds the mnemonic, as in 'restore <
wallet.json'). Mnemonics, the words or the JSON of 'new', are read from standard input or
a file, never from arguments.

Output: new, create, restore, balance and utxos print JSON when standard output is not a
terminal (or with --json) and readable text on a terminal; address and derive print the
address and send prints the txid as plain text, or an object with --json; the agent
commands print JSON when piped and a table on a terminal. Amounts are COIN with 8
decimals.

Unconfirmed transactions: the wallet keeps every transaction it broadcasts in its
directory until it is mined with 6 confirmations or conflicted (an input spent by another
mined transaction). Every command that talks to the node first re-sends those the node
does not have (it may have lost its mempool) and says so on standard error; 'resend' does
only that and lists each one.

Concentration decay (docs/protocol.md §8): the outputs of a cluster (addresses that have spent
together) holding more than 0.1% of the supply lose value every block. balance and utxos
show both the nominal value and the effective value at the next block, which is what send
can spend; balance also shows the cluster's yearly decay rate. send pays, on top of the
fee rate, a decay margin: what the selected outputs would lose if the transaction were
mined 6 blocks after the next, so that it still gets mined then (see 'coin-wallet send
--help'); the margin is 0 when nothing decays.

Examples:
   coin-wallet --network regtest new
   coin-wallet new | coin-faucet claim      (claims for the mnemonic's address on the faucet's network)
   coin-wallet --network testnet restore < wallet.json     (asks for a passphrase)
   coin-wallet --network testnet consolidate
   coin-wallet --network testnet create --passphrase-file pass.txt
   coin-wallet --network testnet restore --passphrase-file pass.txt < mnemonic.txt
   coin-wallet --network testnet balance
   coin-wallet --network testnet send --to tcoin1... --amount 1.5
   echo "$MNEMONIC" | coin-wallet --network testnet derive --index 3
   coin-wallet --network testnet agent register
   coin-wallet --network testnet agent contract create --counterparty tcoin1... --amount 2

Exit status: 0 on success; an error the node returned prints "error code: N",
"error message:" and the message, and exits with |N|; any other error prints
"error: ..." and exits 1.`

func newApp() *cli.App {
	cmds := []*cli.Command{cmdNew(), cmdCreate(), cmdRestore(), cmdAddress(), cmdDerive(), cmdBalance(), cmdUTXOs(), cmdSend(), cmdConsolidate(), cmdResend(), cmdAgent()}
	for _, c := range cmds {
		// --json works before and after the command name.
		c.Flags = append(c.Flags, &cli.BoolFlag{Name: "json", Usage: "print JSON even on a terminal"})
	}
	return cliutil.Conventions(&cli.App{
		Name:                 appName,
		Usage:                "BIP-39 HD wallet of the COIN network",
		Description:          appDescription,
		EnableBashCompletion: true,
		HideHelpCommand:      true,
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return fmt.Errorf("%w (see '%s --help')", err, appName)
		},
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "network", Value: "mainnet", EnvVars: []string{"COIN_NETWORK"}, Usage: "`NET`: mainnet, testnet or regtest"},
			&cli.StringFlag{Name: "rpc", EnvVars: []string{"COIN_RPC"}, Usage: "node RPC `URL` (default: http://127.0.0.1:PORT with the RPC port of --network); credentials as http://USER:PASSWORD@HOST:PORT or --rpc-user"},
			&cli.StringFlag{Name: "wallet-dir", EnvVars: []string{"COIN_WALLET_DIR"}, Usage: "wallet `DIR` (default: ~/.coin/<network>/wallet)"},
			&cli.StringFlag{Name: "passphrase-file", EnvVars: []string{"COIN_WALLET_PASSPHRASE_FILE"},
				Usage: "read the wallet passphrase from `FILE` (default: the " + passphraseEnv + " environment variable, else a terminal prompt)"},
			&cli.BoolFlag{Name: "json", EnvVars: []string{"COIN_JSON"}, Usage: "print JSON even on a terminal"},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, EnvVars: []string{"COIN_TIMEOUT"}, Usage: "give up on a node call after `DURATION`"},
		}, cliutil.RPCCredentialFlags()...),
		Commands: append(cmds, cliutil.DocCommand()),
	})
}

// env is one run's resolved global options.
type env struct {
	c        *cli.Context
	net      *params.Network
	rpcURL   string                 // without credentials: safe to print
	rpcAuth  []jsonrpc.ClientOption // the node credentials, if any
	json     bool                   // print JSON (not a terminal, or --json)
	jsonFlag bool                   // --json was given (before or after the command: cliutil.Conventions)
	timeout  time.Duration
	out      io.Writer
	in       io.Reader
}

func newEnv(c *cli.Context) (*env, error) {
	net, err := params.ByName(c.String("network"))
	if err != nil {
		return nil, fmt.Errorf("--network: %w", err)
	}
	e := &env{c: c, net: net, timeout: c.Duration("timeout"), out: c.App.Writer, in: c.App.Reader}
	if e.in == nil {
		e.in = os.Stdin
	}
	terminal := c.App.Writer == os.Stdout && cliutil.StdoutIsTerminal()
	e.jsonFlag = c.Bool("json")
	e.json = e.jsonFlag || !terminal
	if e.rpcURL, err = rpcapi.NodeURL(c.String("rpc"), net); err != nil {
		return nil, err
	}
	if e.rpcURL, e.rpcAuth, err = cliutil.NodeCredentials(c, e.rpcURL); err != nil {
		return nil, err
	}
	return e, nil
}

// walletDir is the wallet directory of an existing wallet: nothing is created.
func (e *env) walletDir() (string, error) { return e.walletDirFor(false) }

// newWalletDir is the wallet directory for create and restore: the default location's
// parents are created private.
func (e *env) newWalletDir() (string, error) { return e.walletDirFor(true) }

func (e *env) walletDirFor(create bool) (string, error) {
	if d := e.c.String("wallet-dir"); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no --wallet-dir and no home directory: %w", err)
	}
	netDir := e.net.DefaultDataDir(home)
	if err := privateTree(e.c.App.ErrWriter, create, home, filepath.Dir(netDir), netDir); err != nil {
		return "", err
	}
	return filepath.Join(netDir, "wallet"), nil
}

func (e *env) openStore() (*wallet.Store, error) {
	dir, err := e.walletDir()
	if err != nil {
		return nil, err
	}
	s, err := wallet.Open(dir, e.net)
	if errors.Is(err, wallet.ErrNoWallet) {
		return nil, fmt.Errorf("no wallet in %s: run '%s --network %s create' or 'restore' first (or give --wallet-dir)",
			dir, appName, e.net.Name)
	}
	return s, err
}

// passphrase reads the wallet passphrase (cliutil.SecretSource.ReadPassphrase): from
// --passphrase-file, else COIN_WALLET_PASSPHRASE, else a prompt without echo on the
// terminal, /dev/tty when standard input holds something else (restore < wallet.json);
// confirm asks twice on a terminal (create, restore).
func (e *env) passphrase(confirm bool) (string, error) {
	again := ""
	if confirm {
		again = "repeat the passphrase: "
	}
	src := cliutil.SecretSource{Path: e.c.String("passphrase-file"), Env: passphraseEnv, Prompt: "wallet passphrase: ", In: e.in,
		Hint: "give --passphrase-file FILE or set " + passphraseEnv}
	p, err := src.ReadPassphrase(again)
	if err != nil {
		return "", err
	}
	if p == "" {
		return "", wallet.ErrEmptyPassphrase
	}
	if confirm { // a new passphrase (create, restore)
		if w := cliutil.ShortPassphraseWarning(p); w != "" {
			fmt.Fprintln(e.c.App.ErrWriter, w)
		}
	}
	return p, nil
}

// readMnemonic reads a mnemonic from file (or standard input when file is empty or "-"),
// accepting the plain words or the JSON of 'coin-wallet new' (cliutil.ReadMnemonic). On a
// terminal it prompts without echo.
func (e *env) readMnemonic(file string) (string, error) {
	if file == "" {
		file = "-"
	}
	m, _, err := cliutil.SecretSource{Path: file, Prompt: "mnemonic: ", In: e.in,
		Hint: "pipe the mnemonic (or the JSON of 'coin-wallet new') to standard input or use --mnemonic-file"}.ReadMnemonic()
	return m, err
}

func (e *env) client() *rpcapi.Client {
	return rpcapi.NewClient(e.rpcURL, append([]jsonrpc.ClientOption{jsonrpc.WithTimeout(e.timeout)}, e.rpcAuth...)...)
}

func (e *env) ctx() (context.Context, context.CancelFunc) {
	return context.WithCancel(e.c.Context)
}

// nodeError turns a failed node call into what main prints: bitcoin-cli's "error code"
// text and status for an RPC error, a hint for a refused connection.
func (e *env) nodeError(err error) error {
	var re *jsonrpc.Error
	if errors.As(err, &re) {
		code := re.Code
		if code < 0 {
			code = -code
		}
		if code&0xff == 0 {
			code = 1
		}
		return &cliutil.ExitError{Code: code & 0xff, Message: fmt.Sprintf("error code: %d\nerror message:\n%s", re.Code, re.Message)}
	}
	if jsonrpc.IsConnRefused(err) {
		return fmt.Errorf("cannot connect to the node at %s: connection refused (is coin-node running with --rpc-bind, on --network %s?)",
			e.rpcURL, e.net.Name)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer from the node at %s within %s (raise --timeout)", e.rpcURL, e.timeout)
	}
	return err
}

func (e *env) printJSON(v any) error { return cliutil.PrintJSON(e.out, v) }

func (e *env) printf(format string, args ...any) error {
	_, err := fmt.Fprintf(e.out, format, args...)
	return err
}

func noArgs(c *cli.Context) error {
	if c.Args().Present() {
		return cliutil.UsageError(c, "unexpected argument %q", c.Args().First())
	}
	return nil
}
