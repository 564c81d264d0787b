package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/proctest"
)

// The end-to-end tests run coin-miner against a real regtest coin-node process. On
// regtest the target is 0x207fffff (about every second hash wins), so the miner finds a
// block per template at once and the node's speed sets the pace.
//
// A process's Stdout holds the miner's block hashes alone; its Out (stdout and stderr)
// holds the logs too, one hash or one record a line, which is all the tests read there.

// logLines is how much of a log a failure message quotes.
const logLines = 200

// buildBinaries builds coin-node and coin-miner once for all tests of the package.
func buildBinaries(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test skipped with -short")
	}
	if _, err := os.Stat("../coin-node/main.go"); err != nil {
		t.Skip("cmd/coin-node is not in this tree")
	}
	return proctest.Build(t, "./cmd/coin-node", "./cmd/coin-miner")
}

func TestMain(m *testing.M) {
	code := m.Run()
	proctest.Cleanup()
	os.Exit(code)
}

// testNode is a regtest coin-node process, a client of its RPC port, and the miner to run
// against it.
type testNode struct {
	*proctest.Node
	t        *testing.T
	minerBin string
}

func newTestNode(t *testing.T) *testNode {
	t.Helper()
	dir := buildBinaries(t)
	return &testNode{Node: proctest.StartNode(t, filepath.Join(dir, "coin-node")), t: t,
		minerBin: filepath.Join(dir, "coin-miner")}
}

// stop shuts the node down with SIGTERM and waits for it.
func (n *testNode) stop() {
	n.t.Helper()
	if code := n.Proc.Stop(n.t, 20*time.Second); code != 0 {
		n.t.Fatalf("node exited with %d\n%s", code, n.Proc.Out.Tail(logLines))
	}
}

func (n *testNode) height() uint64 {
	n.t.Helper()
	h, err := n.RPC.GetBlockCount(context.Background())
	if err != nil {
		n.t.Fatal(err)
	}
	return h
}

func (n *testNode) hashAt(h uint64) string {
	n.t.Helper()
	s, err := n.RPC.GetBlockHash(context.Background(), h)
	if err != nil {
		n.t.Fatalf("getblockhash %d: %v", h, err)
	}
	return s
}

// waitHeight polls until the chain reaches h.
func (n *testNode) waitHeight(h uint64, d time.Duration, miner *proctest.Proc) {
	n.t.Helper()
	deadline := time.Now().Add(d)
	for n.height() < h {
		if time.Now().After(deadline) || (miner != nil && miner.Exited()) {
			n.t.Fatalf("height %d not reached (at %d)\nminer output:\n%s", h, n.height(), miner.Out.Tail(logLines))
		}
		time.Sleep(time.Millisecond)
	}
}

func regtestAddress(t *testing.T, seed byte) string {
	t.Helper()
	var pkh keys.PubKeyHash
	for i := range pkh {
		pkh[i] = seed ^ byte(i)
	}
	s, err := keys.EncodeAddress(keys.HRPTestnet, pkh)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (n *testNode) startMiner(t *testing.T, address string, args ...string) *proctest.Proc {
	t.Helper()
	return proctest.Start(t, n.minerBin, append([]string{"--rpc", n.URL(), "--address", address,
		"--threads", "2", "--log-level", "debug"}, args...)...)
}

// minedHashes are the block hashes the miner printed, one per line.
func minedHashes(p *proctest.Proc) []string {
	return strings.Fields(p.Stdout.String())
}

// checkInChain fails unless every hash is on the main chain (at distinct heights).
func (n *testNode) checkInChain(hashes []string, from, to uint64) {
	n.t.Helper()
	chain := map[string]uint64{}
	for h := from; h <= to; h++ {
		chain[n.hashAt(h)] = h
	}
	for _, h := range hashes {
		if _, ok := chain[h]; !ok {
			n.t.Errorf("block %s reported accepted is not on the main chain", h)
		}
	}
}

// summaryField reads key=value from the summary log line in the miner's output.
func summaryField(t *testing.T, out *proctest.Buffer, key string) int {
	t.Helper()
	for line := range strings.Lines(out.String()) {
		if !strings.Contains(line, "msg=summary") {
			continue
		}
		for f := range strings.FieldsSeq(line) {
			if v, ok := strings.CutPrefix(f, key+"="); ok {
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatalf("summary %s=%q", key, v)
				}
				return n
			}
		}
	}
	t.Fatalf("no %s in a summary line:\n%s", key, out.Tail(logLines))
	return 0
}

// TestE2EMineBlocks: coin-miner --blocks 5 raises the height by 5, all accepted, and prints
// their hashes.
func TestE2EMineBlocks(t *testing.T) {
	n := newTestNode(t)
	h0 := n.height()
	m := n.startMiner(t, regtestAddress(t, 1), "--blocks", "5")
	if code := m.Wait(t, 30*time.Second); code != 0 {
		t.Fatalf("miner exit %d\n%s", code, m.Out.Tail(logLines))
	}
	if h := n.height(); h != h0+5 {
		t.Fatalf("height %d, want %d", h, h0+5)
	}
	got := minedHashes(m)
	if len(got) != 5 {
		t.Fatalf("printed %d hashes, want 5: %q", len(got), m.Stdout.String())
	}
	for i, h := range got {
		if want := n.hashAt(h0 + 1 + uint64(i)); h != want {
			t.Errorf("hash %d: printed %s, chain has %s", i, h, want)
		}
	}
	if summaryField(t, m.Out, "accepted") != 5 || summaryField(t, m.Out, "rejected") != 0 {
		t.Fatalf("summary:\n%s", m.Out.Tail(logLines))
	}
}

// TestE2ESwitchOnForeignBlock: while the miner runs, generatetoaddress makes a block
// elsewhere; the miner builds on it, no block it reports accepted is off the main chain, and
// its only possible rejection is the one stale template it was hashing at that moment.
func TestE2ESwitchOnForeignBlock(t *testing.T) {
	n := newTestNode(t)
	h0 := n.height()
	const total = 300
	m := n.startMiner(t, regtestAddress(t, 1), "--blocks", strconv.Itoa(total))
	n.waitHeight(h0+20, 20*time.Second, m)
	gen, err := n.RPC.GenerateToAddress(context.Background(), 1, regtestAddress(t, 2))
	if err != nil || len(gen) != 1 {
		t.Fatalf("generatetoaddress: %v %v", gen, err)
	}
	if code := m.Wait(t, 30*time.Second); code != 0 {
		t.Fatalf("miner exit %d\n%s", code, m.Out.Tail(logLines))
	}
	log := m.Out.String()
	final := n.height()
	if final != h0+total+1 {
		t.Fatalf("height %d, want %d (%d mined + 1 generated)", final, h0+total+1, total)
	}
	// Where the foreign block landed, and what came after it.
	gh := uint64(0)
	for h := h0 + 1; h <= final; h++ {
		if n.hashAt(h) == gen[0] {
			gh = h
		}
	}
	if gh == 0 || gh == final {
		t.Fatalf("the generated block is not followed by mined blocks (at height %d of %d)", gh, final)
	}
	mined := minedHashes(m)
	if len(mined) != total {
		t.Fatalf("printed %d hashes, want %d", len(mined), total)
	}
	next, err := n.RPC.GetBlock(context.Background(), n.hashAt(gh+1))
	if err != nil {
		t.Fatal(err)
	}
	if next.PrevHash != gen[0] || !strings.Contains(m.Stdout.String(), next.Hash) {
		t.Fatalf("block %d (%s) should be the miner's, on top of the generated one", gh+1, next.Hash)
	}
	n.checkInChain(mined, h0+1, final)
	rejected := summaryField(t, m.Out, "rejected")
	if rejected > 1 || summaryField(t, m.Out, "accepted") != total {
		t.Fatalf("rejected %d (at most the one stale template):\n%s", rejected, m.Out.Tail(logLines))
	}
	for line := range strings.Lines(log) {
		if strings.Contains(line, `msg="block rejected"`) && !strings.Contains(line, "stale block template") {
			t.Errorf("rejected for another reason than a stale template: %s", line)
		}
	}
	if !strings.Contains(log, "new tip from elsewhere") {
		t.Errorf("the miner did not report the foreign block:\n%s", m.Out.Tail(logLines))
	}
	t.Logf("foreign block at height %d of %d; the miner's stale submissions rejected: %d", gh, final, rejected)
}

// TestE2ENodeRestart: the node stops and starts again under the miner, which waits,
// reconnects and mines on.
func TestE2ENodeRestart(t *testing.T) {
	n := newTestNode(t)
	h0 := n.height()
	const total = 100
	m := n.startMiner(t, regtestAddress(t, 1), "--blocks", strconv.Itoa(total))
	n.waitHeight(h0+10, 20*time.Second, m)
	n.stop()
	// The node is down once the miner's requests are refused; it must keep retrying.
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(m.Out.String(), "node unreachable: connection refused"); time.Sleep(10 * time.Millisecond) {
		if m.Exited() {
			t.Fatalf("the miner exited while the node was down:\n%s", m.Out.Tail(logLines))
		}
		if time.Now().After(deadline) {
			t.Fatalf("the miner did not find the node down:\n%s", m.Out.Tail(logLines))
		}
	}
	n.Start(t)
	if code := m.Wait(t, 30*time.Second); code != 0 {
		t.Fatalf("miner exit %d\n%s", code, m.Out.Tail(logLines))
	}
	log := m.Out.String()
	for _, want := range []string{`msg="no block template; retrying"`, "node unreachable: connection refused", `msg="node reachable again"`} {
		if !strings.Contains(log, want) {
			t.Errorf("miner log lacks %s:\n%s", want, m.Out.Tail(logLines))
		}
	}
	for line := range strings.Lines(log) {
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "reachable again") {
			t.Log(strings.TrimSpace(line))
		}
	}
	final := n.height()
	mined := minedHashes(m)
	if len(mined) != total || final < h0+total {
		t.Fatalf("printed %d hashes, height %d; want %d blocks", len(mined), final, total)
	}
	n.checkInChain(mined, h0+1, final)
}

// TestE2ESignal: SIGTERM stops a miner without --blocks cleanly, with a summary that
// agrees with the hashes it printed; SIGINT stops one that waits for an absent node.
func TestE2ESignal(t *testing.T) {
	n := newTestNode(t)
	h0 := n.height()
	m := n.startMiner(t, regtestAddress(t, 1), "--log-level", "warn")
	n.waitHeight(h0+5, 20*time.Second, m)
	// The node's height can move before the miner has the answer to its submitblock: wait
	// for the fifth hash it prints (a block it counts as accepted).
	for deadline := time.Now().Add(20 * time.Second); len(minedHashes(m)) < 5; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) || m.Exited() {
			t.Fatalf("the miner printed %d hashes:\n%s", len(minedHashes(m)), m.Out.Tail(logLines))
		}
	}
	if code := m.Stop(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM\n%s", code, m.Out.Tail(logLines))
	}
	accepted := summaryField(t, m.Out, "accepted")
	mined := minedHashes(m)
	if accepted < 5 || len(mined) != accepted || summaryField(t, m.Out, "rejected") != 0 {
		t.Fatalf("accepted %d, printed %d:\n%s", accepted, len(mined), m.Out.Tail(logLines))
	}
	n.checkInChain(mined, h0+1, n.height())
	if strings.Contains(m.Out.String(), "block accepted") {
		t.Error("--log-level warn still logs accepted blocks")
	}

	// Nothing listens on this port: the miner retries until SIGINT.
	idle := proctest.Start(t, n.minerBin, "--rpc", fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t)),
		"--address", regtestAddress(t, 1), "--threads", "1")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(idle.Out.String(), "no block template; retrying") {
		if time.Now().After(deadline) || idle.Exited() {
			t.Fatalf("no retry message:\n%s", idle.Out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	idle.Cmd.Process.Signal(os.Interrupt)
	if code := idle.Wait(t, 10*time.Second); code != 0 || !strings.Contains(idle.Out.String(), "msg=summary") {
		t.Fatalf("exit %d after SIGINT:\n%s", code, idle.Out.String())
	}
}
