// Command coin-miner mines blocks with a node's templates on every core (see lib/miner), or
// measures the hashrate with --benchmark. This package holds only the flags and the output.
package main

import (
	"os"

	"github.com/cointoolkit/coin/lib/cliutil"
)

func main() { cliutil.Exit(cliutil.Run(newApp(), os.Args)) }
