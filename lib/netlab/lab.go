package netlab

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// Ports every node uses inside its own namespace (each namespace has its own stack).
const (
	P2PPort = 38333
	RPCPort = 38332
)

// PeerMode is how nodes learn their peers.
type PeerMode string

const (
	// ModeSeed: each node knows one seed (--seednode) and finds the rest by address gossip;
	// --p2p-bind puts the listener on the node's lab address.
	ModeSeed PeerMode = "seednode"
	// ModeConnect: coin-node has no --seednode; each node is given --connect to a few
	// others across regions (the only peers it dials).
	ModeConnect PeerMode = "connect"
)

// DetectMode is ModeSeed when coin-node's --help lists --seednode, --addnode and
// --p2p-bind, else ModeConnect.
func DetectMode(coinNode string) PeerMode {
	if hasFlags(coinNode, "--seednode", "--addnode", "--p2p-bind") {
		return ModeSeed
	}
	return ModeConnect
}

// hasFlags reports whether coin-node's --help lists every flag.
func hasFlags(coinNode string, flags ...string) bool {
	out, _ := exec.Command(coinNode, "--help").CombinedOutput()
	for _, f := range flags {
		if !strings.Contains(string(out), f+" ") {
			return false
		}
	}
	return true
}

// Config is a lab's shape.
type Config struct {
	Nodes      int             // coin-node processes
	Regions    int             // regions the nodes are spread over (round robin)
	IntraDelay time.Duration   // one-way delay inside a region
	InterDelay []time.Duration // one-way delay between regions i<j, in the order (0,1), (0,2), (1,2), ...
	Jitter     float64         // ± share of each delay
	Loss       float64         // share of frames lost
	Miners     int             // nodes that mine (spread over the regions)
	Outbound   int             // ModeConnect: --connect peers per node
	Attacker   int             // addresses of the attacker namespace (one /24); 0: none
	BinDir     string          // holds coin-node, coin-miner, coin-cli
	WorkDir    string          // data directories and logs
	Mode       PeerMode        // "" : DetectMode
	Seed       uint64          // the random choices (topology, miners, kills)
	Logf       func(format string, args ...any)
}

// Node is one coin-node in its namespace.
type Node struct {
	Index, Region int
	IP            netip.Addr
	NS            string
	DataDir       string
	LogPath       string
	Miner         bool
	Connect       []string // ModeConnect: its --connect peers
	RPC           *rpcapi.Client
	port          *Port

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Addr is the node's P2P address.
func (n *Node) Addr() string { return netip.AddrPortFrom(n.IP, P2PPort).String() }

// Lab is a running network.
type Lab struct {
	Cfg      Config
	Mode     PeerMode
	Nodes    []*Node
	Hub      string
	Attacker *Port // nil without Config.Attacker
	AtkNS    string
	Fwd      *Forwarder
	Rand     *rand.Rand
	randMu   sync.Mutex
	// externalIP: coin-node has --externalip; in ModeSeed each node announces its lab address.
	externalIP bool
	// p2pBind: coin-node has --p2p-bind (regtest then binds loopback by default, so every
	// node binds its lab address).
	p2pBind  bool
	prefix   string
	nsList   []string
	closeOne sync.Once
	sigStop  chan struct{}

	// command, when set, builds node n's process in place of BinDir's coin-node with args
	// (UseImage: the node from a container image's root filesystem, image.go).
	command func(n *Node, args []string) *exec.Cmd
}

// DefaultInter is the default between-region one-way delays (40 to 150 ms).
var DefaultInter = []time.Duration{40 * time.Millisecond, 150 * time.Millisecond, 90 * time.Millisecond}

// regionDelay is the one-way delay between regions a and b.
func (c *Config) regionDelay(a, b int) time.Duration {
	if a == b {
		return c.IntraDelay
	}
	if a > b {
		a, b = b, a
	}
	k := 0
	for i := 0; i < c.Regions; i++ {
		for j := i + 1; j < c.Regions; j++ {
			if i == a && j == b {
				if k < len(c.InterDelay) {
					return c.InterDelay[k]
				}
				return c.InterDelay[len(c.InterDelay)-1]
			}
			k++
		}
	}
	return c.IntraDelay
}

func (l *Lab) logf(format string, args ...any) {
	if l.Cfg.Logf != nil {
		l.Cfg.Logf(format, args...)
	}
}

// New builds the namespaces, veths and forwarder of cfg and starts no node yet. Close
// removes all of it; New also installs a SIGINT/SIGTERM handler that does.
func New(cfg Config) (l *Lab, err error) {
	if err := Supported(); err != nil {
		return nil, err
	}
	if removed := CleanStale(); len(removed) > 0 && cfg.Logf != nil {
		cfg.Logf("removed %d namespaces of an earlier crashed run", len(removed))
	}
	if cfg.Mode == "" {
		cfg.Mode = DetectMode(filepath.Join(cfg.BinDir, "coin-node"))
	}
	externalIP := hasFlags(filepath.Join(cfg.BinDir, "coin-node"), "--externalip")
	p2pBind := hasFlags(filepath.Join(cfg.BinDir, "coin-node"), "--p2p-bind")
	l = &Lab{Cfg: cfg, Mode: cfg.Mode, externalIP: externalIP, p2pBind: p2pBind, Rand: rand.New(rand.NewPCG(cfg.Seed, 77)),
		prefix: fmt.Sprintf("%s%d-", Prefix, os.Getpid()), sigStop: make(chan struct{})}
	l.Hub = l.prefix + "hub"
	defer func() {
		if err != nil {
			l.Close()
			l = nil
		}
	}()
	l.watchSignals()
	if err := l.addNetns(l.Hub); err != nil {
		return nil, err
	}
	var ports []*Port
	// Miners are spread over the regions: node i is in region i%Regions.
	for i := 0; i < cfg.Nodes; i++ {
		n := &Node{Index: i, Region: i % cfg.Regions, NS: fmt.Sprintf("%sn%02d", l.prefix, i),
			// Each node in a network group (IPv4 /16) of its own, as hosts on the internet
			// are: outbound peers are drawn from distinct groups (docs/p2p.md).
			IP:      netip.AddrFrom4([4]byte{10, byte(10 + i), byte(1 + i%cfg.Regions), 10}),
			DataDir: filepath.Join(cfg.WorkDir, fmt.Sprintf("n%02d", i)), Miner: i < cfg.Miners}
		n.LogPath = filepath.Join(n.DataDir, "lab.log")
		if err := os.MkdirAll(n.DataDir, 0o700); err != nil {
			return nil, err
		}
		if err := l.addNetns(n.NS); err != nil {
			return nil, err
		}
		n.port = &Port{Name: fmt.Sprintf("h%02d", i), Region: n.Region, Addrs: []netip.Addr{n.IP}}
		if err := l.plug(n.NS, n.port, mac(0, i), []netip.Addr{n.IP}); err != nil {
			return nil, err
		}
		hc := &http.Client{Transport: &http.Transport{DialContext: DialIn(n.NS, nil), MaxIdleConnsPerHost: 8}}
		n.RPC = rpcapi.NewClient(fmt.Sprintf("http://127.0.0.1:%d", RPCPort), jsonrpc.WithHTTPClient(hc), jsonrpc.WithTimeout(60*time.Second))
		l.Nodes = append(l.Nodes, n)
		ports = append(ports, n.port)
	}
	if cfg.Attacker > 0 {
		l.AtkNS = l.prefix + "atk"
		if err := l.addNetns(l.AtkNS); err != nil {
			return nil, err
		}
		var addrs []netip.Addr
		for i := 0; i < cfg.Attacker; i++ {
			addrs = append(addrs, netip.AddrFrom4([4]byte{10, 77, 99, byte(1 + i)}))
		}
		l.Attacker = &Port{Name: "hatk", Region: 0, Addrs: addrs}
		if err := l.plug(l.AtkNS, l.Attacker, mac(1, 0), addrs); err != nil {
			return nil, err
		}
		ports = append(ports, l.Attacker)
	}
	// Static neighbours: every namespace knows every lab address's MAC, so no ARP crosses
	// the forwarder.
	type nsMAC struct {
		ns  string
		mac string
	}
	var all []struct {
		ip  netip.Addr
		mac string
	}
	var owners []nsMAC
	for i, n := range l.Nodes {
		all = append(all, struct {
			ip  netip.Addr
			mac string
		}{n.IP, mac(0, i)})
		owners = append(owners, nsMAC{n.NS, mac(0, i)})
	}
	if l.Attacker != nil {
		for _, a := range l.Attacker.Addrs {
			all = append(all, struct {
				ip  netip.Addr
				mac string
			}{a, mac(1, 0)})
		}
		owners = append(owners, nsMAC{l.AtkNS, mac(1, 0)})
	}
	for _, o := range owners {
		var lines []string
		for _, a := range all {
			if a.mac != o.mac {
				lines = append(lines, fmt.Sprintf("neigh replace %s lladdr %s dev eth0 nud permanent", a.ip, a.mac))
			}
		}
		if err := ipBatch(o.ns, lines); err != nil {
			return nil, err
		}
	}
	model := LinkModel{Jitter: cfg.Jitter, Loss: cfg.Loss,
		Delay: func(a, b *Port) time.Duration { return cfg.regionDelay(a.Region, b.Region) }}
	if l.Fwd, err = NewForwarder(l.Hub, ports, model); err != nil {
		return nil, err
	}
	l.planTopology()
	return l, nil
}

func mac(kind, i int) string { return fmt.Sprintf("02:77:00:00:%02x:%02x", kind, i+1) }

// addNetns creates ns (remembered for Close) with IPv6 off and loopback up.
func (l *Lab) addNetns(ns string) error {
	if err := run("ip", "netns", "add", ns); err != nil {
		return err
	}
	l.nsList = append(l.nsList, ns)
	if err := run("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"); err != nil {
		return err
	}
	return run("ip", "-n", ns, "link", "set", "lo", "up")
}

// plug joins ns to the hub: a veth with eth0 (MAC m, the addresses in 10.0.0.0/8) in ns
// and p.Name in the hub, offloads off on both ends (a re-injected TCP segment must carry a
// finished checksum and fit the MTU).
func (l *Lab) plug(ns string, p *Port, m string, addrs []netip.Addr) error {
	if err := run("ip", "-n", l.Hub, "link", "add", p.Name, "type", "veth", "peer", "name", "eth0", "netns", ns); err != nil {
		return err
	}
	lines := []string{"link set eth0 address " + m}
	for _, a := range addrs {
		lines = append(lines, fmt.Sprintf("addr add %s/8 dev eth0", a))
	}
	lines = append(lines, "link set eth0 up")
	if err := ipBatch(ns, lines); err != nil {
		return err
	}
	if err := ipBatch(l.Hub, []string{"link set " + p.Name + " promisc on", "link set " + p.Name + " up"}); err != nil {
		return err
	}
	off := []string{"tx", "off", "tso", "off", "gso", "off", "gro", "off"}
	if err := run("ip", append([]string{"netns", "exec", ns, "ethtool", "-K", "eth0"}, off...)...); err != nil {
		return err
	}
	return run("ip", append([]string{"netns", "exec", l.Hub, "ethtool", "-K", p.Name}, off...)...)
}

// planTopology gives each node its --connect peers in ModeConnect: one in its own region
// and the rest in other regions, chosen at random, never a pair both ways.
func (l *Lab) planTopology() {
	if l.Mode != ModeConnect {
		return
	}
	k := max(l.Cfg.Outbound, 1)
	has := map[[2]int]bool{}
	for _, n := range l.Nodes {
		var same, other []int
		for _, m := range l.Nodes {
			if m == n || has[[2]int{m.Index, n.Index}] {
				continue
			}
			if m.Region == n.Region {
				same = append(same, m.Index)
			} else {
				other = append(other, m.Index)
			}
		}
		l.Rand.Shuffle(len(same), func(i, j int) { same[i], same[j] = same[j], same[i] })
		l.Rand.Shuffle(len(other), func(i, j int) { other[i], other[j] = other[j], other[i] })
		var pick []int
		if len(same) > 0 {
			pick = append(pick, same[0])
			same = same[1:]
		}
		rest := append(other, same...)
		for len(pick) < k && len(rest) > 0 {
			pick = append(pick, rest[0])
			rest = rest[1:]
		}
		for _, j := range pick {
			has[[2]int{n.Index, j}] = true
			n.Connect = append(n.Connect, l.Nodes[j].Addr())
		}
	}
}

// NodeArgs is node n's command line after the executable: the one place the peer mode
// decides how a node finds the others.
func (l *Lab) NodeArgs(n *Node) []string {
	args := []string{"--network", "regtest", "--data-dir", n.DataDir,
		"--rpc-bind", fmt.Sprintf("127.0.0.1:%d", RPCPort), "--p2p-port", fmt.Sprint(P2PPort),
		"--log-format", "json", "--log-level", "info,node=debug,p2p=debug", "--mempool-save-interval", "0",
		"--coin-cache-mb", "16", "--max-peers", "8"}
	switch l.Mode {
	case ModeSeed:
		args = append(args, "--p2p-bind", n.Addr())
		if l.externalIP {
			args = append(args, "--externalip", n.IP.String())
		}
		if n.Index != 0 {
			args = append(args, "--seednode", l.Nodes[0].Addr())
		} else if len(l.Nodes) > 1 {
			args = append(args, "--seednode", l.Nodes[1].Addr())
		}
	default:
		if l.p2pBind {
			args = append(args, "--p2p-bind", n.Addr())
		}
		for _, c := range n.Connect {
			args = append(args, "--connect", c)
		}
	}
	return args
}

// Start runs node n (again after a stop or kill) and waits until it answers RPC.
func (l *Lab) Start(ctx context.Context, n *Node) error {
	n.mu.Lock()
	if n.cmd != nil {
		n.mu.Unlock()
		return fmt.Errorf("node %d is running", n.Index)
	}
	logf, err := os.OpenFile(n.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		n.mu.Unlock()
		return err
	}
	cmd := exec.Command("ip", append([]string{"netns", "exec", n.NS, filepath.Join(l.Cfg.BinDir, "coin-node")}, l.NodeArgs(n)...)...)
	if l.command != nil {
		cmd = l.command(n, l.NodeArgs(n))
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group (a terminal's Ctrl-C reaches the lab, which stops the nodes), and
	// killed with the lab if the lab dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		n.mu.Unlock()
		return err
	}
	done := make(chan struct{})
	n.cmd, n.done = cmd, done
	n.mu.Unlock()
	go func() {
		cmd.Wait()
		logf.Close()
		close(done)
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := n.RPC.GetBlockCount(c)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("node %d exited at start: %s", n.Index, tail(n.LogPath, 5))
		default:
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("node %d did not answer RPC: %v", n.Index, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Running reports whether n's process is up.
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cmd != nil
}

// Kill stops n: SIGKILL when hard, else SIGTERM (SIGKILL after 20 s); it waits for the exit.
func (l *Lab) Kill(n *Node, hard bool) {
	n.mu.Lock()
	cmd, done := n.cmd, n.done
	n.cmd = nil
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	if hard {
		cmd.Process.Kill()
	} else {
		cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// StartAll starts every node, a few at a time.
func (l *Lab) StartAll(ctx context.Context) error {
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	errs := make([]error, len(l.Nodes))
	for i, n := range l.Nodes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = l.Start(ctx, n)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close stops every node, the forwarder, and deletes the namespaces. It is safe to call
// more than once and from a signal.
func (l *Lab) Close() {
	l.closeOne.Do(func() {
		close(l.sigStop)
		var wg sync.WaitGroup
		for _, n := range l.Nodes {
			wg.Add(1)
			go func() { defer wg.Done(); l.Kill(n, false) }()
		}
		wg.Wait()
		if l.Fwd != nil {
			l.Fwd.Close()
		}
		for _, ns := range l.nsList {
			deleteNetns(ns)
		}
		for _, n := range l.Nodes {
			n.RPC.Close()
		}
	})
}

// watchSignals closes the lab on SIGINT or SIGTERM, then exits 130.
func (l *Lab) watchSignals() {
	ch := make(chan os.Signal, 1)
	signalNotify(ch)
	go func() {
		select {
		case s := <-ch:
			fmt.Fprintf(os.Stderr, "netlab: %v: removing the lab\n", s)
			l.Close()
			os.Exit(130)
		case <-l.sigStop:
			signalStop(ch)
		}
	}()
}

// tail is the last n lines of a file.
func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
