package devnet

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// confText is the coin.conf that points every tool at the devnet: the node's RPC for
// coin-cli, coin-wallet and coin-miner, the faucet for coin-faucet (docs/operations.md,
// "The configuration file").
func confText(p Ports, faucetURL string) string {
	return fmt.Sprintf(`# coin.conf of a devnet: every tool given --conf with this file talks to it.
network=regtest

[regtest]
rpc-bind=127.0.0.1:%d
faucet=%s
`, p.NodeRPC(0), faucetURL)
}

func writeConf(path string, p Ports) error {
	url := "http://127.0.0.1:" + strconv.Itoa(p.Faucet())
	return os.WriteFile(path, []byte(confText(p, url)), 0o600)
}

// shown is how a path is printed: relative to the working directory when it is below it
// (with a "./" when it has no directory part, so an executable's name still runs).
func shown(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	rel, err := filepath.Rel(wd, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return path
	}
	if !strings.ContainsRune(rel, filepath.Separator) {
		return "." + string(filepath.Separator) + rel
	}
	return rel
}

// printScreen writes the one screen a user needs: where everything is and what to try.
func (d *devnet) printScreen() {
	w := d.cfg.Out
	p := d.ports
	f := d.faucetURL()
	bin := func(tool string) string { return shown(filepath.Join(d.cfg.BinDir, tool)) }
	conf := shown(d.paths.Conf())
	fmt.Fprintf(w, "\nCOIN devnet is running: regtest, data in %s. Ctrl-C stops it and keeps the data.\n\n", shown(d.cfg.Dir))
	fmt.Fprintf(w, "  node RPC     http://127.0.0.1:%d\n", p.NodeRPC(0))
	fmt.Fprintf(w, "  faucet page  %s/\n", f)
	fmt.Fprintf(w, "  MCP          %s/mcp\n", f)
	fmt.Fprintf(w, "  events       %s/api/agent/events\n", f)
	fmt.Fprintf(w, "  metrics      http://127.0.0.1:%d/metrics (node)  http://127.0.0.1:%d/metrics (faucet)\n", p.NodeMetrics(0), p.FaucetMetrics())
	for i := 1; i < d.cfg.Nodes; i++ {
		fmt.Fprintf(w, "  node%d        RPC http://127.0.0.1:%d  P2P 127.0.0.1:%d\n", i, p.NodeRPC(i), p.NodeP2P(i))
	}
	fmt.Fprintf(w, "  mining       one block every %s, paid to the faucet (%s)\n", d.cfg.Interval, d.state.FaucetAddress)
	fmt.Fprintf(w, "  logs         %s\n\n", shown(d.paths.Logs()))
	fmt.Fprintf(w, "coin.conf (%s):\n", conf)
	for _, l := range strings.Split(strings.TrimRight(confText(p, f), "\n"), "\n") {
		fmt.Fprintf(w, "  %s\n", l)
	}
	fmt.Fprintf(w, "\nExample wallet, funded: %s\n", d.state.ExampleAddress)
	wallet := fmt.Sprintf("%s --conf %s --wallet-dir %s --passphrase-file %s", bin("coin-wallet"), conf, shown(d.paths.Wallet()), shown(d.paths.WalletPassphrase()))
	fmt.Fprintf(w, "  %s balance\n\n", wallet)
	fmt.Fprintf(w, "Try:\n")
	fmt.Fprintf(w, "  %s --conf %s claim %s\n", bin("coin-faucet"), conf, d.state.ExampleAddress)
	fmt.Fprintf(w, "  %s agent register\n", wallet)
	fmt.Fprintf(w, "  %s --conf %s dashboard\n\n", bin("coin-cli"), conf)
}
