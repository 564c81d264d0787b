// Command coin-cli calls a coin node's JSON-RPC interface, one subcommand per method, with
// bitcoin-cli's habits: raw strings, JSON objects, |code| exit statuses. See app.go.
package main

import (
	"os"

	"github.com/cointoolkit/coin/lib/cliutil"
)

func main() { cliutil.Exit(cliutil.Run(newApp(), os.Args)) }
