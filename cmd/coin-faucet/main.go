// Command coin-faucet is a small client of a coin-faucetd: claim testnet COIN for an
// address, or show the faucet's status.
package main

import (
	"os"

	"github.com/cointoolkit/coin/lib/cliutil"
)

func main() { cliutil.Exit(cliutil.Run(newApp(), os.Args)) }
