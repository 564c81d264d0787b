package mempool

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// bigCoins mines until the coinbases of fixture blocks h12 to h16 (50 COIN each) are mature
// and returns them.
func (f *fixture) bigCoins() []coin {
	f.tb.Helper()
	for f.chain.Tip().Height < 116 {
		f.mine()
	}
	var out []coin
	for h := 12; h <= 16; h++ {
		out = append(out, f.g.Coinbase(baseName(h)))
	}
	return out
}

// TestPendingConductView is protocol §9.3: register, create a contract, fulfil it and review it,
// all waiting in the pool together; each is checked against the effects of the ones before
// it, is their child for block assembly, and the fulfilment (with the review that needs it)
// leaves the pool with a log line once a block makes it invalid (the contract expired).
func TestPendingConductView(t *testing.T) {
	var logs bytes.Buffer
	f := newFixture(t, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	g := f.g
	big := f.bigCoins()
	a1, a2, a3 := big[0], big[1], big[2]
	fund := g.Spend(big[3], big[4]).Fee(10_000).Change(otherPKH, 1).Tx()
	f.mine(fund)
	b1 := out(fund, 0)
	accept := func(tx *types.Transaction) {
		t.Helper()
		if _, err := f.pool.Accept(context.Background(), tx); err != nil {
			t.Fatalf("%s: %v", tx.Kind, err)
		}
	}
	regA := g.Spend(a1, a2).Kind(types.KindAgentRegister, nil).Pay(testPKH, consensus.AgentStake).Change(testPKH, 1).Fee(10_000).Tx()
	regB := g.Spend(b1).Kind(types.KindAgentRegister, nil).Pay(otherPKH, consensus.AgentStake).Change(otherPKH, 1).Fee(10_000).Tx()
	create := g.Spend(a3).Kind(types.KindContractCreate, types.ContractCreatePayload{Counterparty: otherPKH, ExpiryBlocks: 10}.Bytes()).
		Pay(otherPKH, 100_000_000).Change(testPKH, 1).Fee(10_000).Tx()
	// Before the registrations are in the pool, the contract has no agents.
	if _, err := f.pool.Accept(context.Background(), create); !errors.Is(err, consensus.ErrNotAnAgent) {
		t.Fatalf("contract before registering: %v", err)
	}
	accept(regA)
	accept(regB)
	again := g.Spend(g.Coinbase(baseName(17)), out(regA, 1)).Kind(types.KindAgentRegister, nil).Pay(testPKH, consensus.AgentStake).Fee(10_000).Tx()
	if _, err := f.pool.Accept(context.Background(), again); !errors.Is(err, consensus.ErrAlreadyRegistered) {
		t.Fatalf("second pending registration: %v", err)
	}
	accept(create)
	fulfil := g.Spend(out(create, 0)).Kind(types.KindContractFulfil, types.ContractRefPayload{ContractID: create.TxID()}.Bytes()).Fee(10_000).Tx()
	accept(fulfil)
	review := g.Spend(out(regA, 1)).Kind(types.KindReview,
		types.ReviewPayload{ContractID: create.TxID(), Subject: otherPKH, Score: 9}.Bytes()).Fee(10_000).Tx()
	accept(review)

	// The pending view knows every effect: B 500 → 520 (fulfil) → 587 (a 9), A 510.
	view := f.pool.Conduct()
	score := func(pkh types.Hash) uint32 {
		a, ok, err := view.Agent(pkh)
		if err != nil || !ok {
			t.Fatalf("agent %s: %v %v", pkh, ok, err)
		}
		return a.Score
	}
	if sa, sb := score(testPKH), score(otherPKH); sa != 510 || sb != 587 {
		t.Fatalf("pending scores A %d B %d, want 510 587", sa, sb)
	}
	if n := len(f.pool.PendingAgents()); n != 2 {
		t.Fatalf("%d pending agents", n)
	}
	// Dependents are children: a template lists them after what they rely on.
	pos := map[types.Hash]int{}
	for i, e := range f.pool.Select(1 << 20) {
		pos[e.TxID] = i
	}
	order := []*types.Transaction{regB, create, fulfil, review}
	for i := 1; i < len(order); i++ {
		if pos[order[i].TxID()] <= pos[order[i-1].TxID()] {
			t.Fatalf("%s selected before %s", order[i].Kind, order[i-1].Kind)
		}
	}
	if pos[create.TxID()] <= pos[regA.TxID()] {
		t.Fatal("the contract was selected before its initiator's registration")
	}

	// The registrations and the contract are mined; the fulfilment waits past the expiry.
	f.mine(regA, regB, create)
	if f.pool.Info().Size != 2 {
		t.Fatalf("pool holds %d after mining three of five", f.pool.Info().Size)
	}
	// The contract was mined at height h with expires_at h + 10: a fulfilment fits in the
	// blocks up to h + 9, so it waits through eight more blocks.
	for i := 0; i < 8; i++ {
		f.mine()
	}
	if _, ok := f.pool.Get(fulfil.TxID()); !ok {
		t.Fatal("the fulfilment left before the contract expired")
	}
	f.mine() // now the next block is at expires_at: no fulfilment any more
	if f.pool.Info().Size != 0 {
		t.Fatalf("pool holds %d after the contract expired, want 0 (fulfilment and its review)", f.pool.Info().Size)
	}
	if !strings.Contains(logs.String(), "dropped an agent transaction") || !strings.Contains(logs.String(), fulfil.TxID().String()) {
		t.Fatalf("no log line for the dropped fulfilment:\n%s", logs.String())
	}
}

// TestRecheckFeesDropsDecayed is protocol §8's mempool re-check: a transaction that pays exactly
// the minimum relay fee at the next block's height is accepted, and after one more block its
// input has decayed below that and it leaves the pool with a log line.
func TestRecheckFeesDropsDecayed(t *testing.T) {
	var logs bytes.Buffer
	f := newFixtureValued(t, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, nil)
	c := f.take(1)[0]
	e, ok, err := f.chain.Utxo(c.Outpoint)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	next, _ := f.chain.NextBlockInfo()
	eff, err := f.chain.InputValue(e, next)
	if err != nil || eff >= e.Value {
		t.Fatalf("the test wallet's coin does not decay: %d of %d (%v)", eff, e.Value, err)
	}
	build := func(fee uint64) *types.Transaction {
		return f.g.Spend(c).Fee(fee).Change(testPKH, 1).SignedBy(testWallet).Tx()
	}
	size := uint64(build(1).SerializeSize())
	tx := build(e.Value - eff + size) // leaves exactly size × 1 at the next block
	if _, err := f.pool.Accept(context.Background(), build(e.Value-eff+size-1)); !errors.Is(err, ErrFeeTooLow) {
		t.Fatalf("one subunit below the relay fee after decay: %v", err)
	}
	if _, err := f.pool.Accept(context.Background(), tx); err != nil {
		t.Fatalf("exactly the relay fee after decay: %v", err)
	}
	f.mine() // a block without it: its input decays further
	if _, ok := f.pool.Get(tx.TxID()); ok {
		t.Fatal("the transaction stayed although its input decayed below the relay fee")
	}
	if !strings.Contains(logs.String(), "inputs decayed") {
		t.Fatalf("no log line:\n%s", logs.String())
	}
}
