package main

import "testing"

// TestE2EGenerate10000: regtest mines as fast as a user asks. Each generated block is a second
// past the median of the eleven before it, so a long burst runs ahead of the clock; regtest's
// two-hour future-drift limit (protocol §6) lets generatetoaddress 10000 succeed, where the
// 15-minute limit stopped it after about 5,400 blocks.
func TestE2EGenerate10000(t *testing.T) {
	if testing.Short() {
		t.Skip("mines 10,000 blocks")
	}
	k := newWallet(t, 7)
	p := newProc(t, "A").start()
	hs := p.generate(10_000, k.addr)
	if len(hs) != 10_000 || p.best() != hs[len(hs)-1] {
		t.Fatalf("%d blocks, tip %s, last %s", len(hs), p.best(), hs[len(hs)-1])
	}
}
