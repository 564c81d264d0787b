// Command coin-wallet is the coin's HD wallet: fresh mnemonics, an encrypted wallet
// directory, addresses, balances, UTXOs and transfers through a node's JSON-RPC port.
package main

import (
	"os"
	"syscall"

	"github.com/cointoolkit/coin/lib/cliutil"
)

func main() {
	// Everything coin-wallet creates is for its user alone (as bitcoind's umask(077)):
	// goleveldb would make the wallet's files 0644 otherwise. lib/wallet checks and fixes
	// the modes whatever the umask (perms.go).
	syscall.Umask(0o077)
	cliutil.Exit(cliutil.Run(newApp(), os.Args))
}
