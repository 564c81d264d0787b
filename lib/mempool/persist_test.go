package mempool

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/types"
)

// persistFixture fills a pool with an independent transfer, a parent and its child.
func persistFixture(t *testing.T) (f *fixture, indep, parent, child *types.Transaction) {
	t.Helper()
	f = newFixture(t, Options{})
	f.spare = f.take(1)
	indep = f.transfer(f.spare, 5_000, 1)
	parent = f.transfer(f.take(2), 6_000, 2)
	child = f.transfer([]coin{out(parent, 1)}, 4_000, 1)
	base := time.Unix(1_700_000_000, 123)
	for i, tx := range []*types.Transaction{indep, parent, child} {
		f.pool.now = func() time.Time { return base.Add(time.Duration(i) * time.Minute) }
		f.mustAccept(tx)
	}
	return f, indep, parent, child
}

// reload builds a fresh pool over f's chain and loads path into it, with its log.
func reload(t *testing.T, f *fixture, path string) (*Pool, LoadResult, string) {
	t.Helper()
	var log bytes.Buffer
	p := New(f.chain, testNet.Magic, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	res, err := p.Load(context.Background(), path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	checkPool(t, p)
	return p, res, log.String()
}

func TestSaveLoadRoundTrip(t *testing.T) {
	f, indep, parent, child := persistFixture(t)
	path := filepath.Join(t.TempDir(), "mempool.dat")
	n, err := f.pool.Save(path)
	if err != nil || n != 3 {
		t.Fatalf("Save: %d, %v", n, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mempool.dat mode: %v %v", st.Mode(), err)
	}
	if m, _ := filepath.Glob(path + ".tmp-*"); len(m) != 0 {
		t.Fatalf("temporary files left: %v", m)
	}
	p, res, log := reload(t, f, path)
	if res.Read != 3 || res.Accepted != 3 || res.Dropped != 0 || res.Err != nil {
		t.Fatalf("Load: %+v (log %s)", res, log)
	}
	if got, want := p.Info(), f.pool.Info(); got != want {
		t.Fatalf("restored pool %+v, want %+v", got, want)
	}
	for _, tx := range []*types.Transaction{indep, parent, child} {
		a, _ := f.pool.Get(tx.TxID())
		b, ok := p.Get(tx.TxID())
		if !ok || !b.Time.Equal(a.Time) || b.Fee != a.Fee {
			t.Fatalf("%s: restored %+v, saved %+v", tx.TxID(), b, a)
		}
	}
	if _, ok := p.Get(child.TxID()); !ok || len(p.txs[child.TxID()].parents) != 1 {
		t.Fatal("the child lost its parent link")
	}
}

// TestLoadRevalidates: what the chain mined or made invalid since the save is dropped
// with a log line; the rest is accepted.
func TestLoadRevalidates(t *testing.T) {
	f, indep, parent, child := persistFixture(t)
	path := filepath.Join(t.TempDir(), "mempool.dat")
	if _, err := f.pool.Save(path); err != nil {
		t.Fatal(err)
	}
	// A block mines the parent, and another block a double spend of indep's input.
	f.mine(parent)
	double := f.transfer(f.spare, 9_000, 1)
	f.pool = New(f.chain, testNet.Magic, Options{})
	f.mine(double)

	p, res, log := reload(t, f, path)
	if res.Read != 3 || res.Accepted != 1 || res.Dropped != 2 {
		t.Fatalf("Load: %+v\n%s", res, log)
	}
	if _, ok := p.Get(child.TxID()); !ok {
		t.Fatal("the child of the mined parent is not back")
	}
	if strings.Count(log, "dropped a transaction of mempool.dat") != 2 || !strings.Contains(log, parent.TxID().String()) ||
		!strings.Contains(log, indep.TxID().String()) {
		t.Fatalf("log:\n%s", log)
	}
}

// TestLoadTruncated: a file cut anywhere loads the entries before the cut, never fails,
// and logs the damage.
func TestLoadTruncated(t *testing.T) {
	f, indep, parent, _ := persistFixture(t)
	full := EncodeSnapshot(testNet.Magic, f.pool.Snapshot())
	// The cut falls inside the third entry: the first two are read.
	cut := len(full) - 20
	path := filepath.Join(t.TempDir(), "mempool.dat")
	if err := os.WriteFile(path, full[:cut], 0o600); err != nil {
		t.Fatal(err)
	}
	p, res, log := reload(t, f, path)
	if res.Read != 2 || res.Accepted != 2 || !errors.Is(res.Err, ErrSnapshotCorrupt) {
		t.Fatalf("Load: %+v", res)
	}
	if _, ok := p.Get(indep.TxID()); !ok {
		t.Fatal("first entry missing")
	}
	if _, ok := p.Get(parent.TxID()); !ok {
		t.Fatal("second entry missing")
	}
	if !strings.Contains(log, "mempool.dat is damaged") {
		t.Fatalf("no log line for the damage:\n%s", log)
	}
	// Every cut length: no panic, never more entries than whole ones.
	for i := 0; i <= len(full); i++ {
		txs, err := DecodeSnapshot(testNet.Magic, full[:i])
		if (err == nil) != (i == len(full)) || len(txs) > 3 {
			t.Fatalf("cut at %d: %d entries, %v", i, len(txs), err)
		}
	}
}

func TestLoadRefusesOtherFiles(t *testing.T) {
	f, _, _, _ := persistFixture(t)
	dir := t.TempDir()
	other := testNet.Magic
	other[0] ^= 0xff
	cases := map[string][]byte{
		"garbage":       []byte("this is not a mempool file at all"),
		"empty":         nil,
		"other network": EncodeSnapshot(other, f.pool.Snapshot()),
		"other version": append([]byte(snapshotMagic), 2),
	}
	for name, b := range cases {
		path := filepath.Join(dir, name)
		os.WriteFile(path, b, 0o600)
		p, res, log := reload(t, f, path)
		if p.Info().Size != 0 || !errors.Is(res.Err, ErrSnapshotFormat) || !strings.Contains(log, "damaged") {
			t.Fatalf("%s: %+v, pool %+v, log %s", name, res, p.Info(), log)
		}
	}
	// No file: nothing loaded, nothing logged.
	p, res, log := reload(t, f, filepath.Join(dir, "missing"))
	if p.Info().Size != 0 || res.Err != nil || log != "" {
		t.Fatalf("missing file: %+v %q", res, log)
	}
}

// TestSnapshotSkipsUndecodable: a damaged transaction inside its length frame is skipped
// and the entries after it are read.
func TestSnapshotSkipsUndecodable(t *testing.T) {
	f, indep, _, _ := persistFixture(t)
	txs := f.pool.Snapshot()
	b := EncodeSnapshot(testNet.Magic, txs[:1])
	// Replace the one entry's transaction bytes by a same-length run of 0xff, then append
	// the other two entries and fix the count.
	hdr := len(snapshotMagic) + 1 + 4
	body := EncodeSnapshot(testNet.Magic, txs[1:])[hdr+1:]
	raw := indep.Bytes()
	start := bytes.Index(b, raw)
	for i := range raw {
		b[start+i] = 0xff
	}
	b[hdr] = 3
	b = append(b, body...)
	got, err := DecodeSnapshot(testNet.Magic, b)
	if len(got) != 2 || !errors.Is(err, ErrSnapshotCorrupt) || got[0].Tx.TxID() != txs[1].Tx.TxID() {
		t.Fatalf("%d entries, %v", len(got), err)
	}
}

func FuzzDecodeSnapshot(f *testing.F) {
	tx := &types.Transaction{Version: 1, Kind: types.KindTransfer,
		Inputs:  []types.TxInput{{PrevIndex: 1}},
		Outputs: []types.TxOutput{{Value: 5_000}}}
	magic := testNet.Magic
	f.Add(EncodeSnapshot(magic, nil))
	f.Add(EncodeSnapshot(magic, []SavedTx{{Tx: tx, Arrival: time.Unix(1_700_000_000, 5)}, {Tx: tx}}))
	f.Add([]byte(snapshotMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		txs, err := DecodeSnapshot(magic, b)
		if err != nil {
			return
		}
		// A file that decodes whole is exactly what EncodeSnapshot writes for it.
		if again := EncodeSnapshot(magic, txs); !bytes.Equal(again, b) {
			t.Fatalf("re-encoding differs:\n%x\n%x", b, again)
		}
	})
}

// TestLoadCancelled: a Load of a big mempool.dat whose context ends part way (here when the
// pool has taken a quarter of the file) stops before the next entry and returns
// context.Canceled at once: the pool holds exactly the entries before the stop, consistent
// (parents with their children), and the file is unchanged, so a later Load restores every
// transaction.
func TestLoadCancelled(t *testing.T) {
	const total, stopAt = 1000, 250
	f := newFixture(t, Options{})
	txs := make([]SavedTx, 0, total)
	base := time.Unix(1_700_000_000, 0)
	for i := 0; i < total; i++ {
		var tx *types.Transaction
		if i%10 == 9 { // every tenth spends the transaction before it: a child in the pool
			tx = f.transfer([]coin{out(txs[i-1].Tx, 0)}, 1_000, 1)
		} else {
			tx = f.transfer(f.take(1), 1_000, 1)
		}
		txs = append(txs, SavedTx{Tx: tx, Arrival: base.Add(time.Duration(i) * time.Second)})
	}
	path := filepath.Join(t.TempDir(), "mempool.dat")
	file := EncodeSnapshot(testNet.Magic, txs)
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var added int
	var cancelled time.Time
	p := New(f.chain, testNet.Magic, Options{Logger: slog.New(slog.DiscardHandler), OnChange: func(c Change) {
		if c.Added {
			if added++; added == stopAt {
				cancelled = time.Now()
				cancel()
			}
		}
	}})
	res, err := p.Load(ctx, path)
	returned := time.Since(cancelled)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Load with a context ended part way: %v (%+v)", err, res)
	}
	if res.Read != stopAt || res.Accepted != stopAt || res.Dropped != 0 || res.Left != total-stopAt || res.Err != nil {
		t.Fatalf("Load stopped with %+v, want %d read and accepted, %d left", res, stopAt, total-stopAt)
	}
	checkPool(t, p)
	if got := p.Info().Size; got != stopAt {
		t.Fatalf("the pool holds %d transactions, want the %d before the stop", got, stopAt)
	}
	for i, s := range txs {
		e, ok := p.Get(s.Tx.TxID())
		if ok != (i < stopAt) || ok && !e.Time.Equal(s.Arrival) {
			t.Fatalf("entry %d: in the pool %v (arrival %v), want %v", i, ok, e.Time, i < stopAt)
		}
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, file) {
		t.Fatalf("mempool.dat changed by a cancelled load (%v)", err)
	}

	// The whole file, for comparison, and to show that nothing was lost.
	full := New(f.chain, testNet.Magic, Options{Logger: slog.New(slog.DiscardHandler)})
	start := time.Now()
	res, err = full.Load(context.Background(), path)
	took := time.Since(start)
	if err != nil || res.Accepted != total || full.Info().Size != total {
		t.Fatalf("loading the file again: %+v, %v", res, err)
	}
	t.Logf("the cancelled Load returned %.2f ms after its context ended; a whole Load of the %d entries takes %d ms",
		float64(returned.Microseconds())/1000, total, took.Milliseconds())
	if returned > took/4 {
		t.Errorf("the cancelled Load took %v to return, a quarter of a whole load is %v", returned, took/4)
	}

	// A context that ended before the call reads nothing.
	empty := New(f.chain, testNet.Magic, Options{Logger: slog.New(slog.DiscardHandler)})
	if res, err := empty.Load(ctx, path); !errors.Is(err, context.Canceled) || res.Read != 0 || empty.Info().Size != 0 {
		t.Fatalf("Load with an ended context: %+v, %v", res, err)
	}
}
