package netlab

import (
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// The lab from a container image: each node is the image's coin-node, run from the image's
// unpacked root filesystem under chroot as the image's user, inside the node's network
// namespace, with the configuration a deployment gives it (deploy/image's netlab test: the
// coin-network chart's coin.conf of node-i). What a pod gets from Kubernetes the lab gives the
// same way: the node's own volume at the image's data directory, its own coin.conf at the
// image's configuration path (bind mounts in a mount namespace of its own, as the kubelet
// mounts a claim and a ConfigMap's file), an /etc/hosts that answers the cluster's DNS names
// with lab addresses (the lab has no cluster DNS; the kubelet also mounts /etc/hosts), and
// the environment of the pod's spec. The node's coin.conf is not changed.

// Image is how UseImage runs the nodes.
type Image struct {
	// Root is the unpacked root filesystem (every layer applied, owners kept).
	Root string
	// Node is coin-node's path inside Root (/usr/local/bin/coin-node).
	Node string
	// ConfPath and DataDir are the image's configuration file and volume (/etc/coin/coin.conf,
	// /data); each node gets its own file and directory mounted there.
	ConfPath, DataDir string
	// UID and GID are the image's user: the node runs as it and owns its volume.
	UID, GID int
	// Conf is node n's coin.conf (the chart's node-N.conf).
	Conf func(n *Node) []byte
	// Args are node n's arguments after coin-node (the chart's container args, the pod's
	// address being the node's lab address).
	Args func(n *Node) []string
	// Env is the nodes' environment: the image's and the pod spec's (the rpcauth line in
	// COIN_RPC_AUTH, as the chart's Secret gives it).
	Env []string
	// Hosts maps DNS names to the nodes whose lab addresses they resolve to (a headless
	// Service's name to every node, a pod's name to its node), written as each node's
	// /etc/hosts (hostsFile: the order of a name's addresses).
	Hosts map[string][]int
	// RPCUser and RPCPassword, when set, are the HTTP Basic credentials of the lab's RPC
	// client (the lab's coin-cli and coin-miner take them from COIN_RPC_USER and
	// COIN_RPC_PASSWORD of the lab's environment).
	RPCUser, RPCPassword string
}

// imageTools are the host's executables that set up a node's mount namespace and chroot.
var imageTools = []string{"unshare", "sh", "mount", "chroot"}

// UseImage makes every later Start run the node from img (call it after New, before the
// first Start). It writes each node's volume, coin.conf and hosts file under its DataDir.
// The node is one process from ip netns exec to coin-node (unshare --mount without --fork,
// sh and chroot exec), so the lab's SIGTERM and SIGKILL reach coin-node itself, as they do
// for a node run from BinDir; there is no PID namespace for that reason. chroot's change of
// user clears the parent-death signal, so a node outlives a lab killed with SIGKILL until
// the next lab's CleanStale kills the processes of the stale namespaces (Close and the
// lab's SIGINT/SIGTERM handler stop them as usual).
func (l *Lab) UseImage(img Image) error {
	paths := map[string]string{}
	for _, t := range imageTools {
		p, err := exec.LookPath(t)
		if err != nil {
			return fmt.Errorf("%w: %s is not installed (util-linux, coreutils)", ErrUnsupported, t)
		}
		paths[t] = p
	}
	for _, p := range []string{img.Node, img.ConfPath, img.DataDir} {
		if _, err := os.Stat(filepath.Join(img.Root, p)); err != nil {
			return fmt.Errorf("netlab: the image's root has no %s: %w", p, err)
		}
	}
	// The mount point of the hosts file, as a container runtime creates it.
	etcHosts := filepath.Join(img.Root, "etc", "hosts")
	if _, err := os.Stat(etcHosts); err != nil {
		if err := os.WriteFile(etcHosts, nil, 0o644); err != nil {
			return err
		}
	}
	for _, n := range l.Nodes {
		vol := filepath.Join(n.DataDir, "volume")
		if err := os.MkdirAll(vol, 0o700); err != nil {
			return err
		}
		if err := os.Chown(vol, img.UID, img.GID); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(n.DataDir, "coin.conf"), img.Conf(n), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(n.DataDir, "hosts"), []byte(l.hostsFile(n, img.Hosts)), 0o644); err != nil {
			return err
		}
		if img.RPCUser != "" {
			hc := &http.Client{Transport: &http.Transport{DialContext: DialIn(n.NS, nil), MaxIdleConnsPerHost: 8}}
			n.RPC.Close()
			n.RPC = rpcapi.NewClient(fmt.Sprintf("http://127.0.0.1:%d", RPCPort), jsonrpc.WithHTTPClient(hc),
				jsonrpc.WithTimeout(60*time.Second), jsonrpc.WithBasicAuth(img.RPCUser, img.RPCPassword))
		}
	}
	// $1 volume, $2 coin.conf, $3 hosts, $4 root; then coin-node's arguments.
	script := fmt.Sprintf(`%[1]s --bind "$1" "$4%[2]s" && %[1]s --bind "$2" "$4%[3]s" && %[1]s --bind "$3" "$4/etc/hosts" && `+
		`root=$4 && shift 4 && exec %[4]s --userspec=%[5]d:%[6]d "$root" %[7]s "$@"`,
		paths["mount"], img.DataDir, img.ConfPath, paths["chroot"], img.UID, img.GID, img.Node)
	l.command = func(n *Node, _ []string) *exec.Cmd {
		args := []string{"netns", "exec", n.NS, paths["unshare"], "--mount", "--propagation", "private",
			paths["sh"], "-c", script, "sh", filepath.Join(n.DataDir, "volume"), filepath.Join(n.DataDir, "coin.conf"),
			filepath.Join(n.DataDir, "hosts"), img.Root}
		cmd := exec.Command("ip", append(args, img.Args(n)...)...)
		cmd.Env = img.Env
		return cmd
	}
	return nil
}

// hostsFile is node n's /etc/hosts: localhost, then a line per name and address. Go's
// resolver answers a name with its lines in file order and a dialler takes the first address
// that connects, so a name that answers with every node (a DNS seed) starts, for node n,
// half-way round the list from n: neither n itself nor, in a ring, its neighbours, which it
// is connected to already (a second connection between two nodes is refused, so a seed that
// is one of them would never answer). A cluster's DNS may shuffle each answer; a static file
// cannot, hence the fixed, per-node order.
func (l *Lab) hostsFile(n *Node, hosts map[string][]int) string {
	var b strings.Builder
	b.WriteString("127.0.0.1\tlocalhost\n")
	for _, name := range slices.Sorted(maps.Keys(hosts)) {
		idx := hosts[name]
		start := 0
		if k := slices.Index(idx, n.Index); k >= 0 {
			start = k + len(idx)/2
		}
		for k := range idx {
			if i := idx[(start+k)%len(idx)]; i >= 0 && i < len(l.Nodes) {
				fmt.Fprintf(&b, "%s\t%s\n", l.Nodes[i].IP, name)
			}
		}
	}
	return b.String()
}
