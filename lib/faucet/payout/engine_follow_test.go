package payout

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/chainfollow"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

// TestEngineTakesBlocksExactly: the engine learns from the follower which block mined which
// payout, however far behind it is: of two pending payouts, the one in the 57th of 60 new
// blocks is forgotten and marked mined at that height, the other stays pending (the old poll
// took everything for mined when more than 50 blocks came); a reorganisation that undoes
// the block makes the journaled payout asked about again.
func TestEngineTakesBlocksExactly(t *testing.T) {
	store, err := OpenClaimStore(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	e, err := NewEngine(regtestNode(t), EngineConfig{Net: params.Regtest, Keys: []wallet.Key{newKey(t)}, Journal: store})
	if err != nil {
		t.Fatal(err)
	}
	mined, left := types.Hash{1}, types.Hash{2}
	e.pending[mined], e.pending[left] = &ptx{depth: 1}, &ptx{depth: 1}
	e.journal[mined], e.journal[left] = &Payout{TxID: mined}, &Payout{TxID: left}
	blocks := make([]chainfollow.Block, 60)
	for i := range blocks {
		h := uint64(101 + i)
		blocks[i] = chainfollow.Block{Height: h, Hash: fmt.Sprintf("%064x", h), Txs: []string{fmt.Sprintf("%064x", 1000+h)}}
	}
	blocks[56].Txs = append(blocks[56].Txs, mined.String())
	ctx := context.Background()
	// The follower's first update (its start) alone wakes nothing.
	e.onChain(ctx, chainfollow.Update{Tip: chainfollow.BlockRef{Height: 100, Hash: fmt.Sprintf("%064x", 100)}, Resync: true})
	if e.takeChain() {
		t.Fatal("the follower's first update, with no block, asked for a sync")
	}
	e.onChain(ctx, chainfollow.Update{Connected: blocks, Tip: chainfollow.BlockRef{Height: 160, Hash: blocks[59].Hash}})
	if !e.takeChain() {
		t.Fatal("60 new blocks did not wake the engine")
	}
	if _, ok := e.pending[mined]; ok {
		t.Fatal("the mined payout is still pending")
	}
	if _, ok := e.pending[left]; !ok {
		t.Fatal("the payout no block mined was taken for mined")
	}
	if at, ok := e.minedAt[mined]; !ok || at != 157 {
		t.Fatalf("mined at %d (%v), want 157", at, ok)
	}
	if _, ok := e.minedAt[left]; ok {
		t.Fatal("the unmined payout has a mining height")
	}
	if got := e.lastHeight.Load(); got != 160 {
		t.Fatalf("height %d, want 160", got)
	}
	// Blocks 157..160 leave the main chain.
	var undone []chainfollow.Block
	for i := 59; i >= 56; i-- {
		undone = append(undone, blocks[i])
	}
	e.onChain(ctx, chainfollow.Update{Disconnected: undone, Tip: chainfollow.BlockRef{Height: 156, Hash: blocks[55].Hash}})
	if !e.takeChain() {
		t.Fatal("a reorganisation did not wake the engine")
	}
	if _, ok := e.minedAt[mined]; ok {
		t.Fatal("the payout of an undone block is still taken for mined")
	}
}

// blocksDuringResolve is a node client that mines blocks right after the engine's first
// look at a journaled payout, as a block arriving while a restarted engine reads its journal.
type blocksDuringResolve struct {
	*rpcapi.Client
	once   sync.Once
	blocks int
	to     string
	err    error
}

func (n *blocksDuringResolve) GetTransaction(ctx context.Context, txid string) (*rpcapi.Transaction, error) {
	tx, err := n.Client.GetTransaction(ctx, txid)
	n.once.Do(func() { _, n.err = n.Client.GenerateToAddress(ctx, n.blocks, n.to) })
	return tx, err
}

// TestEngineSeesBlocksDuringFirstSync: blocks that come while a restarted engine resolves its
// journal are taken from the follower, so a payout they mine FinalConfirmations deep leaves
// the journal with no further block. The old sync read the height after resolving and
// started the follower past those blocks: the payout stayed owed until ResendInterval.
func TestEngineSeesBlocksDuringFirstSync(t *testing.T) {
	e1, claims, rpc := fundedEngine(t, EngineConfig{})
	ctx1, stop1 := context.WithCancel(context.Background())
	done1 := make(chan struct{})
	go func() { e1.Run(ctx1); close(done1) }()
	to := newKey(t)
	txid, err := e1.Pay(context.Background(), Claim{Address: to.Address, PKH: types.Hash(to.PKH), Amount: amount.Coin})
	if err != nil {
		t.Fatal(err)
	}
	stop1()
	<-done1
	burn := newKey(t)
	n := &blocksDuringResolve{Client: rpc, blocks: FinalConfirmations, to: burn.Address}
	e2, err := NewEngine(n, EngineConfig{Net: params.Regtest, Keys: e1.cfg.Keys, Journal: claims, ResendInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if e2.Status().Owed != 1 {
		t.Fatalf("owed %d after the restart, want the journaled payout", e2.Status().Owed)
	}
	ctx2, stop2 := context.WithCancel(context.Background())
	done2 := make(chan struct{})
	go func() { e2.Run(ctx2); close(done2) }()
	t.Cleanup(func() { stop2(); <-done2 })
	deadline := time.Now().Add(10 * time.Second)
	for e2.Status().Owed != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("payout %s still owed %s after %d blocks came during the first sync (%v)",
				txid, 10*time.Second, FinalConfirmations, n.err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n.err != nil {
		t.Fatal(n.err)
	}
}
