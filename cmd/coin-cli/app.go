package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cointoolkit/coin/lib/cliutil"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

const appName = "coin-cli"

// Defaults of the global options.
const (
	defaultNetwork     = "mainnet"
	defaultTimeout     = 30 * time.Second
	defaultWaitTimeout = 30 * time.Second
)

// appDescription is the overview shown by --help and in the man page. urfave/cli does not
// wrap it, so the lines are kept short here.
var appDescription = strings.TrimSpace(`
coin-cli calls the JSON-RPC interface of a coin node, one subcommand per method, the way
bitcoin-cli does. Global options go before or after the method (not after a "--"); every
other word after the method is an argument of the call.

Connection: --rpc URL if given, otherwise http://127.0.0.1:PORT with the RPC port of
--network (mainnet 18332, testnet 28332, regtest 38332). The node serves RPC only when it
was started with --rpc-bind.

Arguments are converted by the method's parameter types: integers become JSON numbers
(anything else is refused before a request is sent), booleans accept true, false, 1 and 0,
and everything else is sent as a JSON string. "coin-cli call METHOD [PARAMS...]" calls any
method, sending each argument as JSON when it is valid JSON and as a string otherwise.
With --stdin the last argument is read from one line of standard input instead of the
command line, so long hex data and secrets stay out of argv and the shell history.

Output: a string result prints raw, so h=$(coin-cli getblockhash 0) works; null prints
nothing; numbers and booleans print bare; objects print as 2-space-indented JSON. A list of
objects prints as a table on a terminal or with --table, and as indented JSON otherwise.

Exit status: 0 on success. An RPC error prints "error code: N", "error message:" and the
message on standard error and exits with |N| modulo 256, or 1 when that is 0 (so -1 gives
1, -32601 "method not found" gives 89, -32602 "invalid params" gives 90). A usage error
(an unknown option or method, a wrong number of arguments) prints "error: ..." and exits 2.
Any other client-side failure (a bad argument, no connection, a timeout) prints
"error: ..." and exits 1.

Credentials: a node started with --rpc-auth wants HTTP Basic credentials. Give them in the
URL (--rpc http://USER:PASSWORD@HOST:PORT, better through COIN_RPC than on the command
line) or with --rpc-user USER and --rpc-password-file FILE (or COIN_RPC_PASSWORD, or a
prompt on a terminal). coin-cli never prints the password. "coin-cli rpcauth USER" makes the
node's --rpc-auth value and a fresh password.

Environment: COIN_RPC, COIN_NETWORK, COIN_TABLE, COIN_STDIN, COIN_RPCWAIT,
COIN_RPCWAIT_TIMEOUT, COIN_TIMEOUT, COIN_RPC_USER and COIN_RPC_PASSWORD_FILE set the global
options of the same names; COIN_RPC_PASSWORD holds the password itself.

"coin-cli METHOD --help" shows a method's arguments and result without a node;
"coin-cli help [METHOD]" asks the node itself.

Examples:

    coin-cli getblockcount
    coin-cli getblock $(coin-cli getblockhash 0)
    coin-cli --network regtest generatetoaddress 101 "$address"
    coin-cli --rpc http://127.0.0.1:28332 getblockchaininfo
    coin-cli --stdin sendrawtransaction < tx.hex
    coin-cli --table getutxosbyaddress "$address" true
    coin-cli --rpcwait --rpcwait-timeout 1m getblockcount
    coin-cli call listagents 0 10`)

// newApp builds the command line: global options, one subcommand per entry of
// rpcapi.Methods, the generic "call" and the hidden "gendoc".
func newApp() *cli.App {
	cmds := make([]*cli.Command, 0, len(rpcapi.Methods)+2)
	for _, m := range rpcapi.Methods {
		cmds = append(cmds, methodCommand(m))
	}
	cmds = append(cmds, callCommand(), rpcauthCommand(), dashboardCommand(), watchCommand(), cliutil.DocCommand())
	return cliutil.Conventions(&cli.App{
		Name:                 appName,
		Usage:                "call a coin node's JSON-RPC methods from the command line",
		UsageText:            appName + " [global options] METHOD [ARGUMENTS...]",
		Description:          appDescription,
		EnableBashCompletion: true,
		// The "help" subcommand is the node's help method: urfave/cli adds neither its own
		// help command nor its --help flag, and globalFlags declares --help itself.
		HideHelp:     true,
		OnUsageError: usageError,
		Flags:        globalFlags(),
		Commands:     cmds,
		Action:       rootAction,
	})
}

// globalFlags are the options that go before the method, each with an environment variable.
func globalFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "rpc", EnvVars: []string{"COIN_RPC"}, Usage: "node RPC `URL` (default: http://127.0.0.1:PORT for --network)"},
		&cli.StringFlag{Name: "network", EnvVars: []string{"COIN_NETWORK"}, Value: defaultNetwork,
			Usage: "`NET` whose default RPC port to use when --rpc is not given: mainnet, testnet or regtest"},
		&cli.BoolFlag{Name: "table", EnvVars: []string{"COIN_TABLE"}, Usage: "print lists of objects as a table even when standard output is not a terminal"},
		&cli.BoolFlag{Name: "stdin", EnvVars: []string{"COIN_STDIN"},
			Usage: "read the last argument from one line of standard input (-stdin works too)"},
		&cli.BoolFlag{Name: "rpcwait", EnvVars: []string{"COIN_RPCWAIT"}, Usage: "retry while the node's RPC port refuses connections (the node is starting)"},
		&cli.DurationFlag{Name: "rpcwait-timeout", EnvVars: []string{"COIN_RPCWAIT_TIMEOUT"}, Value: defaultWaitTimeout,
			Usage: "give up waiting with --rpcwait after this `DURATION`"},
		&cli.DurationFlag{Name: "timeout", EnvVars: []string{"COIN_TIMEOUT"}, Value: defaultTimeout,
			Usage: "give up on a call after `DURATION` (0: never)"},
		&cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "show help"},
	}, cliutil.RPCCredentialFlags()...)
}

// usageError replaces urfave/cli's "Incorrect Usage" and full help on standard output with
// one line on standard error.
func usageError(_ *cli.Context, err error, _ bool) error {
	return fmt.Errorf("%w (see '%s --help')", err, appName)
}

// rootAction runs when no subcommand matched: no method, or an unknown one, is a usage
// error (the help goes to standard output only when asked for, with --help).
func rootAction(c *cli.Context) error {
	if !c.Args().Present() {
		return &cliutil.ExitError{Code: cliutil.ExitUsage,
			Message: fmt.Sprintf("error: no method given: %s [global options] METHOD [ARGUMENTS...] (see '%s --help' for the methods)", appName, appName)}
	}
	name := c.Args().First()
	return &cliutil.ExitError{Code: cliutil.ExitUsage,
		Message: fmt.Sprintf("error: unknown method %q: see '%s --help' for the methods, or use '%s call %s [PARAMS...]' for a method %s does not list",
			name, appName, appName, name, appName)}
}

// options are the global options of one run, resolved.
type options struct {
	url         string // without credentials: safe to print
	auth        []jsonrpc.ClientOption
	user        string // the user of the credentials, if any
	network     *params.Network
	fromFlag    bool // url came from --rpc or COIN_RPC
	table       bool
	stdin       bool
	rpcwait     bool
	waitTimeout time.Duration
	timeout     time.Duration
	terminal    bool // standard output is a terminal
}

// globalOptions reads and checks the global options.
func globalOptions(c *cli.Context) (*options, error) {
	o := &options{
		table:       c.Bool("table"),
		stdin:       c.Bool("stdin"),
		rpcwait:     c.Bool("rpcwait"),
		waitTimeout: c.Duration("rpcwait-timeout"),
		timeout:     c.Duration("timeout"),
	}
	o.terminal = c.App.Writer == os.Stdout && cliutil.StdoutIsTerminal()
	if o.timeout < 0 || o.waitTimeout < 0 {
		return nil, errors.New("--timeout and --rpcwait-timeout must not be negative")
	}
	net, err := params.ByName(c.String("network"))
	if err != nil {
		return nil, fmt.Errorf("--network: %w", err)
	}
	o.network = net
	raw := c.String("rpc")
	u, err := rpcapi.NodeURL(raw, net)
	if err != nil {
		return nil, err
	}
	if o.url, o.auth, err = cliutil.NodeCredentials(c, u); err != nil {
		return nil, err
	}
	o.fromFlag = raw != ""
	if parsed, err := url.Parse(u); err == nil && parsed.User != nil {
		o.user = parsed.User.Username()
	}
	if o.user == "" {
		o.user = c.String("rpc-user")
	}
	return o, nil
}
