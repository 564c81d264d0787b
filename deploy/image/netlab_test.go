package image

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/cointoolkit/coin/lib/netlab"
)

// labValues are the chart values of the lab's network: six nodes and, in the chart's own
// config value (lines of every node's coin.conf, as an operator sets them), what the lab
// needs of a node: debug events of the node logger (the lab measures propagation from
// them), a small coin cache (six nodes on one machine) and no mempool file (the lab's
// settings). Nothing else differs from the chart's defaults.
const labValues = `
replicas: 6
config: |
  log-level=info,node=debug
  coin-cache-mb=16
  mempool-save-interval=0
`

// labNamespace is the namespace the chart is rendered for (its DNS names contain it).
const labNamespace = "lab"

// TestNetlabFromImage is the network lab (lib/netlab) on nodes started as the chart starts
// them: each of six nodes is the image's coin-node, run from the image's unpacked root
// filesystem under chroot as the image's user, in its own network namespace (delays of 10
// ms inside and 40 to 150 ms between three regions, jitter, loss), with the coin.conf the
// chart renders for node-i at /etc/coin/coin.conf and the chart's container arguments. The
// node's coin.conf is not changed: what a cluster gives a pod the lab gives the same way (the
// pod's IP in $(POD_IP) is the node's lab address, the rpcauth line in COIN_RPC_AUTH, a
// volume of its own at /data, and an /etc/hosts that answers the chart's DNS names, the
// headless Service with every node and each pod's name with its node, since the lab has no
// cluster DNS). It runs discovery (from the DNS seed and the ring of addnode the chart
// writes) and 20 s of steady state (three miners, a block every 3 s, transfers), and
// requires every block to reach every node, the chart's ring in the overlay, one UTXO set,
// and node 0 to accept the RPC Host names its coin.conf allows (rpc-allow-host) and no other. It needs root, network namespaces, unshare and chroot, and skips saying why without.
func TestNetlabFromImage(t *testing.T) {
	if testing.Short() {
		t.Skip("the network lab is not short")
	}
	needNamespaces(t)
	if err := netlab.Supported(); err != nil {
		t.Skip(err)
	}
	ch := renderLab(t, labValues)
	if ch.p2pPort != netlab.P2PPort || ch.rpcPort != netlab.RPCPort {
		t.Fatalf("the chart's regtest ports %d/%d are not the lab's %d/%d", ch.p2pPort, ch.rpcPort, netlab.P2PPort, netlab.RPCPort)
	}
	start := time.Now()
	root := unpack(t, buildLayout(t))
	t.Logf("image built and unpacked in %v", time.Since(start).Round(time.Millisecond))

	// The Secret's credentials: the nodes get the rpcauth line, the lab's clients the user
	// and password (its coin-cli and coin-miner from the environment, as the chart's miner).
	const user, password, salt = "coin", "netlab-from-image-password", "8899aabbccddeeff0011223344556677"
	m := hmac.New(sha256.New, []byte(salt))
	m.Write([]byte(password))
	t.Setenv("COIN_RPC_USER", user)
	t.Setenv("COIN_RPC_PASSWORD", password)

	const bound = 3 * time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	cfg := netlab.Config{Nodes: len(ch.confs), Regions: 3, IntraDelay: 10 * time.Millisecond, InterDelay: netlab.DefaultInter,
		Jitter: 0.1, Loss: 0.001, Miners: 3, Mode: netlab.ModeSeed, Seed: 1,
		BinDir: filepath.Join(root, BinDir), WorkDir: t.TempDir(), Logf: t.Logf}
	l, err := netlab.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	watchdog := time.AfterFunc(bound+time.Minute, func() {
		l.Close()
		panic("netlab from the image: the run exceeded its bound; the lab was removed")
	})
	defer watchdog.Stop()
	defer l.Close()
	err = l.UseImage(netlab.Image{Root: root, Node: filepath.Join(BinDir, "coin-node"), ConfPath: ConfPath, DataDir: DataDir,
		UID: UID, GID: GID,
		Conf: func(n *netlab.Node) []byte { return []byte(ch.confs[n.Index]) },
		Args: func(n *netlab.Node) []string {
			var a []string
			for _, s := range ch.args {
				a = append(a, strings.ReplaceAll(s, "$(POD_IP)", n.IP.String()))
			}
			return a
		},
		Env:   append(slices.Clone(Env), "COIN_NO_COLOR=1", "COIN_RPC_AUTH="+user+":"+salt+"$"+hex.EncodeToString(m.Sum(nil))),
		Hosts: ch.hosts, RPCUser: user, RPCPassword: password})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("lab of %d nodes from the image, set up in %v", len(l.Nodes), time.Since(start).Round(time.Millisecond))

	disc := l.Discovery(ctx, 30*time.Second)
	t.Logf("peers here: each node's coin.conf names the DNS seed (the headless Service: every node) and its chart addnode (the ring); the discovery lines below speak of the lab's own command line")
	logResult(t, disc)
	// The chart's ring: node-i added node-(i+1) by its pod's DNS name, so they are peers.
	adj, _ := l.Overlay(ctx)
	for i := range l.Nodes {
		if j := (i + 1) % len(l.Nodes); !adj[i][j] {
			t.Errorf("node %d and node %d (its addnode in the chart's coin.conf) are not peers: %v", i, j, adj[i])
		}
	}

	w := netlab.NewWallet()
	if err := l.Premine(ctx, l.Nodes[0], w, 103); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.WaitConverged(ctx, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := l.Fund(ctx, w, 1); err != nil {
		t.Fatal(err)
	}
	st := l.SteadyState(ctx, 20*time.Second, 3*time.Second, 2, w, l.Gateways(2))
	logResult(t, st)
	utxo, conduct, err := l.StateHashes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if utxo != 1 || conduct != 1 {
		t.Errorf("after the steady state the nodes have %d UTXO set hashes and %d conduct hashes, want 1 and 1", utxo, conduct)
	}
	for _, r := range []*netlab.Result{disc, st} {
		for _, f := range r.Failed {
			t.Errorf("%s: %s", r.Name, f)
		}
		for _, m := range r.Missed {
			t.Logf("%s: goal not met: %s", r.Name, m)
		}
	}
	// The names the chart lets the node's clients call its RPC by (rpc-allow-host: its RPC
	// Service's, as the chart's miners and faucet use) pass its Host check; another node's
	// names and a stranger's do not.
	n0 := l.Nodes[0]
	var allowed []string
	for _, kv := range confLines(ch.confs[0]) {
		if kv[0] == "rpc-allow-host" {
			allowed = append(allowed, kv[1])
		}
	}
	if len(allowed) == 0 {
		t.Fatal("node-0.conf lists no rpc-allow-host: the chart's miners and faucet could not call it by name")
	}
	want := map[string]int{"evil.example": http.StatusForbidden}
	for _, h := range allowed {
		want[h] = http.StatusOK
	}
	for _, kv := range confLines(ch.confs[1]) {
		if kv[0] == "rpc-allow-host" && !slices.Contains(allowed, kv[1]) {
			want[kv[1]] = http.StatusForbidden
		}
	}
	hc := &http.Client{Transport: &http.Transport{DialContext: netlab.DialIn(n0.NS, nil)}, Timeout: 10 * time.Second}
	for host, code := range want {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/", netlab.RPCPort),
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"getblockcount","params":[]}`))
		req.Host = fmt.Sprintf("%s:%d", host, netlab.RPCPort)
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth(user, password)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("Host %s: %v", host, err)
		}
		resp.Body.Close()
		if resp.StatusCode != code {
			t.Errorf("node 0 answered Host %s with %d, want %d", host, resp.StatusCode, code)
		}
	}
	// The chains are on the nodes' volumes, written by the image's user.
	for _, n := range l.Nodes {
		if st := statOwner(t, filepath.Join(n.DataDir, "volume", "regtest")); st != [2]int{UID, GID} {
			t.Errorf("node %d: its chain on the volume is owned by %v, want %d:%d", n.Index, st, UID, GID)
		}
	}
	t.Logf("lab from the image: %v in all", time.Since(start).Round(time.Second))
}

func logResult(t *testing.T, r *netlab.Result) {
	t.Logf("== %s", r.Name)
	for _, ln := range r.Lines {
		t.Logf("   %s", ln)
	}
}

// labChart is what the lab takes from the rendered chart.
type labChart struct {
	confs            []string         // node-i.conf, by i
	args             []string         // the coin-node container's arguments
	hosts            map[string][]int // the DNS names of the chart and the nodes they answer with
	p2pPort, rpcPort int
}

// renderLab renders the chart with values (release coin-network in namespace lab) and returns
// each node's coin.conf, the node container's arguments and the DNS names the cluster would
// answer: the headless Service with every node, each pod's name with its own. Every host a
// coin.conf names must be one of those names, so that the lab's hosts file stands in for
// every lookup the node makes.
func renderLab(t *testing.T, values string) labChart {
	t.Helper()
	cm, sts, rv := renderNodes(t, values, labNamespace)
	var lc labChart
	lc.args = sts.Spec.Template.Spec.Containers[0].Args
	n := int(*sts.Spec.Replicas)
	domain := rv["Values"].(chartutil.Values)["global"].(map[string]any)["clusterDomain"].(string)
	headless := fmt.Sprintf("%s.%s.svc.%s", sts.Spec.ServiceName, labNamespace, domain)
	lc.hosts = map[string][]int{headless: nil}
	for i := range n {
		lc.hosts[headless] = append(lc.hosts[headless], i)
		lc.hosts[fmt.Sprintf("%s-%d.%s", sts.Name, i, headless)] = []int{i}
		c, ok := cm.Data[fmt.Sprintf("node-%d.conf", i)]
		if !ok {
			t.Fatalf("no node-%d.conf in the ConfigMap", i)
		}
		lc.confs = append(lc.confs, c)
		for _, kv := range confLines(c) {
			if kv[0] == "p2p-bind" || kv[0] == "rpc-bind" {
				_, port, _ := net.SplitHostPort(kv[1])
				p, _ := strconv.Atoi(port)
				if kv[0] == "p2p-bind" {
					lc.p2pPort = p
				} else {
					lc.rpcPort = p
				}
			}
		}
	}
	// Every peer a coin.conf names is an IP address or a name of the lab's hosts file.
	for i, c := range lc.confs {
		for _, kv := range confLines(c) {
			if kv[0] == "seednode" || kv[0] == "addnode" || kv[0] == "connect" {
				host, _, err := net.SplitHostPort(kv[1])
				if _, ok := lc.hosts[host]; err != nil || !ok && net.ParseIP(host) == nil {
					t.Fatalf("node-%d.conf: %s=%s: no such name in the chart's network", i, kv[0], kv[1])
				}
			}
		}
	}
	return lc
}

// confLines are the key=value lines of a coin.conf outside any section.
func confLines(conf string) [][2]string {
	var kvs [][2]string
	for _, l := range strings.Split(conf, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") {
			break
		}
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, v, _ := strings.Cut(l, "=")
		kvs = append(kvs, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return kvs
}
