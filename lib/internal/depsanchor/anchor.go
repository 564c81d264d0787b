package depsanchor
import (
	_ "github.com/urfave/cli/v2"
	_ "github.com/syndtr/goleveldb/leveldb"
	_ "github.com/tyler-smith/go-bip39"
	_ "github.com/btcsuite/btcd/btcutil/bech32"
	_ "lukechampine.com/blake3"
	_ "github.com/olekukonko/tablewriter"
	_ "github.com/mattn/go-isatty"
	_ "golang.org/x/crypto/argon2"
	_ "golang.org/x/crypto/chacha20poly1305"
	_ "golang.org/x/sys/cpu"
	_ "golang.org/x/term"
)
