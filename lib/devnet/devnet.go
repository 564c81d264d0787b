package devnet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cointoolkit/coin/lib/rpcapi"
)

// Error kinds of Run.
var (
	// ErrPortBusy: a port the devnet needs is taken (another devnet, a coin-node, anything).
	ErrPortBusy = errors.New("devnet: port in use")
	// ErrChildExited: one of the devnet's processes exited by itself.
	ErrChildExited = errors.New("devnet: a process exited")
	// ErrMissingTool: an executable the devnet runs is not in BinDir.
	ErrMissingTool = errors.New("devnet: executable not found")
	// ErrConfig: a Config value is out of range (a usage error of the command).
	ErrConfig = errors.New("devnet: bad setting")
)

// Defaults of Config.
const (
	DefaultBasePort = 38332
	DefaultInterval = 10 * time.Second
	MaxNodes        = 9
	// fundBlocks is how many blocks the first start mines before the faucet opens: the
	// example wallet's coinbases first, then the faucet's, so that fundFaucet of the
	// faucet's coinbases (50 COIN each) have passed coinbase maturity (100 blocks).
	fundExample = 4
	fundFaucet  = 60
	maturity    = 100
	fundBlocks  = fundExample + fundFaucet + maturity
)

// Config is what Run starts.
type Config struct {
	// Dir holds every process's data, the keys, state.json and logs/.
	Dir string
	// BinDir holds coin-node, coin-miner, coin-wallet and coin-faucetd.
	BinDir string
	// Nodes is how many connected nodes run (1 to MaxNodes); node 0 has the miner and the faucet.
	Nodes int
	// Interval is the miner's pace: at most one block per Interval.
	Interval time.Duration
	// Fresh removes Dir's contents before starting.
	Fresh bool
	// BasePort is node 0's RPC port; every other port is an offset from it (Ports).
	BasePort int
	// Out receives the screen (URLs, coin.conf, the example wallet, commands to try).
	Out io.Writer
	// Logger receives the devnet's own lines (starting, stopping, funding); nil for none.
	Logger *slog.Logger
}

// Ports are the loopback ports of a devnet, all offsets from one base.
type Ports struct {
	Base int
}

// NodeRPC is node i's JSON-RPC port (node 0: the base, regtest's default 38332).
func (p Ports) NodeRPC(i int) int { return p.Base + 10*i }

// NodeP2P is node i's P2P port.
func (p Ports) NodeP2P(i int) int { return p.Base + 10*i + 1 }

// NodeMetrics is node i's Prometheus port.
func (p Ports) NodeMetrics(i int) int { return p.Base + 10*i + 2 }

// Faucet is coin-faucetd's HTTP port (page, API, MCP, events).
func (p Ports) Faucet() int { return p.Base + 8 }

// FaucetMetrics is coin-faucetd's Prometheus port.
func (p Ports) FaucetMetrics() int { return p.Base + 9 }

// State is what a devnet keeps in Dir/state.json between starts.
type State struct {
	FaucetAddress  string `json:"faucet_address"`
	ExampleAddress string `json:"example_address"`
	Funded         bool   `json:"funded"`
}

// Paths of a devnet's files under Dir.
type Paths struct{ Dir string }

func (p Paths) State() string            { return filepath.Join(p.Dir, "state.json") }
func (p Paths) Node(i int) string        { return filepath.Join(p.Dir, "node"+strconv.Itoa(i)) }
func (p Paths) Faucet() string           { return filepath.Join(p.Dir, "faucet") }
func (p Paths) FaucetMnemonic() string   { return filepath.Join(p.Dir, "faucet.mnemonic") }
func (p Paths) Wallet() string           { return filepath.Join(p.Dir, "wallet") }
func (p Paths) WalletPassphrase() string { return filepath.Join(p.Dir, "wallet.passphrase") }
func (p Paths) Conf() string             { return filepath.Join(p.Dir, "coin.conf") }
func (p Paths) Logs() string             { return filepath.Join(p.Dir, "logs") }
func (p Paths) Log(name string) string   { return filepath.Join(p.Dir, "logs", name+".log") }

// Run starts the devnet, prints its screen and runs until ctx ends; then it stops every
// process it started and returns nil (the data stays). It returns an error when a port is
// taken, an executable is missing, the start fails, or a process exits by itself.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Nodes < 1 || cfg.Nodes > MaxNodes {
		return fmt.Errorf("%w: --nodes must be 1 to %d, not %d", ErrConfig, MaxNodes, cfg.Nodes)
	}
	if cfg.Interval <= 0 {
		return fmt.Errorf("%w: --interval must be positive, not %s", ErrConfig, cfg.Interval)
	}
	if cfg.BasePort <= 0 || cfg.BasePort+10*MaxNodes > 65535 {
		return fmt.Errorf("%w: --base-port %d is out of range", ErrConfig, cfg.BasePort)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	for _, tool := range []string{"coin-node", "coin-miner", "coin-wallet", "coin-faucetd"} {
		if _, err := os.Stat(filepath.Join(cfg.BinDir, tool)); err != nil {
			return fmt.Errorf("%w: %s in %s (run make build)", ErrMissingTool, tool, cfg.BinDir)
		}
	}
	ports := Ports{Base: cfg.BasePort}
	if err := checkPorts(ports, cfg.Nodes); err != nil {
		return err
	}
	paths := Paths{Dir: cfg.Dir}
	if cfg.Fresh {
		if err := os.RemoveAll(cfg.Dir); err != nil {
			return fmt.Errorf("devnet: --fresh: %w", err)
		}
	}
	if err := os.MkdirAll(paths.Logs(), 0o700); err != nil {
		return err
	}
	if err := os.Chmod(cfg.Dir, 0o700); err != nil {
		return err
	}

	// Every process reads the devnet's own coin.conf (never the user's ~/.coin/coin.conf,
	// which may name another network or credentials).
	if err := writeConf(paths.Conf(), ports); err != nil {
		return err
	}
	d := &devnet{cfg: cfg, ports: ports, paths: paths, sup: newSupervisor(cfg.Logger)}
	defer d.sup.stopAll()
	if err := d.start(ctx); err != nil {
		return err
	}
	d.printScreen()
	select {
	case <-ctx.Done():
		cfg.Logger.Info("devnet: stopping")
		return nil
	case err := <-d.sup.exited:
		return err
	}
}

type devnet struct {
	cfg   Config
	ports Ports
	paths Paths
	sup   *supervisor
	state State
}

func (d *devnet) rpcURL(i int) string {
	return "http://127.0.0.1:" + strconv.Itoa(d.ports.NodeRPC(i))
}

func (d *devnet) faucetURL() string {
	return "http://127.0.0.1:" + strconv.Itoa(d.ports.Faucet())
}

func (d *devnet) bin(tool string) string { return filepath.Join(d.cfg.BinDir, tool) }

// args puts --conf with the devnet's coin.conf before a tool's own arguments.
func (d *devnet) args(rest ...string) []string {
	return append([]string{"--conf", d.paths.Conf()}, rest...)
}

// start brings the network up in order: node 0, keys, funding, the other nodes, the miner,
// the faucet; each step waits until the previous one answers.
func (d *devnet) start(ctx context.Context) error {
	if err := d.startNode(ctx, 0); err != nil {
		return err
	}
	if err := d.loadOrMakeKeys(ctx); err != nil {
		return err
	}
	if err := d.fund(ctx); err != nil {
		return err
	}
	for i := 1; i < d.cfg.Nodes; i++ {
		if err := d.startNode(ctx, i); err != nil {
			return err
		}
	}
	if err := d.startMiner(); err != nil {
		return err
	}
	return d.startFaucet(ctx)
}

func (d *devnet) startNode(ctx context.Context, i int) error {
	args := []string{
		"--network", "regtest",
		"--data-dir", d.paths.Node(i),
		"--rpc-bind", "127.0.0.1:" + strconv.Itoa(d.ports.NodeRPC(i)),
		"--p2p-port", strconv.Itoa(d.ports.NodeP2P(i)),
		"--metrics-bind", "127.0.0.1:" + strconv.Itoa(d.ports.NodeMetrics(i)),
	}
	if i > 0 {
		// The other nodes keep node 0 connected and may find each other too.
		peer := "127.0.0.1:" + strconv.Itoa(d.ports.NodeP2P(0))
		if d.nodeHasFlag("--addnode") {
			args = append(args, "--addnode", peer)
		} else {
			args = append(args, "--connect", peer)
		}
	}
	name := "node" + strconv.Itoa(i)
	if err := d.sup.start(name, d.bin("coin-node"), d.args(args...), d.paths.Log(name), nil); err != nil {
		return err
	}
	return d.waitRPC(ctx, i)
}

// nodeHasFlag reports whether this coin-node knows flag (a build from before the flag
// existed falls back to an older one).
func (d *devnet) nodeHasFlag(flag string) bool {
	out, err := runTool(context.Background(), d.bin("coin-node"), nil, "--help")
	return err == nil && strings.Contains(out, flag+" ")
}

func (d *devnet) waitRPC(ctx context.Context, i int) error {
	c := rpcapi.NewClient(d.rpcURL(i))
	deadline := time.Now().Add(60 * time.Second)
	for {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := c.GetBlockCount(cctx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := d.sup.failed(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("devnet: node%d's RPC did not answer within 60 s: %w (log: %s)", i, err, d.paths.Log("node"+strconv.Itoa(i)))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// loadOrMakeKeys reads state.json, or makes the faucet's mnemonic file and the example
// wallet on the first start.
func (d *devnet) loadOrMakeKeys(ctx context.Context) error {
	b, err := os.ReadFile(d.paths.State())
	if err == nil {
		if err := json.Unmarshal(b, &d.state); err != nil {
			return fmt.Errorf("devnet: %s: %w (start over with --fresh)", d.paths.State(), err)
		}
		return nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var fresh struct{ Address, Mnemonic string }
	out, err := runTool(ctx, d.bin("coin-wallet"), nil, d.args("--network", "regtest", "new")...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(out), &fresh); err != nil || fresh.Mnemonic == "" {
		return fmt.Errorf("devnet: coin-wallet new answered no mnemonic: %v", err)
	}
	if err := writeSecret(d.paths.FaucetMnemonic(), fresh.Mnemonic+"\n"); err != nil {
		return err
	}
	pass := make([]byte, 16)
	if _, err := rand.Read(pass); err != nil {
		return err
	}
	if err := writeSecret(d.paths.WalletPassphrase(), hex.EncodeToString(pass)+"\n"); err != nil {
		return err
	}
	os.RemoveAll(d.paths.Wallet()) // a wallet left by a start that stopped before state.json
	out, err = runTool(ctx, d.bin("coin-wallet"), nil, d.walletArgs("create")...)
	if err != nil {
		return err
	}
	var created struct{ Address string }
	if err := json.Unmarshal([]byte(out), &created); err != nil || created.Address == "" {
		return fmt.Errorf("devnet: coin-wallet create answered no address: %v", err)
	}
	d.state = State{FaucetAddress: fresh.Address, ExampleAddress: created.Address}
	return d.saveState()
}

func (d *devnet) walletArgs(cmd ...string) []string {
	return d.args(append([]string{"--network", "regtest", "--rpc", d.rpcURL(0),
		"--wallet-dir", d.paths.Wallet(), "--passphrase-file", d.paths.WalletPassphrase()}, cmd...)...)
}

func (d *devnet) saveState() error {
	b, err := json.MarshalIndent(d.state, "", "  ")
	if err != nil {
		return err
	}
	tmp := d.paths.State() + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, d.paths.State())
}

// fund mines the first blocks of a new devnet: a few to the example wallet, then enough to
// the faucet that its coins have matured before it opens.
func (d *devnet) fund(ctx context.Context) error {
	c := rpcapi.NewClient(d.rpcURL(0))
	h, err := c.GetBlockCount(ctx)
	if err != nil {
		return err
	}
	if d.state.Funded || h >= fundBlocks {
		return nil
	}
	d.cfg.Logger.Info("devnet: mining the first blocks", "blocks", fundBlocks-h)
	plan := []struct {
		upTo uint64
		addr string
	}{{fundExample, d.state.ExampleAddress}, {fundBlocks, d.state.FaucetAddress}}
	for _, p := range plan {
		for h < p.upTo {
			n := min(p.upTo-h, 25)
			if _, err := c.GenerateToAddress(ctx, int(n), p.addr); err != nil {
				return fmt.Errorf("devnet: funding: %w", err)
			}
			h += n
		}
	}
	d.state.Funded = true
	return d.saveState()
}

func (d *devnet) startMiner() error {
	args := []string{"--rpc", d.rpcURL(0), "--network", "regtest",
		"--address", d.state.FaucetAddress, "--threads", "1",
		"--interval", d.cfg.Interval.String()}
	return d.sup.start("miner", d.bin("coin-miner"), d.args(args...), d.paths.Log("miner"), nil)
}

func (d *devnet) startFaucet(ctx context.Context) error {
	args := []string{"--network", "regtest", "--rpc", d.rpcURL(0),
		"--listen", "127.0.0.1:" + strconv.Itoa(d.ports.Faucet()),
		"--data-dir", d.paths.Faucet(),
		"--mnemonic-file", d.paths.FaucetMnemonic(),
		"--metrics-bind", "127.0.0.1:" + strconv.Itoa(d.ports.FaucetMetrics()),
		// A local network has one user: no per-client or hourly claim limits.
		"--claims-per-ip", "0", "--budget-per-hour", "0", "--ip-rate", "0",
		"--cooldown", "1s"}
	if err := d.sup.start("faucet", d.bin("coin-faucetd"), d.args(args...), d.paths.Log("faucet"), nil); err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if ok, _ := faucetReady(ctx, d.faucetURL()); ok {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := d.sup.failed(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("devnet: the faucet did not open within 60 s (log: %s)", d.paths.Log("faucet"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// faucetReady reports whether the faucet answers /api/status with a positive balance.
func faucetReady(ctx context.Context, url string) (bool, error) {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(cctx, http.MethodGet, url+"/api/status", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	var st struct {
		Balance json.RawMessage `json:"faucet_balance"`
	}
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("status %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return false, err
	}
	// Spendable once any digit of the balance (a number or a decimal string) is not zero.
	return strings.ContainsAny(string(st.Balance), "123456789"), nil
}

// checkPorts fails with ErrPortBusy on the first port of the layout that cannot be bound.
func checkPorts(p Ports, nodes int) error {
	type port struct {
		n    int
		what string
	}
	list := []port{{p.Faucet(), "faucet HTTP"}, {p.FaucetMetrics(), "faucet metrics"}}
	for i := 0; i < nodes; i++ {
		list = append(list,
			port{p.NodeRPC(i), fmt.Sprintf("node%d RPC", i)},
			port{p.NodeP2P(i), fmt.Sprintf("node%d P2P", i)},
			port{p.NodeMetrics(i), fmt.Sprintf("node%d metrics", i)})
	}
	for _, x := range list {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(x.n))
		if err != nil {
			return fmt.Errorf("%w: 127.0.0.1:%d (%s) is taken; is another devnet or coin-node running? Stop it, or pick other ports with --base-port", ErrPortBusy, x.n, x.what)
		}
		l.Close()
	}
	return nil
}

// writeSecret writes a secret file 0600 (its directory is 0700).
func writeSecret(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
