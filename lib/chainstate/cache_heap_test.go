package chainstate

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/params"
)

// TestWriteCacheHeapBound: in bulk mode a heap budget below the live heap writes the cache
// at the first block after a garbage collection, although the cache is far below its size
// estimate bound and its age bound; without a heap bound the same blocks stay cached. A
// cache below heapBoundMinCache is not written on the heap's account before a collection
// since the last write (the heap still holds what that write freed).
func TestWriteCacheHeapBound(t *testing.T) {
	g := chaingen.New(t, params.Regtest)
	parent := "genesis"
	var names []string
	for i := 1; i <= 12; i++ {
		name := fmt.Sprintf("b%d", i)
		g.Next(name, parent, nil, chaingen.SplitCoinbase(50))
		names = append(names, name)
		parent = name
	}
	run := func(heapMiB int, gcEvery int) []int {
		// No block cache: its bound would add to the heap budget.
		c, err := Open(context.Background(), t.TempDir(), params.Regtest, Options{WriteCacheMiB: 1 << 20, WriteCacheAge: time.Hour, CacheMiB: -1,
			WriteCacheHeapMiB: heapMiB})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.SetBulk(true); err != nil {
			t.Fatal(err)
		}
		var unflushed []int
		for i, name := range names {
			if gcEvery > 0 && i%gcEvery == 0 {
				runtime.GC()
			}
			if _, err := c.ProcessBlock(context.Background(), g.Block(name)); err != nil {
				t.Fatal(err)
			}
			settle(t, c)
			unflushed = append(unflushed, c.Unflushed())
		}
		return unflushed
	}
	// No heap bound: everything stays cached.
	if got := run(-1, 1); got[len(got)-1] != len(names) {
		t.Fatalf("no heap bound: unflushed after each block %v, want all %d cached", got, len(names))
	}
	// A budget of 1 MiB is below any live heap: a collection before each block writes each.
	for i, n := range run(1, 1) {
		if n != 0 {
			t.Fatalf("1 MiB heap budget, a collection before every block: %d blocks cached after block %d", n, i+1)
		}
	}
	// A collection every 4 blocks: the cache is written at the first block after each one
	// and grows in between (no write without a fresh measurement). Other collections may
	// come on their own, so only the bound is checked.
	for i, n := range run(1, 4) {
		if n > 3 {
			t.Fatalf("1 MiB heap budget, a collection every 4 blocks: %d blocks cached after block %d", n, i+1)
		}
	}
	// The default budget is far above this test's heap.
	if got := run(0, 1); got[len(got)-1] != len(names) {
		t.Fatalf("default heap budget: unflushed %v, want all cached", got)
	}
}
