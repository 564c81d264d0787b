package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cointoolkit/coin/lib/cliutil"
	"github.com/cointoolkit/coin/lib/rpcauth"
)

// rpcauthCommand is "rpcauth USER": the --rpc-auth value for coin-node and a fresh random
// password, as Bitcoin Core's share/rpcauth/rpcauth.py prints them. It calls no node.
func rpcauthCommand() *cli.Command {
	return &cli.Command{
		Name:      "rpcauth",
		Category:  "util",
		Usage:     "Make credentials for coin-node --rpc-auth: prints the USER:SALT$HASH value and a fresh password (no node is called).",
		ArgsUsage: "<user>",
		UsageText: manUsage("rpcauth", "[--json] <user>"),
		Description: strings.TrimSpace(`
Draws a random 16-byte salt and a random 32-byte password (base64url), and prints the
value for coin-node --rpc-auth (USER:SALT$HASH, HASH = hex HMAC-SHA256 keyed by SALT of the
password, Bitcoin Core's rpcauth form) and the password. The node keeps only the hash.
Give the password to the clients: in the URL (COIN_RPC=http://USER:PASSWORD@HOST:PORT) or
with --rpc-user USER --rpc-password-file FILE. Quote the --rpc-auth value with single
quotes: a shell expands $ in double quotes. With --json the three values print as one
JSON object (user, password, rpcauth).

Example:

    coin-cli rpcauth alice
    coin-node --rpc-bind 0.0.0.0:38332 --rpc-auth 'alice:2f8e…$9c1d…'`),
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print user, password and rpcauth as a JSON object"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return &cliutil.ExitError{Code: cliutil.ExitUsage,
					Message: "error: rpcauth: want one argument, the user name\nusage: " + usageLine("rpcauth", "[--json] <user>")}
			}
			user := c.Args().First()
			line, pass, err := rpcauth.Generate(user)
			if err != nil {
				return cliutil.BadUsage(c, fmt.Errorf("rpcauth: %w", err))
			}
			if c.Bool("json") {
				return cliutil.PrintJSON(c.App.Writer, map[string]string{"user": user, "password": pass, "rpcauth": line})
			}
			_, err = fmt.Fprintf(c.App.Writer, "String to be given to coin-node (--rpc-auth or COIN_RPC_AUTH):\n--rpc-auth '%s'\nYour password:\n%s\n", line, pass)
			return err
		},
	}
}
