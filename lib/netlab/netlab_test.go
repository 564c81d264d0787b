package netlab

import (
	"encoding/xml"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

func testLab(mode PeerMode, nodes int) *Lab {
	cfg := Config{Nodes: nodes, Regions: 3, IntraDelay: 10 * time.Millisecond, InterDelay: DefaultInter, Outbound: 3, Mode: mode}
	l := &Lab{Cfg: cfg, Mode: mode, Rand: rand.New(rand.NewPCG(1, 2))}
	for i := 0; i < nodes; i++ {
		l.Nodes = append(l.Nodes, &Node{Index: i, Region: i % 3, DataDir: "d",
			IP: netip.AddrFrom4([4]byte{10, byte(10 + i), byte(1 + i%3), 10})})
	}
	l.planTopology()
	return l
}

// TestNodeArgsFollowTheMode: in seednode mode a node is bound to its lab address and knows
// only node 0's; in connect mode it gets --connect to its planned peers (one in its region,
// none of them itself, no pair both ways).
func TestNodeArgsFollowTheMode(t *testing.T) {
	seed := testLab(ModeSeed, 6)
	args := strings.Join(seed.NodeArgs(seed.Nodes[4]), " ")
	if !strings.Contains(args, "--p2p-bind 10.14.2.10:38333") || !strings.Contains(args, "--seednode 10.10.1.10:38333") || strings.Contains(args, "--connect") {
		t.Errorf("seednode mode: %s", args)
	}
	conn := testLab(ModeConnect, 20)
	pairs := map[[2]string]bool{}
	for _, n := range conn.Nodes {
		args := conn.NodeArgs(n)
		if slices.Contains(args, "--seednode") || slices.Contains(args, "--p2p-bind") {
			t.Errorf("connect mode: %v", args)
		}
		if len(n.Connect) != 3 {
			t.Errorf("node %d: %d --connect peers, want 3", n.Index, len(n.Connect))
		}
		sameRegion := false
		for _, c := range n.Connect {
			if !slices.Contains(args, c) {
				t.Errorf("node %d: %s not on its command line", n.Index, c)
			}
			if c == n.Addr() {
				t.Errorf("node %d connects to itself", n.Index)
			}
			if pairs[[2]string{c, n.Addr()}] {
				t.Errorf("%s and %s connect to each other", c, n.Addr())
			}
			pairs[[2]string{n.Addr(), c}] = true
			ap := netip.MustParseAddrPort(c)
			if ap.Addr().As4()[2] == n.IP.As4()[2] {
				sameRegion = true
			}
		}
		if !sameRegion {
			t.Errorf("node %d has no peer in its own region: %v", n.Index, n.Connect)
		}
	}
}

// TestBoundIsSlowestShortestPath: on a line 0–1–2 (regions 0, 1, 2) the bound from node 0 is
// the 0→1 and 1→2 delays plus two validations, not the direct 0→2 delay (no such link).
func TestBoundIsSlowestShortestPath(t *testing.T) {
	l := testLab(ModeConnect, 3)
	adj := map[int]map[int]bool{0: {1: true}, 1: {0: true, 2: true}, 2: {1: true}}
	v := 5 * time.Millisecond
	want := DefaultInter[0] + DefaultInter[2] + 2*v // 0–1: 40 ms, 1–2: 90 ms
	if got := l.Bound(adj, 0, v); got != want {
		t.Errorf("bound from 0 = %v, want %v", got, want)
	}
	adj[0][2], adj[2] = true, map[int]bool{0: true, 1: true}
	if got := l.Bound(adj, 1, v); got != DefaultInter[2]+v {
		t.Errorf("bound from 1 with a triangle = %v, want %v", got, DefaultInter[2]+v)
	}
}

// TestSpreadAt: the time until a share of all nodes (not only those that got it) had it.
func TestSpreadAt(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ts := []time.Time{t0, t0.Add(300 * time.Millisecond), {}, t0.Add(100 * time.Millisecond)}
	s := SpreadOf(ts, t0)
	if s.At(0.5) != 100*time.Millisecond || s.At(0.75) != 300*time.Millisecond || s.At(1) != -1 {
		t.Errorf("At(0.5, 0.75, 1) = %v, %v, %v", s.At(0.5), s.At(0.75), s.At(1))
	}
	if p := Percentile([]time.Duration{5, 1, 3, 2, 4}, 99); p != 5 {
		t.Errorf("p99 = %v", p)
	}
}

// TestCDFSVGIsWellFormed: the plot parses as XML and has a line per series with data.
func TestCDFSVGIsWellFormed(t *testing.T) {
	svg := CDFSVG("steady <state>", []Series{{"blocks", []time.Duration{3e8, 1e8, 2e8}}, {"txs & more", nil}, {"tx", []time.Duration{5e7}}})
	d := xml.NewDecoder(strings.NewReader(string(svg)))
	lines := 0
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not well-formed: %v", err)
			}
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			lines++
		}
	}
	if lines != 2 {
		t.Errorf("%d polylines, want 2", lines)
	}
}

// TestHashField reads coin-cli's JSON.
func TestHashField(t *testing.T) {
	if got := hashField("{\n  \"height\": 3,\n  \"hash\": \"abc\"\n}\n"); got != "abc" {
		t.Errorf("hashField = %q", got)
	}
}
