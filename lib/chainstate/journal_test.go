package chainstate

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// TestJournalUndoesAnyChange stages random puts, inserts and deletes over two tables (one
// with a secondary index) block after block, commits them, and then replays each block's undo
// data backwards, flushing in between at random. After every undo the stored tables, secondary
// index included, must equal the state before that block, key for key.
func TestJournalUndoesAnyChange(t *testing.T) {
	c, err := Open(context.Background(), t.TempDir(), params.Regtest, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	utxoK := func(i int) []byte {
		var k [37]byte
		utxoKeyTo(k[:], types.Outpoint{TxID: types.Blake3([]byte{byte(i)}), Index: uint32(i % 3)})
		return k[:]
	}
	clusterK := func(i int) []byte { return hashKey(pfxCluster, types.Blake3([]byte{byte(i), 'c'})) }
	snapshot := func() map[byte]map[string]string {
		c.mu.Lock()
		if err := c.flushLocked(); err != nil {
			t.Fatal(err)
		}
		c.mu.Unlock()
		out := map[byte]map[string]string{}
		for _, p := range []byte{pfxUtxo, pfxAddr, pfxCluster} {
			out[p] = rawTable(t, c, p)
		}
		return out
	}
	var before []map[byte]map[string]string
	var undos [][]byte
	live := map[int]bool{}
	for blk := 0; blk < 40; blk++ {
		before = append(before, snapshot())
		var j blockJournal
		for op := 0; op < 12; op++ {
			i := rng.IntN(30)
			switch rng.IntN(3) {
			case 0: // a new output, or a changed owner of a live one (the index moves)
				e := &consensus.UtxoEntry{Value: uint64(rng.IntN(1000) + 1), PubKeyHash: types.Blake3([]byte{byte(rng.IntN(4))}), Height: uint64(blk)}
				if live[i] {
					j.put(utxoK(i), e)
				} else {
					j.insert(utxoK(i), e)
				}
				live[i] = true
			case 1:
				j.del(utxoK(i))
				live[i] = false
			default:
				if rng.IntN(4) == 0 {
					j.del(clusterK(i))
				} else {
					j.put(clusterK(i), uint64(rng.IntN(1e6)))
				}
			}
		}
		c.mu.Lock()
		u, err := c.commit(&j)
		if err == nil && rng.IntN(3) == 0 {
			err = c.flushLocked()
		}
		c.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		undos = append(undos, u)
	}
	for blk := len(undos) - 1; blk >= 0; blk-- {
		recs, err := decodeUndo(undos[blk])
		if err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		for _, r := range recs {
			s, err := c.slotLocked([]byte(r.key))
			if err != nil {
				t.Fatal(err)
			}
			s.val, s.dirty = r.prev, true
		}
		c.wc.dirty = true
		c.mu.Unlock()
		got := snapshot()
		for p, want := range before[blk] {
			if len(got[p]) != len(want) {
				t.Fatalf("undo of block %d: table %q has %d records, want %d", blk, p, len(got[p]), len(want))
			}
			for k, v := range want {
				if got[p][k] != v {
					t.Fatalf("undo of block %d: table %q key %x differs", blk, p, k)
				}
			}
		}
	}
}

// FuzzDecodeUndo feeds arbitrary bytes to the undo decoder: it must fail cleanly or yield
// records that encode back to the same bytes.
func FuzzDecodeUndo(f *testing.F) {
	var j blockJournal
	var k [37]byte
	utxoKeyTo(k[:], types.Outpoint{Index: 1})
	j.insert(k[:], &consensus.UtxoEntry{Value: 5})
	j.insert([]byte(keyStats), Stats{Height: 3})
	c := &Chain{}
	c.wc.reset()
	u, err := c.commit(&j)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(u)
	f.Add([]byte{1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := decodeUndo(b)
		if err != nil {
			return
		}
		w := undoWriterFor(len(recs))
		for _, r := range recs {
			w.add([]byte(r.key), r.prev)
		}
		if again := w.finish(); string(again) != string(b) {
			t.Fatalf("decoded records encode to %x, not %x", again, b)
		}
	})
}
