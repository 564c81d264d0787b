package miner

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

const (
	easyBits = 0x207fffff // regtest: about every second hash wins
	hardBits = 0x03000001 // target 1: never met
)

func testLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return nil
}

// start runs a miner on node in the background; stop cancels it and returns Run's error.
func start(t *testing.T, cfg Config) (m *Miner, stop func() error) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return after cancel")
			}
		})
		return runErr
	}
	t.Cleanup(func() { stop() })
	return m, stop
}

func TestMineBlocks(t *testing.T) {
	node := newFakeNode("regtest", easyBits)
	node.addMempoolTx(1)
	var events []BlockEvent
	cfg := Config{Node: node, Address: testAddress(t, 3), Threads: 4, Blocks: 5,
		OnBlock: func(e BlockEvent) { events = append(events, e) }}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("Run returned only at the deadline")
	}
	st := m.Stats()
	if st.Accepted != 5 || st.Rejected != 0 || st.Height != 5 || node.height() != 5 {
		t.Fatalf("accepted %d rejected %d height %d, node height %d", st.Accepted, st.Rejected, st.Height, node.height())
	}
	_, subs, perParent := node.snapshot()
	if len(subs) != 5 {
		t.Fatalf("%d submissions, want 5", len(subs))
	}
	for prev, n := range perParent {
		if n != 1 {
			t.Errorf("parent %s got %d submissions", prev, n)
		}
	}
	if len(subs[0].block.Transactions) != 2 || len(subs[1].block.Transactions) != 1 {
		t.Errorf("the first block should hold the mempool transaction: %d, %d txs",
			len(subs[0].block.Transactions), len(subs[1].block.Transactions))
	}
	if len(events) != 5 || !events[4].Accepted || events[4].Height != 5 || events[4].Hash != subs[4].block.Hash().String() {
		t.Fatalf("events: %+v", events)
	}
	if st.Hashes == 0 || st.Templates < 5 {
		t.Fatalf("stats: %+v", st)
	}
}

// TestOneSolutionPerRound: with many threads and a target every second hash meets, all
// threads find solutions at once; the miner submits one per parent, while a slow
// submitblock keeps the round open.
func TestOneSolutionPerRound(t *testing.T) {
	node := newFakeNode("regtest", easyBits)
	node.submitLag = 30 * time.Millisecond
	m, stop := start(t, Config{Node: node, Address: testAddress(t, 3), Threads: 16, Blocks: 4})
	waitFor(t, 10*time.Second, "4 blocks", func() bool { return m.Stats().Accepted == 4 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	_, subs, perParent := node.snapshot()
	if len(subs) != 4 {
		t.Fatalf("%d submissions, want 4", len(subs))
	}
	for prev, n := range perParent {
		if n != 1 {
			t.Errorf("parent %s got %d submissions", prev, n)
		}
	}
}

// TestSwitchOnNewTip: a block made elsewhere makes the miner fetch a template on the new
// tip within a second, and it submits nothing for the old one.
func TestSwitchOnNewTip(t *testing.T) {
	node := newFakeNode("regtest", hardBits)
	m, _ := start(t, Config{Node: node, Address: testAddress(t, 3), Threads: 2})
	waitFor(t, 5*time.Second, "first template", func() bool { return m.Stats().Mining })
	for i := range 3 {
		tip := node.addExternalBlock()
		made := time.Now()
		waitFor(t, 2*time.Second, "template on the new tip", func() bool {
			tmpls, _, _ := node.snapshot()
			last := tmpls[len(tmpls)-1]
			return last.prev == tip && m.Stats().Mining
		})
		if d := time.Since(made); d > time.Second {
			t.Errorf("switch %d took %v, want under a second", i, d)
		}
	}
	_, subs, _ := node.snapshot()
	if len(subs) != 0 {
		t.Fatalf("%d blocks submitted", len(subs))
	}
	if st := m.Stats(); st.Height != 3 || st.Templates != 4 {
		t.Fatalf("height %d templates %d, want 3, 4", st.Height, st.Templates)
	}
}

// TestStaleSolutionDropped: a solution whose round went stale is counted and not sent.
func TestStaleSolutionDropped(t *testing.T) {
	node := newFakeNode("regtest", easyBits)
	m, err := New(Config{Node: node, Address: testAddress(t, 3), Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := node.GetBlockTemplate(context.Background(), m.cfg.Address.String)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWork(tmpl, m.cfg.Address.PubKeyHash, params.Regtest.PowLimit)
	if err != nil {
		t.Fatal(err)
	}
	r := &round{prev: w.PrevHash}
	j := newJob(1, w, r, w.Header.Timestamp, fullSpaceChunks)
	var sol solution
	for n := uint64(0); ; n++ {
		h := w.HeaderAt(j.ts, n)
		hash := h.Hash()
		if hash[0] < 0x7f {
			sol = solution{job: j, nonce: n, hash: hash}
			break
		}
	}
	r.solved.Store(true)
	r.stale.Store(true)
	var c controller
	if done, _, _ := m.submit(context.Background(), &c, sol); done {
		t.Fatal("submit reported the limit")
	}
	if _, subs, _ := node.snapshot(); len(subs) != 0 {
		t.Fatal("a stale solution was submitted")
	}
	if st := m.Stats(); st.Stale != 1 || st.Accepted != 0 {
		t.Fatalf("stats %+v", st)
	}
	// The same solution in a live round is submitted and accepted.
	r2 := &round{prev: w.PrevHash}
	r2.solved.Store(true)
	sol.job = newJob(2, w, r2, j.ts, fullSpaceChunks)
	m.submit(context.Background(), &c, sol)
	if st := m.Stats(); st.Accepted != 1 || node.height() != 1 {
		t.Fatalf("live solution: stats %+v, height %d", st, node.height())
	}
}

// TestMempoolChange: a new mempool transaction reaches the miner's template within the
// mempool poll interval.
func TestMempoolChange(t *testing.T) {
	node := newFakeNode("regtest", hardBits)
	m, _ := start(t, Config{Node: node, Address: testAddress(t, 3), Threads: 1, MempoolPoll: 200 * time.Millisecond})
	waitFor(t, 5*time.Second, "first template", func() bool { return m.Stats().Mining })
	node.addMempoolTx(5)
	waitFor(t, 2*time.Second, "template with the transaction", func() bool {
		tmpls, _, _ := node.snapshot()
		return tmpls[len(tmpls)-1].txs == 2
	})
}

// TestNodeDown: the miner waits for an unreachable node with backoff and mines once it is
// back; a node that goes away while it mines does not stop it either.
func TestNodeDown(t *testing.T) {
	node := newFakeNode("regtest", easyBits)
	node.setDown(true)
	m, stop := start(t, Config{Node: node, Address: testAddress(t, 3), Threads: 2, MaxBackoff: 100 * time.Millisecond})
	time.Sleep(400 * time.Millisecond)
	if st := m.Stats(); st.NodeUp || st.Accepted != 0 {
		t.Fatalf("while down: %+v", st)
	}
	node.setDown(false)
	waitFor(t, 5*time.Second, "blocks after the node came up", func() bool { return m.Stats().Accepted >= 3 })
	node.setDown(true)
	time.Sleep(300 * time.Millisecond)
	node.setDown(false)
	before := m.Stats().Accepted
	waitFor(t, 5*time.Second, "blocks after the second outage", func() bool { return m.Stats().Accepted >= before+3 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if st := m.Stats(); !st.NodeUp || st.Rejected != 0 {
		t.Fatalf("after: %+v", st)
	}
}

// TestTimeRoll: when a job's nonce space is used up the timestamp moves on and the nonce
// space starts again; the jobs' timestamps only grow.
func TestTimeRoll(t *testing.T) {
	node := newFakeNode("regtest", hardBits)
	m, err := New(Config{Node: node, Address: testAddress(t, 3), Threads: 2, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	m.chunks = 2 // a nonce space of two chunks
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	var seen []uint64
	deadline := time.Now().Add(5 * time.Second)
	for len(seen) < 4 && time.Now().Before(deadline) {
		if j := m.h.board.current(); j != nil && (len(seen) == 0 || j.ts != seen[len(seen)-1]) {
			seen = append(seen, j.ts)
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(seen) < 4 {
		t.Fatalf("timestamps seen: %v", seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] <= seen[i-1] {
			t.Fatalf("timestamps do not grow: %v", seen)
		}
	}
	if st := m.Stats(); st.Rolls < 3 || st.Templates != 1 {
		t.Fatalf("rolls %d templates %d", st.Rolls, st.Templates)
	}
}

func TestFatalErrors(t *testing.T) {
	// The node runs mainnet; the address is a testnet/regtest one.
	node := newFakeNode("mainnet", easyBits)
	m, _ := New(Config{Node: node, Address: testAddress(t, 3), Threads: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.Run(ctx); !errors.Is(err, ErrWrongNetwork) {
		t.Fatalf("wrong network: %v", err)
	}
	// --network testnet, the node runs regtest.
	node = newFakeNode("regtest", easyBits)
	m, _ = New(Config{Node: node, Address: testAddress(t, 3), Network: params.Testnet, Threads: 1})
	if err := m.Run(ctx); !errors.Is(err, ErrWrongNetwork) {
		t.Fatalf("--network testnet on regtest: %v", err)
	}
	// The node rejects the address.
	node = newFakeNode("regtest", easyBits)
	node.refuse = jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid parameter 1 (mining_address): wrong network")
	m, _ = New(Config{Node: node, Address: testAddress(t, 3), Threads: 1})
	if err := m.Run(ctx); !errors.Is(err, ErrNodeRefused) {
		t.Fatalf("refused: %v", err)
	}
	// coin-node's answer for an address of another network.
	node = newFakeNode("regtest", easyBits)
	node.refuse = rpcapi.DecodeError(rpcapi.DomainError(reason.InvalidAddress, "invalid address: decode address: invalid address: wrong network"))
	m, _ = New(Config{Node: node, Address: testAddress(t, 3), Threads: 1})
	if err := m.Run(ctx); !errors.Is(err, ErrNodeRefused) {
		t.Fatalf("invalid address: %v", err)
	}
	// A domain error (the node syncs) is retried, not fatal.
	node = newFakeNode("regtest", easyBits)
	node.refuse = rpcapi.DecodeError(rpcapi.DomainError(reason.Syncing, "node is syncing"))
	_, stop := start(t, Config{Node: node, Address: testAddress(t, 3), Threads: 1, MaxBackoff: 50 * time.Millisecond})
	time.Sleep(200 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatalf("syncing node: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("a fatal error took until the deadline")
	}
	if _, err := New(Config{Node: node, Address: testAddress(t, 3), Network: params.Mainnet}); !errors.Is(err, ErrWrongNetwork) {
		t.Fatalf("New with a testnet address on mainnet: %v", err)
	}
}

// TestNoncePartition: threads taking chunks of one job concurrently get every chunk once.
func TestNoncePartition(t *testing.T) {
	const chunks = 5000
	j := newJob(1, &Work{Header: BenchmarkHeader()}, nil, 0, chunks)
	var mu sync.Mutex
	seen := map[uint64]int{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			var mine []uint64
			for {
				start, ok := j.take()
				if !ok {
					break
				}
				mine = append(mine, start)
			}
			mu.Lock()
			for _, s := range mine {
				seen[s]++
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(seen) != chunks {
		t.Fatalf("%d chunks handed out, want %d", len(seen), chunks)
	}
	for s, n := range seen {
		if n != 1 || s%ChunkSize != 0 || s/ChunkSize >= chunks {
			t.Fatalf("chunk at %d handed out %d times", s, n)
		}
	}
	// The full space ends exactly at 2^64.
	n, size := uint64(fullSpaceChunks), uint64(ChunkSize)
	if n*size != 0 || (n-1)*size+(size-1) != ^uint64(0) {
		t.Fatal("the chunks do not tile the 64-bit nonce space")
	}
}

// TestThreadsShareWork: every thread hashes, and a job's nonces are not hashed twice.
func TestThreadsShareWork(t *testing.T) {
	r := Benchmark(context.Background(), 3, 300*time.Millisecond)
	if r.Threads != 3 || len(r.ThreadHashes) != 3 || r.Hashes == 0 {
		t.Fatalf("%+v", r)
	}
	var sum uint64
	for i, n := range r.ThreadHashes {
		if n == 0 {
			t.Errorf("thread %d hashed nothing", i)
		}
		sum += n
	}
	if sum != r.Hashes || r.Rate() <= 0 || r.Kernel == "" {
		t.Fatalf("%+v", r)
	}
}

func TestParseOpenSSLSpeed(t *testing.T) {
	one := `Doing sha256 ops for 3s on 16384 size blocks: 321060 sha256 ops in 2.99s
version: 3.0.19
built on: Tue Jan 27 2026
options: bn(64,64)
CPUINFO: OPENSSL_ia32cap=0xfeda32035f8bffff:0x40069c219c97a9
The 'numbers' are in 1000s of bytes per second processed.
type          16384 bytes
sha256         1754009.60k
`
	full := `The 'numbers' are in 1000s of bytes per second processed.
type             16 bytes     64 bytes    256 bytes   1024 bytes   8192 bytes  16384 bytes
sha256          185045.01k   563812.12k  1179423.66k  1571930.11k  1737605.80k  1752432.64k
`
	for _, tc := range []struct {
		out  string
		want float64
	}{{one, 1754009600}, {full, 1752432640}} {
		got, err := ParseOpenSSLSpeed(tc.out)
		if err != nil || got != tc.want {
			t.Errorf("got %v %v, want %v", got, err, tc.want)
		}
	}
	if _, err := ParseOpenSSLSpeed("Invalid command 'speed'"); err == nil {
		t.Error("no error for garbage")
	}
}

func TestFormatRate(t *testing.T) {
	for r, want := range map[float64]string{12: "12.00 H/s", 25_310_000: "25.31 MH/s", 1.5e9: "1.50 GH/s"} {
		if got := FormatRate(r); got != want {
			t.Errorf("FormatRate(%v) = %q, want %q", r, got, want)
		}
	}
}

// TestBlockHexIsBlockBytes guards BlockHex's cached transaction bytes.
func TestBlockHexIsBlockBytes(t *testing.T) {
	a := testAddress(t, 1)
	w, err := NewWork(template(a.PubKeyHash, 3, transferTx(1), transferTx(2)), a.PubKeyHash, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := w.HeaderAt(1767225999, 1<<40)
	b := &types.Block{Header: h, Transactions: w.Transactions}
	if got, want := w.BlockHex(h), b.Bytes(); got != hexString(want) {
		t.Fatal("BlockHex differs from the block's bincode")
	}
}

func hexString(b []byte) string { return hex.EncodeToString(b) }

// TestRejectedBlocksBackOff: a node that refuses every block (as a regtest node did when
// templates ran past its future-drift limit) gets no tight loop of resubmissions: the miner
// waits longer after each refusal, never submits a refused block again, and logs the reason
// once, then only at 2, 4, 8, ... repetitions.
func TestRejectedBlocksBackOff(t *testing.T) {
	node := newFakeNode("regtest", easyBits)
	node.mu.Lock()
	node.rejectAll = "block timestamp is more than 900 s ahead of the clock"
	node.mu.Unlock()
	var logs syncBuffer
	_, stop := start(t, Config{Node: node, Address: testAddress(t, 9), Threads: 2, MaxBackoff: 400 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	time.Sleep(2 * time.Second)
	stop()
	_, subs, _ := node.snapshot()
	// Without backing off the miner resubmits thousands of times a second (every template
	// is solved at once on regtest); with it, at most one try per 250–400 ms.
	if len(subs) < 2 || len(subs) > 12 {
		t.Fatalf("%d submissions in 2 s", len(subs))
	}
	seen := map[types.Hash]bool{}
	for _, s := range subs {
		if seen[s.block.Hash()] {
			t.Fatalf("block %s submitted again after its refusal", s.block.Hash())
		}
		seen[s.block.Hash()] = true
	}
	warns := strings.Count(logs.String(), "level=WARN")
	if first := strings.Count(logs.String(), "msg=\"block rejected\""); first != 1 {
		t.Fatalf("the refusal's reason logged %d times, want once:\n%s", first, logs.String())
	}
	if warns > 1+4 { // the first, then at 2, 4, 8 (and 16 at most in 2 s)
		t.Fatalf("%d warnings for %d refusals:\n%s", warns, len(subs), logs.String())
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's goroutines.
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

// TestIntervalDefault: Config.Interval resolves to one block a second on regtest without a
// Blocks limit, and to no pause with a limit, on testnet, or when negative.
func TestIntervalDefault(t *testing.T) {
	m := &Miner{}
	for _, c := range []struct {
		cfg  Config
		net  *params.Network
		want time.Duration
	}{
		{Config{}, params.Regtest, DefaultRegtestInterval},
		{Config{}, nil, 0},
		{Config{Blocks: 5}, params.Regtest, 0},
		{Config{}, params.Testnet, 0},
		{Config{Interval: -1}, params.Regtest, 0},
		{Config{Interval: 3 * time.Second, Blocks: 5}, params.Testnet, 3 * time.Second},
	} {
		m.cfg = c.cfg
		if got := m.intervalOn(c.net); got != c.want {
			t.Errorf("Interval %s, Blocks %d on %v: %s, want %s", c.cfg.Interval, c.cfg.Blocks, c.net, got, c.want)
		}
	}
}
