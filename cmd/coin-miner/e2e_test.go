package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// The end-to-end tests run coin-miner against a real regtest coin-node process. On
// regtest the target is 0x207fffff (about every second hash wins), so the miner finds a
// block per template at once and the node's speed sets the pace.

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// buildBinaries builds coin-node and coin-miner once for all tests of the package.
func buildBinaries(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test skipped with -short")
	}
	if _, err := os.Stat("../coin-node/main.go"); err != nil {
		t.Skip("cmd/coin-node is not in this tree")
	}
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "coin-miner-e2e")
		if binErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", binDir+string(os.PathSeparator), "../coin-node", ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// syncBuffer is a bytes.Buffer safe for a process's writes and the test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is a child process with its output.
type proc struct {
	cmd  *exec.Cmd
	out  syncBuffer
	errb syncBuffer
	done chan struct{}
}

func startProc(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errb
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// wait waits for the process to exit and returns its exit code.
func (p *proc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(d):
		t.Fatalf("%s did not exit within %v\nstderr:\n%s", filepath.Base(p.cmd.Path), d, tail(p.errb.String()))
		return -1
	}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// tail is the end of a long log.
func tail(s string) string {
	if len(s) > 4000 {
		return "...\n" + s[len(s)-4000:]
	}
	return s
}

// testNode is a regtest coin-node process and a client of its RPC port.
type testNode struct {
	t       *testing.T
	bin     string
	dataDir string
	rpcAddr string
	p2pPort int
	proc    *proc
	rpc     *rpcapi.Client
}

func newTestNode(t *testing.T) *testNode {
	n := &testNode{t: t, bin: buildBinaries(t), dataDir: t.TempDir(),
		rpcAddr: fmt.Sprintf("127.0.0.1:%d", freePort(t)), p2pPort: freePort(t)}
	n.rpc = rpcapi.NewClient("http://" + n.rpcAddr)
	t.Cleanup(n.rpc.Close)
	n.start()
	return n
}

func (n *testNode) url() string { return "http://" + n.rpcAddr }

func (n *testNode) start() {
	n.t.Helper()
	n.proc = startProc(n.t, filepath.Join(n.bin, "coin-node"), "--network", "regtest", "--data-dir", n.dataDir,
		"--rpc-bind", n.rpcAddr, "--p2p-port", strconv.Itoa(n.p2pPort))
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := n.rpc.GetBlockCount(ctx)
		cancel()
		if err == nil {
			return
		}
		if n.proc.exited() || time.Now().After(deadline) {
			n.t.Fatalf("node did not come up: %v\n%s", err, tail(n.proc.errb.String()))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop shuts the node down with SIGTERM and waits for it.
func (n *testNode) stop() {
	n.t.Helper()
	n.proc.cmd.Process.Signal(syscall.SIGTERM)
	if code := n.proc.wait(n.t, 20*time.Second); code != 0 {
		n.t.Fatalf("node exited with %d\n%s", code, tail(n.proc.errb.String()))
	}
}

func (n *testNode) height() uint64 {
	n.t.Helper()
	h, err := n.rpc.GetBlockCount(context.Background())
	if err != nil {
		n.t.Fatal(err)
	}
	return h
}

func (n *testNode) hashAt(h uint64) string {
	n.t.Helper()
	s, err := n.rpc.GetBlockHash(context.Background(), h)
	if err != nil {
		n.t.Fatalf("getblockhash %d: %v", h, err)
	}
	return s
}

// waitHeight polls until the chain reaches h.
func (n *testNode) waitHeight(h uint64, d time.Duration, miner *proc) {
	n.t.Helper()
	deadline := time.Now().Add(d)
	for n.height() < h {
		if time.Now().After(deadline) || (miner != nil && miner.exited()) {
			n.t.Fatalf("height %d not reached (at %d)\nminer stderr:\n%s", h, n.height(), tail(miner.errb.String()))
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

func (n *testNode) startMiner(t *testing.T, address string, args ...string) *proc {
	t.Helper()
	return startProc(t, filepath.Join(n.bin, "coin-miner"), append([]string{"--rpc", n.url(), "--address", address,
		"--threads", "2", "--log-level", "debug"}, args...)...)
}

// minedHashes are the block hashes the miner printed, one per line.
func minedHashes(p *proc) []string {
	return strings.Fields(p.out.String())
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

// summaryField reads key=value from the miner's summary log line.
func summaryField(t *testing.T, stderr, key string) int {
	t.Helper()
	for line := range strings.Lines(stderr) {
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
	t.Fatalf("no %s in a summary line:\n%s", key, tail(stderr))
	return 0
}

// TestE2EMineBlocks: coin-miner --blocks 5 raises the height by 5, all accepted, and prints
// their hashes.
func TestE2EMineBlocks(t *testing.T) {
	n := newTestNode(t)
	h0 := n.height()
	m := n.startMiner(t, regtestAddress(t, 1), "--blocks", "5")
	if code := m.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("miner exit %d\n%s", code, tail(m.errb.String()))
	}
	if h := n.height(); h != h0+5 {
		t.Fatalf("height %d, want %d", h, h0+5)
	}
	got := minedHashes(m)
	if len(got) != 5 {
		t.Fatalf("printed %d hashes, want 5: %q", len(got), m.out.String())
	}
	for i, h := range got {
		if want := n.hashAt(h0 + 1 + uint64(i)); h != want {
			t.Errorf("hash %d: printed %s, chain has %s", i, h, want)
		}
	}
	stderr := m.errb.String()
	if summaryField(t, stderr, "accepted") != 5 || summaryField(t, stderr, "rejected") != 0 {
		t.Fatalf("summary:\n%s", tail(stderr))
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
	gen, err := n.rpc.GenerateToAddress(context.Background(), 1, regtestAddress(t, 2))
	if err != nil || len(gen) != 1 {
		t.Fatalf("generatetoaddress: %v %v", gen, err)
	}
	if code := m.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("miner exit %d\n%s", code, tail(m.errb.String()))
	}
	stderr := m.errb.String()
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
	next, err := n.rpc.GetBlock(context.Background(), n.hashAt(gh+1))
	if err != nil {
		t.Fatal(err)
	}
	if next.PrevHash != gen[0] || !strings.Contains(m.out.String(), next.Hash) {
		t.Fatalf("block %d (%s) should be the miner's, on top of the generated one", gh+1, next.Hash)
	}
	n.checkInChain(mined, h0+1, final)
	rejected := summaryField(t, stderr, "rejected")
	if rejected > 1 || summaryField(t, stderr, "accepted") != total {
		t.Fatalf("rejected %d (at most the one stale template):\n%s", rejected, tail(stderr))
	}
	for line := range strings.Lines(stderr) {
		if strings.Contains(line, `msg="block rejected"`) && !strings.Contains(line, "stale block template") {
			t.Errorf("rejected for another reason than a stale template: %s", line)
		}
	}
	if !strings.Contains(stderr, "new tip from elsewhere") {
		t.Errorf("the miner did not report the foreign block:\n%s", tail(stderr))
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
	time.Sleep(700 * time.Millisecond)
	if m.exited() {
		t.Fatalf("the miner exited while the node was down:\n%s", tail(m.errb.String()))
	}
	n.start()
	if code := m.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("miner exit %d\n%s", code, tail(m.errb.String()))
	}
	stderr := m.errb.String()
	for _, want := range []string{`msg="no block template; retrying"`, "node unreachable: connection refused", `msg="node reachable again"`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("miner log lacks %s:\n%s", want, tail(stderr))
		}
	}
	for line := range strings.Lines(stderr) {
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
	m.cmd.Process.Signal(syscall.SIGTERM)
	if code := m.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM\n%s", code, tail(m.errb.String()))
	}
	stderr := m.errb.String()
	accepted := summaryField(t, stderr, "accepted")
	mined := minedHashes(m)
	if accepted < 5 || len(mined) != accepted || summaryField(t, stderr, "rejected") != 0 {
		t.Fatalf("accepted %d, printed %d:\n%s", accepted, len(mined), tail(stderr))
	}
	n.checkInChain(mined, h0+1, n.height())
	if strings.Contains(stderr, "block accepted") {
		t.Error("--log-level warn still logs accepted blocks")
	}

	// Nothing listens on this port: the miner retries until SIGINT.
	idle := startProc(t, filepath.Join(n.bin, "coin-miner"), "--rpc", fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"--address", regtestAddress(t, 1), "--threads", "1")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(idle.errb.String(), "no block template; retrying") {
		if time.Now().After(deadline) || idle.exited() {
			t.Fatalf("no retry message:\n%s", idle.errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	idle.cmd.Process.Signal(os.Interrupt)
	if code := idle.wait(t, 10*time.Second); code != 0 || !strings.Contains(idle.errb.String(), "msg=summary") {
		t.Fatalf("exit %d after SIGINT:\n%s", code, idle.errb.String())
	}
}
