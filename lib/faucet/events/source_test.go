package events

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cointoolkit/coin/lib/chainfollow"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// txNode answers the source's calls from a map of transactions; fail makes the next
// getrawtransaction fail, as a node away in the middle of a block would.
type txNode struct {
	txs  map[string]*types.Transaction
	fail bool
}

func (n *txNode) GetRawTransaction(_ context.Context, txid string) (*types.Transaction, error) {
	if n.fail {
		n.fail = false
		return nil, errors.New("connection refused")
	}
	tx, ok := n.txs[txid]
	if !ok {
		return nil, fmt.Errorf("no transaction %s", txid)
	}
	return tx, nil
}

func (n *txNode) GetTransaction(context.Context, string) (*rpcapi.Transaction, error) {
	return &rpcapi.Transaction{InMempool: true}, nil
}

func (n *txNode) GetAgentProfile(_ context.Context, a string) (*rpcapi.AgentProfile, error) {
	return &rpcapi.AgentProfile{Address: a, ConductScore: 500, Tier: "participant"}, nil
}

// TestSourceApplyOnceInOrder: the source publishes a block's events once, however many times
// the follower gives it the block (after a failure it gets the update again, merged); a
// block that fails to decode publishes nothing; a reorganisation retracts the undone block's
// events before the new block's come, and the log's ids follow that order.
func TestSourceApplyOnceInOrder(t *testing.T) {
	reg := &types.Transaction{Version: 1, Kind: types.KindAgentRegister,
		Inputs:  []types.TxInput{{PrevTxID: types.Hash{9}, PublicKey: [32]byte{7}}},
		Outputs: []types.TxOutput{{Value: 50_0000_0000, PubKeyHash: types.Hash{7}}}}
	regID := reg.TxID().String()
	node := &txNode{txs: map[string]*types.Transaction{regID: reg}}
	h := newTestHub(t, 0, 0)
	src, err := NewSource(SourceConfig{Node: node, Hub: h, HRP: params.Regtest.HRP})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	hash := func(tag string, height uint64) string { return fmt.Sprintf("%s%062d", tag, height) }
	apply := func(u chainfollow.Update) error { return src.Apply(ctx, u) }
	if err := apply(chainfollow.Update{Tip: chainfollow.BlockRef{Height: 10, Hash: hash("aa", 10)}, Resync: true}); err != nil {
		t.Fatal(err)
	}
	if pos := src.Position(); len(pos) != 1 || pos[0].Height != 10 {
		t.Fatalf("position after the first update: %+v", pos)
	}
	b11 := chainfollow.Block{Height: 11, Hash: hash("aa", 11), PrevHash: hash("aa", 10), Txs: []string{"cb11", regID}}
	up := chainfollow.Update{Connected: []chainfollow.Block{b11}, Tip: chainfollow.BlockRef{Height: 11, Hash: b11.Hash}}
	node.fail = true
	if err := apply(up); err == nil {
		t.Fatal("a block whose transaction could not be read was taken")
	}
	if _, last := h.store.Bounds(); last != 0 {
		t.Fatalf("a failed block published %d events", last)
	}
	for i := 0; i < 2; i++ { // the retry, then the same update once more
		if err := apply(up); err != nil {
			t.Fatal(err)
		}
	}
	// The reorganisation: 11 undone, 11' and 12' mine the registration again.
	b11x := chainfollow.Block{Height: 11, Hash: hash("bb", 11), PrevHash: hash("aa", 10), Txs: []string{"cb11x"}}
	b12x := chainfollow.Block{Height: 12, Hash: hash("bb", 12), PrevHash: b11x.Hash, Txs: []string{"cb12x", regID}}
	if err := apply(chainfollow.Update{Disconnected: []chainfollow.Block{b11}, Connected: []chainfollow.Block{b11x, b12x},
		Tip: chainfollow.BlockRef{Height: 12, Hash: b12x.Hash}}); err != nil {
		t.Fatal(err)
	}
	evs, err := h.store.Range(0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, fmt.Sprintf("%d %s %s %d", e.ID, e.Type, e.Status, e.Height))
	}
	want := []string{
		"1 agent_registered confirmed 11",
		"2 retracted  11",
		"3 agent_registered confirmed 12",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events:\n%q\nwant\n%q", got, want)
	}
	if evs[1].Retracts != 1 || evs[1].Reason != ReasonReorg || evs[1].Height != 11 {
		t.Fatalf("retraction: %+v", evs[1])
	}
	if pos := src.Position(); pos[len(pos)-1] != (chainfollow.BlockRef{Height: 12, Hash: b12x.Hash}) {
		t.Fatalf("position: %+v", pos)
	}
}
