package netlab

import (
	"strings"
	"testing"
)

// TestHostsFileOrder: a name that answers with every node starts half-way round from the node
// that reads it (never itself or a ring neighbour first); a pod's name answers with its node.
func TestHostsFileOrder(t *testing.T) {
	l := testLab(ModeSeed, 6)
	hosts := map[string][]int{"seed.svc": {0, 1, 2, 3, 4, 5}, "pod-4.seed.svc": {4}}
	for _, n := range l.Nodes {
		var seed []string
		pod := ""
		for _, line := range strings.Split(l.hostsFile(n, hosts), "\n") {
			ip, name, _ := strings.Cut(line, "\t")
			switch name {
			case "seed.svc":
				seed = append(seed, ip)
			case "pod-4.seed.svc":
				pod = ip
			}
		}
		if len(seed) != 6 || seed[0] != l.Nodes[(n.Index+3)%6].IP.String() {
			t.Errorf("node %d: seed.svc answers %v, want 6 addresses from node %d's", n.Index, seed, (n.Index+3)%6)
		}
		if pod != l.Nodes[4].IP.String() {
			t.Errorf("node %d: pod-4 answers %q, want node 4's address", n.Index, pod)
		}
	}
}
