package pow

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

func TestUint256MatchesBig(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	two256 := new(big.Int).Lsh(big.NewInt(1), 256)
	rnd := func() *big.Int {
		var b [32]byte
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		x := new(big.Int).SetBytes(b[:])
		return x.Rsh(x, uint(r.IntN(257)))
	}
	for range 10000 {
		a, b := rnd(), rnd()
		ua, ub := Uint256FromBig(a), Uint256FromBig(b)
		if ua.Big().Cmp(a) != 0 {
			t.Fatalf("round trip of %v: %v", a, ua.Big())
		}
		if ua.Cmp(ub) != a.Cmp(b) || ub.Cmp(ua) != b.Cmp(a) || ua.Cmp(ua) != 0 {
			t.Fatalf("Cmp(%v, %v) = %d", a, b, ua.Cmp(ub))
		}
		sum := new(big.Int).Add(a, b)
		if sum.Cmp(two256) >= 0 {
			sum.Sub(two256, big.NewInt(1))
		}
		if got := ua.Add(ub).Big(); got.Cmp(sum) != 0 {
			t.Fatalf("%v + %v = %v, want %v", a, b, got, sum)
		}
	}
	if !Uint256FromBig(big.NewInt(-1)).IsZero() || !Uint256FromBig(nil).IsZero() {
		t.Fatal("negative or nil should be 0")
	}
	if Uint256FromBig(two256) != uint256Max {
		t.Fatal("2^256 should saturate")
	}
	for _, bits := range []uint32{0x1d00ffff, 0x207fffff, 0x1b0404cb, 0x01003456, 0, 0x04923456, 0x2100ffff} {
		if Work256(bits).Big().Cmp(Work(bits)) != 0 {
			t.Fatalf("Work256(0x%08x) = %v, want %v", bits, Work256(bits), Work(bits))
		}
	}
}
