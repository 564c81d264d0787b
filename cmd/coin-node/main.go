// Command coin-node is the coin's full node: chain, UTXO set, mempool, P2P and JSON-RPC.
package main

import (
	"os"

	"github.com/cointoolkit/coin/lib/cliutil"
)

func main() { cliutil.Exit(cliutil.Run(newApp(), os.Args)) }
