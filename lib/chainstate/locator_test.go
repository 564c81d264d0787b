package chainstate

import (
	"testing"

	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// TestChainLocator checks the locators and the headers that answer them (headers-first sync).
func TestChainLocator(t *testing.T) {
	c, _ := openHeaderChain(t, Options{})
	g := params.Regtest.GenesisBlock()
	build := func(parent *types.Block, height uint64, tag string) *types.Block {
		b := hdrBlock(t, parent, height, tag)
		mustBlock(t, c, b)
		return b
	}
	main := []*types.Block{g}
	for h := uint64(1); h <= 300; h++ {
		main = append(main, build(main[h-1], h, "main"))
	}
	// A shorter side branch from height 250.
	side := []*types.Block{main[250]}
	for h := uint64(251); h <= 260; h++ {
		side = append(side, build(side[len(side)-1], h, "side"))
	}

	loc := c.Locator()
	if loc[0] != main[300].Hash() || loc[len(loc)-1] != g.Hash() || len(loc) > 101 {
		t.Fatalf("locator of %d hashes from %s to %s", len(loc), loc[0], loc[len(loc)-1])
	}
	for i := 0; i < 10; i++ {
		if loc[i] != main[300-i].Hash() {
			t.Fatalf("locator entry %d is not dense", i)
		}
	}
	if loc[10] != main[289].Hash() || loc[11] != main[285].Hash() || loc[12] != main[277].Hash() {
		t.Fatal("locator does not double its steps after 10 entries")
	}
	sideLoc := c.LocatorFrom(side[10].Hash())
	if sideLoc[0] != side[10].Hash() || sideLoc[len(sideLoc)-1] != g.Hash() {
		t.Fatal("locator from the side branch")
	}
	if c.LocatorFrom(types.Hash{1}) != nil {
		t.Fatal("locator of an unknown block")
	}
	// The side locator is dense over the 10 side blocks (260…251), then steps to 249.
	if fork := c.FindFork(sideLoc); fork.Hash != main[249].Hash() {
		t.Fatalf("fork at height %d, want 249", fork.Height)
	}
	if fork := c.FindFork([]types.Hash{{9}}); fork.Height != 0 {
		t.Fatal("an unknown locator does not fork at genesis")
	}
	hs := c.HeadersAfter(sideLoc, types.Hash{}, 2000)
	if len(hs) != 51 || hs[0].Hash() != main[250].Hash() || hs[50].Hash() != main[300].Hash() {
		t.Fatalf("%d headers after the side branch", len(hs))
	}
	if hs := c.HeadersAfter(nil, main[5].Hash(), 2000); len(hs) != 5 || hs[4].Hash() != main[5].Hash() {
		t.Fatalf("headers up to stop: %d", len(hs))
	}
	if hs := c.HeadersAfter([]types.Hash{main[100].Hash()}, types.Hash{}, 7); len(hs) != 7 || hs[0].Hash() != main[101].Hash() {
		t.Fatalf("headers up to max: %d", len(hs))
	}
	if _, st, ok := c.NodeStatus(side[10].Hash()); !ok || st != StatusStored {
		t.Fatalf("side block status %v %v", st, ok)
	}
	if _, st, ok := c.NodeStatus(main[300].Hash()); !ok || st != StatusValid {
		t.Fatalf("tip status %v %v", st, ok)
	}
}
