package rpcserver_test

import (
	"context"
	"slices"
	"testing"
)

// getrawmempool lists the pool's txids, a parent before its child, and is empty once a block
// mined them.
func TestGetRawMempool(t *testing.T) {
	e := newFundedEnv(t)
	ctx := context.Background()
	if ids, err := e.client.GetRawMempool(ctx); err != nil || ids == nil || len(ids) != 0 {
		t.Fatalf("empty pool: %v %v", ids, err)
	}
	p := e.transfer(e.take(2), 20_000, 2)
	c := e.transfer([]coin{out(p, 0)}, 30_000, 1)
	other := e.transfer(e.take(1), 10_000, 1)
	e.send(p, c, other)
	ids, err := e.client.GetRawMempool(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{p.TxID().String(), c.TxID().String(), other.TxID().String()}
	if len(ids) != 3 || !slices.Contains(ids, want[2]) {
		t.Fatalf("getrawmempool %v, want %v", ids, want)
	}
	ip, ic := slices.Index(ids, want[0]), slices.Index(ids, want[1])
	if ip < 0 || ic < 0 || ip > ic {
		t.Fatalf("getrawmempool %v: parent %s must come before child %s", ids, want[0], want[1])
	}
	e.mineBlock(p, c, other)
	if ids, err := e.client.GetRawMempool(ctx); err != nil || len(ids) != 0 {
		t.Fatalf("after the block: %v %v", ids, err)
	}
}
