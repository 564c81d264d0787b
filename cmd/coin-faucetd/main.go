// Command coin-faucetd is the testnet faucet service: the HTTP/JSON API of wallet helpers,
// faucet claims, status and balances, paying claims from the faucet's funds through a
// node's JSON-RPC port.
package main

import (
	"os"

	"github.com/cointoolkit/coin/lib/cliutil"
)

func main() { cliutil.Exit(cliutil.Run(newApp(), os.Args)) }
