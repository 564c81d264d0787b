package chaingen

import (
	"errors"
	"fmt"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// Expect is what the chain under test must do with a step's block.
type Expect uint8

// The expectations of a step.
const (
	ExpectAccept Expect = iota // processed without error
	ExpectReject               // refused with the step's consensus kind
	ExpectOrphan               // its parent is unknown (consensus.ErrUnknownParent)
	ExpectTip                  // no block: only the tip is checked
)

func (e Expect) String() string {
	return [...]string{"accept", "reject", "orphan", "tip"}[e]
}

// Step is one line of a scenario: submit a block and say what must happen, and which block
// is the tip afterwards.
type Step struct {
	Expect Expect
	Block  string              // the block to submit
	Err    consensus.ErrorKind // the kind a rejection must match (errors.Is)
	Tip    string              // the tip after the step
	// Build makes the block just before it is submitted (it may read the chain's state
	// through the test's closure); nil submits the block as built earlier.
	Build func(g *Generator)
	// Check runs after the step's expectations hold.
	Check func(g *Generator)
}

// Accept is the step "block is accepted and tip is the tip".
func Accept(block, tip string) Step { return Step{Expect: ExpectAccept, Block: block, Tip: tip} }

// Reject is the step "block is refused with kind and tip stays the tip".
func Reject(block string, kind consensus.ErrorKind, tip string) Step {
	return Step{Expect: ExpectReject, Block: block, Err: kind, Tip: tip}
}

// Orphan is the step "block's parent is unknown, tip stays the tip".
func Orphan(block, tip string) Step {
	return Step{Expect: ExpectOrphan, Block: block, Err: consensus.ErrUnknownParent, Tip: tip}
}

// TipIs is the step "the tip is tip".
func TipIs(tip string) Step { return Step{Expect: ExpectTip, Tip: tip} }

// Built is the step with build making its block.
func (s Step) Built(build func(g *Generator)) Step { s.Build = build; return s }

// Checked is the step with check run after it.
func (s Step) Checked(check func(g *Generator)) Step { s.Check = check; return s }

// Extend is steps building prefix<from>..prefix<to> as empty blocks, the first on parent,
// each accepted as the new tip.
func Extend(prefix string, from, to int, parent string) []Step {
	var out []Step
	for i := from; i <= to; i++ {
		name, p := fmt.Sprintf("%s%d", prefix, i), parent
		out = append(out, Accept(name, name).Built(func(g *Generator) { g.Next(name, p, nil) }))
		parent = name
	}
	return out
}

// Runner is the chain under test, as a scenario sees it.
type Runner interface {
	// ProcessBlock hands a block to the chain; a refusal is an error matching the consensus
	// kind with errors.Is, an orphan one matching consensus.ErrUnknownParent.
	ProcessBlock(b *types.Block) error
	// TipHash is the hash of the chain's tip.
	TipHash() types.Hash
}

// Run plays the steps through r in order and ends the test at the first one that does not
// hold.
func (g *Generator) Run(r Runner, steps []Step) {
	g.tb.Helper()
	for i, st := range steps {
		if err := g.Play(r, st); err != nil {
			g.tb.Fatalf("step %d: %v", i, err)
		}
	}
}

// Play builds a step's block, submits it to r, and says how the outcome differs from the
// step's expectation (nil when it holds); then it runs the step's check.
func (g *Generator) Play(r Runner, st Step) error {
	g.tb.Helper()
	if st.Build != nil {
		st.Build(g)
	}
	if st.Expect != ExpectTip {
		if !g.Has(st.Block) {
			return fmt.Errorf("no block %q", st.Block)
		}
		err := r.ProcessBlock(g.Block(st.Block))
		switch {
		case st.Expect == ExpectAccept && err != nil:
			return fmt.Errorf("block %s rejected: %w", st.Block, err)
		case st.Expect != ExpectAccept && err == nil:
			return fmt.Errorf("block %s accepted, want %s %s", st.Block, st.Expect, st.Err)
		case st.Expect != ExpectAccept && !errors.Is(err, st.Err):
			return fmt.Errorf("block %s: got %w, want %s", st.Block, err, st.Err)
		}
	}
	if tip := r.TipHash(); tip != g.Block(st.Tip).Hash() {
		return fmt.Errorf("after block %s: tip is %s, want %s", st.Block, g.NameOf(tip), st.Tip)
	}
	if st.Check != nil {
		st.Check(g)
	}
	return nil
}
