package consensus_test

import (
	"testing"

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

// A cached transaction skips signature checks in CheckBlockConnect; the same transaction with
// a tampered signature has another key, so it is verified and rejected.
func TestSigCacheInBlockConnect(t *testing.T) {
	tx1, tx2, tx3, tx4 := connectTxs()
	in := connectInput(connectLimit, tx1, tx2, tx3, tx4)
	c := consensus.NewSigCache(0)
	c.Preverify(in.Block, in.Magic, 2)
	if c.Len() != 4 {
		t.Fatalf("preverify cached %d of 4 transactions", c.Len())
	}
	in.SigCache = c
	if _, err := consensus.CheckBlockConnect(in); err != nil {
		t.Fatal(err)
	}
	bad := *tx3
	bad.Inputs = append([]types.TxInput(nil), tx3.Inputs...)
	bad.Inputs[0].Signature[0] ^= 1
	in = connectInput(connectLimit, tx1, tx2, &bad, tx4)
	in.SigCache = c
	c.Preverify(in.Block, in.Magic, 1)
	if c.Has(consensus.SigCacheKey(&bad)) {
		t.Fatal("a bad signature was cached")
	}
	_, err := consensus.CheckBlockConnect(in)
	wantKind(t, err, consensus.ErrBadSignature)
}
