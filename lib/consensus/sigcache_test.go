package consensus_test

import (
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

func TestSigCacheBounded(t *testing.T) {
	c := consensus.NewSigCache(10)
	for i := 0; i < 100; i++ {
		c.Add(types.Blake3([]byte{byte(i)}))
	}
	if c.Len() != 10 {
		t.Fatalf("cache holds %d, bound 10", c.Len())
	}
	var nilCache *consensus.SigCache
	if nilCache.Has(types.Hash{}) {
		t.Fatal("nil cache reports a hit")
	}
	nilCache.Add(types.Hash{}) // no panic
}

// preverifyBlock runs b through the cache's pre-verification queue on this goroutine, as the
// node's preverify loops do, until it is done.
func preverifyBlock(t *testing.T, c *consensus.SigCache, b *types.Block, magic [4]byte) {
	t.Helper()
	q := c.Queue(magic)
	done := make(chan struct{})
	q.Add(b, done)
	q.Urge(done) // whether or not the cache has room
	for q.Step() {
	}
	select {
	case <-done:
	default:
		t.Fatal("the queue ran out of work before the block was done")
	}
}

// A cached transaction skips signature checks in CheckBlockConnect; the same transaction with
// a tampered signature has another key, so it is verified and rejected.
func TestSigCacheInBlockConnect(t *testing.T) {
	tx1, tx2, tx3, tx4 := connectTxs()
	in := connectInput(connectLimit, tx1, tx2, tx3, tx4)
	c := consensus.NewSigCache(0)
	preverifyBlock(t, c, in.Block, in.Magic)
	if c.Len() != 4 {
		t.Fatalf("preverify cached %d of 4 transactions", c.Len())
	}
	in.SigCache = c
	if _, err := consensus.CheckBlockConnect(in); err != nil {
		t.Fatal(err)
	}
	// The connect took the entries it used: they will not be needed again.
	if c.Len() != 0 {
		t.Fatalf("%d entries left after the block's connect took its 4", c.Len())
	}
	preverifyBlock(t, c, in.Block, in.Magic)
	bad := *tx3
	bad.Inputs = append([]types.TxInput(nil), tx3.Inputs...)
	bad.Inputs[0].Signature[0] ^= 1
	in = connectInput(connectLimit, tx1, tx2, &bad, tx4)
	in.SigCache = c
	preverifyBlock(t, c, in.Block, in.Magic)
	if c.Has(consensus.SigCacheKey(&bad)) {
		t.Fatal("a bad signature was cached")
	}
	_, err := consensus.CheckBlockConnect(in)
	wantKind(t, err, consensus.ErrBadSignature)
}

// The queue caches the transactions whose signatures verify, leaves out one with a bad
// signature, closes every block's channel, and counts nothing pending at the end.
func TestPreverifyQueue(t *testing.T) {
	tx1, tx2, tx3, tx4 := connectTxs()
	bad := *tx3
	bad.Inputs = append([]types.TxInput(nil), tx3.Inputs...)
	bad.Inputs[0].Signature[0] ^= 1
	good := connectInput(connectLimit, tx1, tx2)
	mixed := connectInput(connectLimit, &bad, tx4)
	empty := connectInput(connectLimit)
	c := consensus.NewSigCache(0)
	q := c.Queue(good.Magic)
	if q != c.Queue(good.Magic) {
		t.Fatal("a cache has more than one queue")
	}
	var dones []chan struct{}
	for _, b := range []*types.Block{good.Block, mixed.Block, empty.Block, good.Block} {
		d := make(chan struct{})
		q.Add(b, d)
		dones = append(dones, d)
	}
	stop := make(chan struct{})
	for w := 0; w < 3; w++ {
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if !q.Step() {
					select {
					case <-stop:
						return
					case <-q.Wake():
					}
				}
			}
		}()
	}
	defer close(stop)
	for i, d := range dones {
		select {
		case <-d:
		case <-time.After(10 * time.Second):
			t.Fatalf("block %d never done", i)
		}
	}
	for _, tx := range []*types.Transaction{tx1, tx2, tx4} {
		if !c.Has(consensus.SigCacheKey(tx)) {
			t.Fatalf("transaction %s not cached", tx.TxID())
		}
	}
	if c.Has(consensus.SigCacheKey(&bad)) {
		t.Fatal("a bad signature was cached")
	}
	if q.Pending() != 0 || q.Len() != 0 {
		t.Fatalf("pending %d signatures, %d blocks after all were done", q.Pending(), q.Len())
	}
}

// The queue starts a block only when its transactions fit in the cache (verified further
// ahead they would evict entries of blocks still to connect), or when its connect waits for
// it (Urge), so a full cache never stalls the chain.
func TestPreverifyQueueKeepsToTheCache(t *testing.T) {
	tx1, tx2, tx3, tx4 := connectTxs()
	first := connectInput(connectLimit, tx1, tx2)
	second := connectInput(connectLimit, tx3, tx4)
	c := consensus.NewSigCache(3) // room for the first block, not for both
	q := c.Queue(first.Magic)
	d1, d2 := make(chan struct{}), make(chan struct{})
	q.Add(first.Block, d1)
	q.Add(second.Block, d2)
	for q.Step() { // one goroutine: prepare and verify all that may be
	}
	<-d1
	select {
	case <-d2:
		t.Fatal("the second block was verified into a cache without room for it")
	default:
	}
	// Its connect takes the first block's entries (as CheckBlockConnect does, see
	// TestSigCacheInBlockConnect): now the second block fits.
	for _, tx := range []*types.Transaction{tx1, tx2} {
		if !c.Take(consensus.SigCacheKey(tx)) {
			t.Fatalf("transaction %s of the first block not cached", tx.TxID())
		}
	}
	for q.Step() {
	}
	select {
	case <-d2:
	default:
		t.Fatal("a block that fits was not verified")
	}
	if !c.Has(consensus.SigCacheKey(tx3)) || !c.Has(consensus.SigCacheKey(tx4)) {
		t.Fatal("the second block's transactions are not cached")
	}
	// A full cache and a block its connect waits for: Urge starts it.
	third := connectInput(connectLimit, tx1, tx2)
	c.Add(types.Blake3([]byte("another")))
	d3 := make(chan struct{})
	q.Add(third.Block, d3)
	for q.Step() {
	}
	select {
	case <-d3:
		t.Fatal("a block was verified into a full cache without being awaited")
	default:
	}
	q.Urge(d3)
	for q.Step() {
	}
	select {
	case <-d3:
	default:
		t.Fatal("an awaited block was not verified")
	}
}
