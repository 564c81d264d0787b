package chainstate

import (
	"context"
	"fmt"
	"testing"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// TestSameOwnerEarnsNothing is protocol §9.2's same-owner rule through real blocks: Bob's wallet
// has spent together with Alice's, so the clusters merged, and a contract and a review
// between them change no score (counts still count); the same contract with Carol, another
// owner, pays both bonuses.
func TestSameOwnerEarnsNothing(t *testing.T) {
	h := newHarness(t)
	g := h.Generator
	alice, bob, carol := g.Wallet("alice"), g.Wallet("bob"), g.Wallet("carol")
	tip := "genesis"
	n := 0
	mine := func(txs ...*types.Transaction) {
		t.Helper()
		n++
		name := fmt.Sprintf("b%d", n)
		g.Next(name, tip, txs)
		if _, err := h.c.ProcessBlock(context.Background(), g.Block(name)); err != nil {
			t.Fatalf("block %s: %v", name, err)
		}
		tip = name
		checkInvariants(t, h.c)
	}
	var cbs = map[string][]chaingen.Output{}
	for _, w := range []*chaingen.Wallet{alice, bob, carol} {
		g.SetMiner(w)
		for i := 0; i < 5; i++ {
			mine()
			cbs[w.Name] = append(cbs[w.Name], g.Coinbase(tip))
		}
	}
	g.SetMiner(g.Wallet("miner"))
	for i := 0; i < 100; i++ {
		mine()
	}
	cluster := func(w *chaingen.Wallet) types.Hash {
		id, err := h.c.ClusterOf(w.PKH)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	if cluster(alice) == cluster(bob) {
		t.Fatal("alice and bob share a cluster before spending together")
	}
	// Alice and Bob spend together: their clusters merge; the payee (Carol) does not.
	mine(g.Spend(cbs["alice"][0], cbs["bob"][0]).Pay(carol.PKH, 10*amount.Coin).Change(alice.PKH, 1).Fee(1000).Tx())
	if cluster(alice) != cluster(bob) || cluster(carol) == cluster(alice) {
		t.Fatal("spending together did not merge alice and bob, or merged the payee")
	}
	const fee = 1000
	register := func(w *chaingen.Wallet) *types.Transaction {
		return g.Spend(cbs[w.Name][1], cbs[w.Name][2]).Kind(types.KindAgentRegister, nil).Pay(w.PKH, consensus.AgentStake).
			Change(w.PKH, 1).Fee(fee).Tx()
	}
	mine(register(alice), register(bob), register(carol))

	contract := func(from, to *chaingen.Wallet, out chaingen.Output) *types.Transaction {
		p := types.ContractCreatePayload{Counterparty: to.PKH, ExpiryBlocks: 100}
		return g.Spend(out).Kind(types.KindContractCreate, p.Bytes()).Pay(to.PKH, 1*amount.Coin).Change(from.PKH, 1).Fee(fee).Tx()
	}
	fulfil := func(create *types.Transaction) *types.Transaction {
		return g.Spend(chaingen.OutputOf(create, 0)).Kind(types.KindContractFulfil,
			types.ContractRefPayload{ContractID: create.TxID()}.Bytes()).Fee(fee).Tx()
	}
	withBob := contract(alice, bob, cbs["alice"][3])
	withCarol := contract(bob, carol, cbs["bob"][3])
	mine(withBob, withCarol)
	mine(fulfil(withBob), fulfil(withCarol))
	// Bob gives Alice ten stars: nothing; Carol gives Bob ten stars: +90 scaled.
	mine(g.Spend(cbs["bob"][4]).Kind(types.KindReview,
		types.ReviewPayload{ContractID: withBob.TxID(), Subject: alice.PKH, Score: 10}.Bytes()).Fee(fee).Tx(),
		g.Spend(cbs["carol"][4]).Kind(types.KindReview,
			types.ReviewPayload{ContractID: withCarol.TxID(), Subject: bob.PKH, Score: 10}.Bytes()).Fee(fee).Tx())

	agent := func(w *chaingen.Wallet) *consensus.AgentRecord {
		a, ok, err := h.c.Conduct().Agent(w.PKH)
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", w.Name, ok, err)
		}
		return a
	}
	// Alice–Bob (one owner): counts only. Bob–Carol (two owners): Carol +20, Bob +10, and
	// Carol's review counts.
	if a := agent(alice); a.Score != 500 || a.ContractsCompleted != 1 || a.ReviewsReceived != 1 || a.ReviewScoreSum != 10 {
		t.Fatalf("alice after a contract with her own second wallet: %+v", a)
	}
	// Bob: 500, nothing from Alice, +10 from Carol's contract: 510; Carol's 10 stars:
	// 510 + 90 × 490 / 500 = 598.
	if b := agent(bob); b.Score != 598 || b.ContractsCompleted != 2 {
		t.Fatalf("bob: %+v (want 598)", b)
	}
	if c := agent(carol); c.Score != 520 || c.ContractsCompleted != 1 {
		t.Fatalf("carol: %+v", c)
	}
}
