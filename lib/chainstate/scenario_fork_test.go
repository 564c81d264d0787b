package chainstate

import (
	"fmt"
	"math/big"
	"testing"

	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/types"
)

// TestScenarioRetarget runs regtest's genesis with retargeting switched on: fast blocks (10 s
// apart) make the target drop at heights 60 and 120, and only the computed target is accepted.
func TestScenarioRetarget(t *testing.T) {
	net := *params.Regtest
	net.Retarget = true
	g0 := net.GenesisBlock().Header.Timestamp
	s := newScenario(t, &net, int64(g0)+86_400)
	type G = chaingen.Generator

	bits := func(name string) uint32 { return s.Block(name).Header.DifficultyTarget }
	// fast builds name on parent 10 s later with the given target.
	fast := func(name, parent string, target uint32) *types.Block {
		return s.Next(name, parent, nil, chaingen.Timestamp(s.Block(parent).Header.Timestamp+10), chaingen.Target(target))
	}
	fastChain := func(from, to int, parent string) []scenarioStep {
		var out []scenarioStep
		for i := from; i <= to; i++ {
			name, p := fmt.Sprintf("r%d", i), parent
			out = append(out, step(chaingen.Accept(name, name).Built(func(*G) { fast(name, p, bits(p)) })))
			parent = name
		}
		return out
	}
	expected := func(h uint64, parent, windowStart string) uint32 {
		p := s.Block(parent).Header
		return pow.NextCompact(h, p.DifficultyTarget, p.Timestamp, s.Block(windowStart).Header.Timestamp, net.PowLimit, true)
	}
	checkTemplate := func(want func() uint32) func(*G) {
		return func(*G) {
			if got := s.c.NextBlock().Target; got != want() {
				t.Fatalf("template target 0x%08x, want 0x%08x", got, want())
			}
		}
	}
	var all []scenarioStep
	all = append(all, fastChain(1, 59, "genesis")...)
	all[len(all)-1].Check = checkTemplate(func() uint32 { return expected(60, "r59", "genesis") })
	all = append(all, steps(
		chaingen.Reject("r60-old", consensus.ErrWrongDifficulty, "r59").Built(func(*G) {
			fast("r60-old", "r59", bits("r59"))
		}),
		chaingen.Accept("r60", "r60").Built(func(*G) {
			want := expected(60, "r59", "genesis")
			// 590 s of blocks is clamped to 900 s, a quarter of the 3,600 s timespan.
			quarter := new(big.Int).Quo(net.PowLimit, big.NewInt(4))
			if want != pow.BigToCompact(quarter) || want == bits("r59") {
				t.Fatalf("expected target 0x%08x, want a quarter of the limit 0x%08x", want, pow.BigToCompact(quarter))
			}
			fast("r60", "r59", want)
		}),
		// Between retargets a child keeps its parent's target, the old limit is wrong.
		chaingen.Reject("r61-limit", consensus.ErrWrongDifficulty, "r60").Built(func(*G) {
			fast("r61-limit", "r60", net.PowLimitBits)
		}),
	)...)
	all = append(all, fastChain(61, 119, "r60")...)
	all[len(all)-1].Check = checkTemplate(func() uint32 { return expected(120, "r119", "r59") })
	all = append(all, steps(
		chaingen.Reject("r120-old", consensus.ErrWrongDifficulty, "r119").Built(func(*G) {
			fast("r120-old", "r119", bits("r119"))
		}),
		// The window of height 120 starts at height 59: the target drops by four again.
		chaingen.Accept("r120", "r120").Built(func(*G) {
			want := expected(120, "r119", "r59")
			t120, _, _ := pow.CompactToBig(want)
			t60, _, _ := pow.CompactToBig(bits("r119"))
			if t120.Cmp(t60) >= 0 {
				t.Fatalf("target did not drop: 0x%08x after 0x%08x", want, bits("r119"))
			}
			fast("r120", "r119", want)
		}),
	)...)
	all = append(all, fastChain(121, 121, "r120")...)
	s.run(all)
	if n := s.c.Tip(); n.Height != 121 || n.Header.DifficultyTarget != bits("r120") {
		t.Fatalf("tip %d bits 0x%08x", n.Height, n.Header.DifficultyTarget)
	}
	// More work per block now: the tip's cumulative work exceeds 122 blocks at the limit.
	atLimit := new(big.Int).Mul(pow.Work(net.PowLimitBits), big.NewInt(122))
	if s.c.Tip().WorkBig().Cmp(atLimit) <= 0 {
		t.Fatal("harder blocks should carry more work")
	}
}

// TestScenarioRetargetCapped: slow blocks would raise the target above the limit, so it is
// capped at the limit and the parent's (limit) target is the right one.
func TestScenarioRetargetCapped(t *testing.T) {
	net := *params.Regtest
	net.Retarget = true
	g0 := net.GenesisBlock().Header.Timestamp
	s := newScenario(t, &net, int64(g0)+86_400*30)
	var all []scenarioStep
	parent := "genesis"
	for i := 1; i <= 60; i++ {
		name, p := fmt.Sprintf("s%d", i), parent
		all = append(all, step(chaingen.Accept(name, name).Built(func(g *chaingen.Generator) {
			g.Next(name, p, nil, chaingen.Timestamp(g.Block(p).Header.Timestamp+1000))
		})))
		parent = name
	}
	all[58].Check = func(*chaingen.Generator) {
		if got := s.c.NextBlock().Target; got != net.PowLimitBits {
			t.Fatalf("template target 0x%08x, want the limit", got)
		}
	}
	s.run(all)
}

// TestScenarioTamperedSideBranch: a copy of a side-branch block with a broken signature is
// stored (nothing checks signatures before a connect); the reorg its child triggers fails, and
// the tampered block and its child are dropped rather than marked invalid, so the valid copy
// and the same child are accepted afterwards.
func TestScenarioTamperedSideBranch(t *testing.T) {
	g0 := params.Regtest.GenesisBlock().Header.Timestamp
	s := newScenario(t, params.Regtest, int64(g0)+86_400)
	type G = chaingen.Generator
	all := steps(chaingen.Extend("a", 1, 102, "genesis")...)
	all = append(all,
		step(chaingen.Accept("b102-bad", "a102").Built(func(g *G) {
			g.Next("b102", "a101", txs(s.spendTx("s1", "a1", 0, 1000, 2)))
			g.Clone("b102-bad", "b102").Transactions[1].Inputs[0].Signature[0] ^= 1
		}).Checked(func(g *G) {
			if n := s.c.NodeByHash(g.Block("b102").Hash()); n == nil || n.status != StatusStored {
				t.Fatalf("b102 should be stored aside: %+v", n)
			}
		})),
		resubmit("b102", consensus.ErrDuplicateBlock, "a102"),
		scenarioStep{Step: chaingen.Reject("b103", consensus.ErrBadSignature, "a102").Built(func(g *G) {
			g.Next("b103", "b102", nil)
		}), forgets: []string{"b102"}},
		step(chaingen.Accept("b102", "a102")),
		step(chaingen.Accept("b103", "b103").Checked(func(*G) {
			if err := sameSet(utxoSet(t, s.c), replaySet(t, s.c)); err != nil {
				t.Fatal(err)
			}
		})),
		// A real (non-witness) failure on a side branch is still marked invalid.
		step(chaingen.Accept("c103", "b103").Built(func(g *G) {
			g.Next("c103", "a102", txs(s.spendTx("d1", "a2", 0, 1000, 1), s.spendTx("d2", "a2", 0, 2000, 1)))
		})),
		scenarioStep{Step: chaingen.Reject("c104", consensus.ErrDoubleSpend, "b103").Built(func(g *G) {
			g.Next("c104", "c103", nil)
		}), store: storedInvalidParent, marks: []string{"c103"}},
	)
	s.run(all)
}
