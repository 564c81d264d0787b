package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/types"
)

// onMessage is a slog handler that writes to a text handler and calls f for each record
// first: a test's way to act at a point of New that only the log shows.
type onMessage struct {
	slog.Handler
	f func(slog.Record)
}

func (h onMessage) Handle(ctx context.Context, r slog.Record) error {
	h.f(r)
	return h.Handler.Handle(ctx, r)
}

func (h onMessage) WithAttrs(as []slog.Attr) slog.Handler {
	return onMessage{h.Handler.WithAttrs(as), h.f}
}

func (h onMessage) WithGroup(name string) slog.Handler {
	return onMessage{h.Handler.WithGroup(name), h.f}
}

// bigMempoolDir is a data directory whose chain has mature outputs for total transfers and
// whose mempool.dat holds them (every tenth the child of the one before), as a node writes
// it; the node that built the chain is closed.
func bigMempoolDir(t *testing.T, total int) (dir string, cfg Config, file []byte) {
	t.Helper()
	dir = t.TempDir()
	cfg = Config{Network: params.Regtest, DataDir: dir, MinFreeDiskPercent: 1e-9, Values: consensus.NominalValue{},
		MempoolSaveInterval: -1, Logger: slog.New(slog.DiscardHandler)}
	n, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := chaingen.NewWallet("big-mempool")
	g := chaingen.New(t, params.Regtest)
	g.SetMiner(w)
	split := (total + 999) / 1000
	parent := "genesis"
	for i := 1; i <= split; i++ {
		g.Next(fmt.Sprintf("s%d", i), parent, nil, chaingen.SplitCoinbase(1000))
		parent = fmt.Sprintf("s%d", i)
	}
	tip := g.Chain("m", parent, 100)
	for _, b := range g.Branch(tip) {
		if _, err := n.SubmitBlock(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	coins := g.Spendable(tip, w)
	if len(coins) < total {
		t.Fatalf("%d mature outputs, want %d", len(coins), total)
	}
	txs := make([]mempool.SavedTx, 0, total)
	at := time.Now().Add(-time.Hour)
	for i := 0; i < total; i++ {
		in := coins[i]
		if i%10 == 9 {
			in = chaingen.OutputOf(txs[i-1].Tx, 0)
		}
		tx := g.Spend(in).Fee(1_000).Change(w.PKH, 1).SignedBy(w).Tx()
		txs = append(txs, mempool.SavedTx{Tx: tx, Arrival: at.Add(time.Duration(i) * time.Millisecond)})
	}
	if err := n.Chain().Close(); err != nil {
		t.Fatal(err)
	}
	file = mempool.EncodeSnapshot(params.Regtest.Magic, txs)
	if err := os.WriteFile(filepath.Join(dir, MempoolFile), file, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, cfg, file
}

// TestShutdownDuringMempoolLoad: a signal while New loads a big mempool.dat (here at the
// load's first progress line, a tenth of the way) stops New within milliseconds with
// context.Canceled, and the file is left as it was: the next start loads every
// transaction, and its clean stop writes them all back.
func TestShutdownDuringMempoolLoad(t *testing.T) {
	const total = 1500
	dir, cfg, file := bigMempoolDir(t, total)
	path := filepath.Join(dir, MempoolFile)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelled := make(chan time.Time, 1)
	stop := func() {
		select {
		case cancelled <- time.Now():
			cancel()
		default:
		}
	}
	var log proctest.Buffer
	cfg.Logger = slog.New(onMessage{slog.NewTextHandler(&log, nil), func(r slog.Record) {
		progress := false
		r.Attrs(func(a slog.Attr) bool { progress = progress || a.Key == "progress"; return true })
		if r.Message == "mempool: loading mempool.dat" && progress {
			stop()
		}
	}})
	// Without a progress line, the signal comes a second in (the load takes several).
	timer := time.AfterFunc(time.Second, stop)
	defer timer.Stop()
	n, err := New(ctx, cfg)
	returned := time.Now()
	if n != nil {
		n.Chain().Close()
	}
	at := <-cancelled
	took := returned.Sub(at)
	t.Logf("New returned %.2f ms after the signal, during the load of %d transactions", float64(took.Microseconds())/1000, total)
	if !errors.Is(err, context.Canceled) || n != nil {
		t.Fatalf("New stopped during the mempool's load: %v (node %v), want context.Canceled and no node\n%s", err, n != nil, &log)
	}
	if took > 2*time.Second {
		t.Errorf("New took %v to return after the signal", took)
	}
	if !strings.Contains(log.String(), "loading mempool.dat stopped") {
		t.Fatalf("the signal did not land during the load:\n%s", &log)
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, file) {
		t.Fatalf("mempool.dat changed by a start stopped during its load (%v)", err)
	}

	// The next start loads every transaction; its clean stop writes them all.
	r := runOn(t, dir, Config{MempoolSaveInterval: -1})
	if got := r.Mempool().Info().Size; got != total {
		t.Fatalf("after the restart the pool holds %d transactions, want %d", got, total)
	}
	r.stop()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := mempool.DecodeSnapshot(params.Regtest.Magic, b)
	if err != nil || len(saved) != total {
		t.Fatalf("mempool.dat after a clean stop: %d transactions, %v", len(saved), err)
	}
	want := map[types.Hash]bool{}
	old, _ := mempool.DecodeSnapshot(params.Regtest.Magic, file)
	for _, s := range old {
		want[s.Tx.TxID()] = true
	}
	for _, s := range saved {
		if !want[s.Tx.TxID()] {
			t.Fatalf("mempool.dat after a clean stop holds %s, which the first file did not", s.Tx.TxID())
		}
	}
}
