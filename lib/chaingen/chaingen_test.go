package chaingen

import (
	"errors"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// memChain is the smallest Runner: it checks block sanity and parents, and makes the first
// block seen at the greatest height the tip.
type memChain struct {
	net    *params.Network
	height map[types.Hash]uint64
	tip    types.Hash
}

func newMemChain(net *params.Network) *memChain {
	return &memChain{net: net, height: map[types.Hash]uint64{net.GenesisHash: 0}, tip: net.GenesisHash}
}

func (c *memChain) ProcessBlock(b *types.Block) error {
	h := b.Hash()
	if _, err := consensus.CheckBlockSanity(b, h, b.SerializeSize(), c.net.PowLimit); err != nil {
		return err
	}
	ph, ok := c.height[b.Header.PrevHash]
	if !ok {
		return consensus.RuleError{Err: consensus.ErrUnknownParent, Description: "orphan"}
	}
	c.height[h] = ph + 1
	if ph+1 > c.height[c.tip] {
		c.tip = h
	}
	return nil
}

func (c *memChain) TipHash() types.Hash { return c.tip }

func TestScenarioThroughRunner(t *testing.T) {
	g := New(t, nil)
	steps := Extend("a", 1, 3, "genesis")
	steps = append(steps,
		Orphan("orphan", "a3").Built(func(g *Generator) {
			g.Next("orphan", "a3", nil, Parent(types.Blake3([]byte("nowhere"))))
		}),
		Reject("bad-merkle", consensus.ErrBadMerkleRoot, "a3").Built(func(g *Generator) {
			g.Next("bad-merkle", "a3", nil, BadMerkleRoot)
		}),
		// A copy of the coinbase is a second coinbase.
		Reject("dup-cb", consensus.ErrMultipleCoinbases, "a3").Built(func(g *Generator) {
			g.Next("dup-cb", "a3", nil, DuplicateTx(0))
		}),
		Accept("b3", "a3").Built(func(g *Generator) { g.Next("b3", "a2", nil) }),
		Accept("b4", "b4").Built(func(g *Generator) { g.Next("b4", "b3", nil) }),
		TipIs("b4").Checked(func(g *Generator) {
			if g.Height("b4") != 4 || g.NameOf(g.Block("b4").Hash()) != "b4" {
				t.Fatalf("b4 at height %d named %s", g.Height("b4"), g.NameOf(g.Block("b4").Hash()))
			}
		}),
	)
	g.Run(newMemChain(g.Network()), steps)

	// Play reports a wrong expectation instead of passing it.
	err := g.Play(newMemChain(g.Network()), Accept("a2", "a2"))
	if err == nil || !errors.Is(err, consensus.ErrUnknownParent) {
		t.Fatalf("a block without its parent played as accepted: %v", err)
	}
}

func TestSpendableAndTake(t *testing.T) {
	g := New(t, nil)
	alice := g.Wallet("alice")
	if g.Wallet("alice") != alice || NewWallet("alice").PKH != alice.PKH {
		t.Fatal("a wallet's key must follow from its name")
	}
	if n := len(g.Spendable(g.Chain("a", "genesis", 99), nil)); n != 0 {
		t.Fatalf("%d outputs spendable before maturity", n)
	}
	g.Next("a100", "a99", nil)
	g.Next("a101", "a100", nil, PayTo(alice.PKH))
	tip := "a101"
	// The coinbase of a1 matures for a block at height 101, a2's for 102.
	sp := g.Spendable("a100", g.Miner())
	if len(sp) != 1 || sp[0] != g.Coinbase("a1") || !sp[0].Coinbase || sp[0].Height != 1 {
		t.Fatalf("spendable on a100: %+v", sp)
	}
	// A transfer in a102 spends a1's coinbase; its change is spendable on the branch (after
	// the coinbases of a2 and a3, mature for a103), and not on a sibling branch.
	tx := g.Spend(g.Coinbase("a1")).Pay(alice.PKH, 1_000_000).Fee(5_000).Name("t1").Tx()
	g.Next("a102", tip, []*types.Transaction{tx})
	if got := g.Block("a102").Transactions[0].Outputs[0].Value; got != consensus.Subsidy(102)+5_000 {
		t.Fatalf("coinbase claims %d, want subsidy and fee", got)
	}
	mine := g.Spendable("a102", g.Miner())
	if len(mine) != 3 || mine[0] != g.Coinbase("a2") || mine[1] != g.Coinbase("a3") || mine[2].Outpoint != g.Out("t1", 1).Outpoint {
		t.Fatalf("miner's outputs after a102: %+v", mine)
	}
	if a := g.Spendable("a102", alice); len(a) != 1 || a[0].Value != 1_000_000 {
		t.Fatalf("alice's outputs: %+v", a)
	}
	g.Next("b102", tip, nil)
	if a := g.Spendable("b102", alice); len(a) != 0 {
		t.Fatalf("a sibling branch sees alice's output: %+v", a)
	}
	got := g.Take("a102", g.Miner(), 2)
	if got[0] != mine[0] || got[1] != mine[1] || len(g.Spendable("a102", g.Miner())) != 1 {
		t.Fatal("Take must hand out the oldest outputs once")
	}
}

// TestTxBuilderKindsAndKeys: every kind builds with its payload, and inputs of several
// owners are each signed by their owner.
func TestTxBuilderKindsAndKeys(t *testing.T) {
	g := New(t, nil)
	alice, bob := g.Wallet("alice"), g.Wallet("bob")
	tip := g.Chain("a", "genesis", 100)
	g.Next("a101", tip, nil, PayTo(alice.PKH))
	pay := g.Spend(g.Coinbase("a1")).Pay(alice.PKH, 10_000_000).Pay(bob.PKH, 10_000_000).Fee(1_000).Tx()
	merge := g.Spend(OutputOf(pay, 0), OutputOf(pay, 1)).Change(bob.PKH, 2).Fee(2_000).Tx()
	magic := g.Network().Magic
	if err := consensus.VerifySignatures(merge, merge.TxID(), magic); err != nil {
		t.Fatal(err)
	}
	if types.Blake3(merge.Inputs[0].PublicKey[:]) != alice.PKH || types.Blake3(merge.Inputs[1].PublicKey[:]) != bob.PKH {
		t.Fatal("inputs not signed by their owners")
	}
	if len(merge.Outputs) != 2 || merge.Outputs[0].Value+merge.Outputs[1].Value != 20_000_000-2_000 {
		t.Fatalf("change: %+v", merge.Outputs)
	}
	if fee := g.FeeOf(merge); fee != 2_000 {
		t.Fatalf("FeeOf = %d", fee)
	}
	rated := g.Spend(OutputOf(merge, 0)).FeeRate(3).Tx()
	if fee, _ := g.Fee(rated); fee != 3*uint64(rated.SerializeSize()) {
		t.Fatalf("fee %d for %d bytes at 3 per byte", fee, rated.SerializeSize())
	}
	payloads := map[types.TxKind][]byte{
		types.KindAgentRegister:  nil,
		types.KindVouch:          types.VouchPayload{Target: bob.PKH}.Bytes(),
		types.KindContractCreate: types.ContractCreatePayload{Counterparty: bob.PKH, ExpiryBlocks: 10}.Bytes(),
		types.KindContractFulfil: types.ContractRefPayload{ContractID: pay.TxID()}.Bytes(),
		types.KindContractRefund: types.ContractRefPayload{ContractID: pay.TxID()}.Bytes(),
		types.KindReview:         types.ReviewPayload{ContractID: pay.TxID(), Subject: bob.PKH, Score: 5}.Bytes(),
	}
	for kind, p := range payloads {
		tx := g.Spend(OutputOf(merge, 1)).Kind(kind, p).Fee(1_000).Tx()
		if tx.Kind != kind || string(tx.Payload) != string(p) || consensus.VerifySignatures(tx, tx.TxID(), magic) != nil {
			t.Fatalf("%s: %+v", kind, tx)
		}
	}
	// A wrong key and a wrong network are for rejection tests.
	wrong := g.Spend(OutputOf(merge, 1)).SignedBy(alice).Tx()
	if types.Blake3(wrong.Inputs[0].PublicKey[:]) != alice.PKH {
		t.Fatal("SignedBy ignored")
	}
	other := g.Spend(OutputOf(merge, 1)).Magic(params.Testnet.Magic).Tx()
	if consensus.VerifySignatures(other, other.TxID(), magic) == nil {
		t.Fatal("a transaction signed for testnet verifies on regtest")
	}
}
