package chainstate

import (
	"fmt"
	"testing"

	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// checkCleanCache fails unless every entry of the clean cache is what the database holds.
func checkCleanCache(t testing.TB, c *Chain) {
	t.Helper()
	c.mu.RLock()
	defer c.mu.RUnlock()
	for k, v := range c.clean {
		if !cleanTable(k[0]) {
			t.Fatalf("clean cache holds key %x of table %q", k, k[0])
		}
		disk, err := c.readDB([]byte(k))
		if err != nil {
			t.Fatal(err)
		}
		if disk != v {
			t.Fatalf("clean cache: key %x holds %v, the database %v", k, v, disk)
		}
	}
}

// The inputs of a block large enough to be read in parallel (fetchInputs) give the results and
// the errors of the rules reading them one by one: the spent outputs are all in the database
// (outside bulk mode every block is written), and a block spending one output twice, or an
// output that does not exist, fails as the rules say.
func TestFetchInputsKeepsTheRules(t *testing.T) {
	h := newHarness(t)
	h.Chain("a", "genesis", 101)
	for i := 1; i <= 101; i++ {
		h.accept(fmt.Sprintf("a%d", i), fmt.Sprintf("a%d", i))
	}
	n := 2 * fetchParallelMin
	split := h.spendTx("split", "a1", 0, 1000, n)
	h.Next("a102", "a101", []*types.Transaction{split})
	h.accept("a102", "a102")

	spends := func(prefix string, idx ...int) []*types.Transaction {
		var txs []*types.Transaction
		for i, x := range idx {
			txs = append(txs, h.spendTx(fmt.Sprintf("%s%d", prefix, i), "split", x, 100, 1))
		}
		return txs
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	// An output the split transaction does not have (first: the outputs a rejected block
	// read stay in the write cache, and the next block would read fewer).
	missing := h.Spend(chaingen.Output{Outpoint: types.Outpoint{TxID: split.TxID(), Index: uint32(n)}, Value: 1,
		PKH: h.Miner().PKH}).Tx()
	h.Next("missing", "a102", append(spends("m", all[:n-1]...), missing))
	h.reject("missing", consensus.ErrMissingInputs, "a102")
	// Output 0 twice, by two transactions of one block.
	h.Next("twice", "a102", append(spends("t", all...), h.spendTx("t-again", "split", 0, 200, 1)))
	h.reject("twice", consensus.ErrDoubleSpend, "a102")
	// Every output once: the block connects and spends them all.
	h.Next("a103", "a102", spends("s", all...))
	h.accept("a103", "a103")
	for i := range n {
		if _, ok, err := h.c.Utxo(types.Outpoint{TxID: split.TxID(), Index: uint32(i)}); ok || err != nil {
			t.Fatalf("output %d of the split still unspent (%v)", i, err)
		}
	}
}
