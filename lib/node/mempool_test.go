package node

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// runNode is a node on dir (no P2P, values nominal so the test's transfers need no decay
// arithmetic) running until stop is called; stop waits for a clean shutdown.
type runNode struct {
	*Node
	log  *proctest.Buffer
	stop func()
}

func runOn(t *testing.T, dir string, cfg Config) *runNode {
	t.Helper()
	lb := &proctest.Buffer{}
	cfg.Network, cfg.DataDir, cfg.MinFreeDiskPercent, cfg.Values = params.Regtest, dir, 1e-9, consensus.NominalValue{}
	cfg.Logger = slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}))
	n, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return &runNode{Node: n, log: lb, stop: stop}
}

// mempoolChain mines 102 blocks paying w on a fresh data directory (so the coinbases of
// blocks 1 and 2 are mature) and builds three transfers: two independent ones and a child
// of the second. The node is stopped cleanly with an empty pool.
func mempoolChain(t *testing.T) (dir string, txs []*types.Transaction) {
	t.Helper()
	dir = t.TempDir()
	n := runOn(t, dir, Config{})
	w := chaingen.NewWallet("mempool-test")
	g := chaingen.New(t, params.Regtest)
	g.SetMiner(w)
	var blocks []*types.Block
	for i := 0; i < 102; i++ {
		next := n.Chain().NextBlock()
		ts := max(uint64(time.Now().Unix()), next.MinTimestamp)
		b := g.NextOn("", chaingen.Template{Parent: next.Parent, Height: next.Height, Target: next.Target, Timestamp: ts,
			Pool: next.Pool}, nil)
		if _, err := n.SubmitBlock(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, b)
	}
	n.stop()
	a := g.Spend(chaingen.OutputOf(blocks[0].Transactions[0], 0)).Fee(10_000).Change(w.PKH, 1).SignedBy(w).Tx()
	b := g.Spend(chaingen.OutputOf(blocks[1].Transactions[0], 0)).Fee(10_000).Change(w.PKH, 2).SignedBy(w).Tx()
	c := g.Spend(chaingen.OutputOf(b, 1)).Fee(10_000).Change(w.PKH, 1).SignedBy(w).Tx()
	return dir, []*types.Transaction{a, b, c}
}

func hasAll(t *testing.T, p *mempool.Pool, txs []*types.Transaction) {
	t.Helper()
	if got := p.Info().Size; got != len(txs) {
		t.Fatalf("pool holds %d transactions, want %d", got, len(txs))
	}
	for _, tx := range txs {
		if _, ok := p.Get(tx.TxID()); !ok {
			t.Fatalf("transaction %s is not in the pool", tx.TxID())
		}
	}
}

// TestMempoolCleanRestart: transactions in the pool at a clean stop are there after the
// restart, with their arrival times; the file is 0600 and written atomically.
func TestMempoolCleanRestart(t *testing.T) {
	dir, txs := mempoolChain(t)
	n := runOn(t, dir, Config{})
	for _, tx := range txs {
		if _, err := n.SubmitTransaction(context.Background(), tx); err != nil {
			t.Fatal(err)
		}
	}
	times := map[types.Hash]time.Time{}
	for _, tx := range txs {
		e, _ := n.Mempool().Get(tx.TxID())
		times[tx.TxID()] = e.Time
	}
	n.stop()
	st, err := os.Stat(filepath.Join(dir, MempoolFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mempool.dat after a clean stop: %v %v", st, err)
	}

	n = runOn(t, dir, Config{})
	hasAll(t, n.Mempool(), txs)
	for id, at := range times {
		if e, _ := n.Mempool().Get(id); !e.Time.Equal(at) {
			t.Fatalf("%s arrived at %s, restored as %s", id, at, e.Time)
		}
	}
	if !strings.Contains(n.log.String(), "mempool loaded") {
		t.Fatalf("no load logged:\n%s", n.log)
	}
}

// TestMempoolTruncatedFile: a mempool.dat cut inside its last entry loads the entries
// before the cut; the node starts and logs the damage.
func TestMempoolTruncatedFile(t *testing.T) {
	dir, txs := mempoolChain(t)
	n := runOn(t, dir, Config{})
	for _, tx := range txs {
		if _, err := n.SubmitTransaction(context.Background(), tx); err != nil {
			t.Fatal(err)
		}
	}
	n.stop()
	path := filepath.Join(dir, MempoolFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:len(b)-30], 0o600); err != nil {
		t.Fatal(err)
	}
	n = runOn(t, dir, Config{})
	hasAll(t, n.Mempool(), txs[:2])
	if !strings.Contains(n.log.String(), "mempool.dat is damaged") {
		t.Fatalf("no damage logged:\n%s", n.log)
	}
	// Garbage: an empty pool, and the node still runs.
	n.stop()
	os.WriteFile(path, []byte("garbage"), 0o600)
	n = runOn(t, dir, Config{})
	if n.Mempool().Info().Size != 0 {
		t.Fatal("a garbage mempool.dat gave transactions")
	}
}

// helperDirEnv, when set, makes the test binary run a node on that data directory (for
// TestMempoolKilled, which kills it with SIGKILL).
const (
	helperDirEnv = "COIN_NODE_TEST_MEMPOOL_DIR"
	helperRPCEnv = "COIN_NODE_TEST_MEMPOOL_RPC"
)

// TestMempoolHelperProcess is the node process of TestMempoolKilled; it does nothing in a
// normal run.
func TestMempoolHelperProcess(t *testing.T) {
	dir := os.Getenv(helperDirEnv)
	if dir == "" {
		t.Skip("helper process of TestMempoolKilled")
	}
	n, err := New(context.Background(), Config{Network: params.Regtest, DataDir: dir, RPCBind: os.Getenv(helperRPCEnv), MinFreeDiskPercent: 1e-9,
		Values: consensus.NominalValue{}, MempoolSaveInterval: 100 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		t.Fatal(err)
	}
	n.Run(context.Background()) // until killed
}

// TestMempoolKilled: a node killed with SIGKILL after a periodic write of mempool.dat (no
// clean stop) comes back with the transactions of that write.
func TestMempoolKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir, txs := mempoolChain(t)
	rpcAddr := fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t))
	cmd := exec.Command(os.Args[0], "-test.run=^TestMempoolHelperProcess$")
	cmd.Env = append(os.Environ(), helperDirEnv+"="+dir, helperRPCEnv+"="+rpcAddr)
	var stderr proctest.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	cl := rpcapi.NewClient("http://"+rpcAddr, jsonrpc.WithTimeout(5*time.Second))
	defer cl.Close()
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for _, tx := range txs {
		for {
			_, err := cl.SendRawTransaction(ctx, hex.EncodeToString(tx.Bytes()))
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("sendrawtransaction: %v\n%s", err, stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Wait for a periodic write holding all three, then kill.
	path := filepath.Join(dir, MempoolFile)
	for {
		b, _ := os.ReadFile(path)
		if saved, err := mempool.DecodeSnapshot(params.Regtest.Magic, b); err == nil && len(saved) == len(txs) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no periodic mempool.dat with %d transactions\n%s", len(txs), stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if strings.Contains(stderr.String(), "node stopped") {
		t.Fatal("the node stopped cleanly: the test needs a kill")
	}
	n := runOn(t, dir, Config{})
	hasAll(t, n.Mempool(), txs)
}
