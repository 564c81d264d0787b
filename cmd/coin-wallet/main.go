// Command coin-wallet is the coin's HD wallet: fresh mnemonics, an encrypted wallet
// directory, addresses, balances, UTXOs and transfers through a node's JSON-RPC port.
package main

import (
	"os"

	"github.com/cointoolkit/coin/lib/cliutil"
)

func main() { cliutil.Exit(newApp().Run(os.Args)) }
