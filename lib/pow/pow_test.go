package pow

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"
)

func TestDoubleSHA256(t *testing.T) {
	header := make([]byte, HeaderSize)
	for i := range header {
		header[i] = byte(i)
	}
	tests := []struct {
		in   []byte
		want string
	}{
		{nil, "5df6e0e2761359d30a8275058e299fcc0381534545f55cf43e41983f5d4c9456"},
		{[]byte("hello"), "9595c9df90075148eb06860365df33584b75bff782a510c6cd4883a419833d50"},
		{header, "dcc6cb18cdc6d0c95bd754715499129cbe2a29925690b8fa1feb8d972ab0ba19"},
	}
	for _, tc := range tests {
		got := DoubleSHA256(tc.in)
		if hex.EncodeToString(got[:]) != tc.want {
			t.Errorf("DoubleSHA256(%x) = %x, want %s", tc.in, got, tc.want)
		}
	}
}

func TestHashToBigAndTargetBytes(t *testing.T) {
	var h [32]byte
	h[0] = 0x01
	h[31] = 0x02
	want := new(big.Int).Lsh(big.NewInt(1), 248)
	want.Add(want, big.NewInt(2))
	if got := HashToBig(h); got.Cmp(want) != 0 {
		t.Fatalf("HashToBig = %x, want %x (big-endian)", got, want)
	}
	if got := TargetBytes(want); got != h {
		t.Fatalf("TargetBytes = %x, want %x", got, h)
	}
	var zero, ones [32]byte
	for i := range ones {
		ones[i] = 0xff
	}
	for _, tc := range []struct {
		in   *big.Int
		want [32]byte
	}{
		{nil, zero},
		{big.NewInt(0), zero},
		{big.NewInt(-5), zero},
		{new(big.Int).Set(maxUint256), ones},
		{new(big.Int).Set(twoTo256), ones},
		{new(big.Int).Lsh(big.NewInt(1), 1000), ones},
	} {
		if got := TargetBytes(tc.in); got != tc.want {
			t.Errorf("TargetBytes(%v) = %x, want %x", tc.in, got, tc.want)
		}
	}
}

func TestCheckProofOfWork(t *testing.T) {
	limit := mustBig(t, "0x00000000ffffffffffffffffffffffffffffffffffffffffffffffffffffffff")
	for _, c := range []uint32{0x1d00ffff, 0x1b0404cb, 0x03123456, 0x01010000} {
		target, err := TargetFromCompact(c, limit)
		if err != nil {
			t.Fatal(err)
		}
		equal := TargetBytes(target)
		if err := CheckProofOfWork(equal, c, limit); err != nil {
			t.Errorf("0x%08x: hash == target: %v", c, err)
		}
		below := TargetBytes(new(big.Int).Sub(target, big.NewInt(1)))
		if err := CheckProofOfWork(below, c, limit); err != nil {
			t.Errorf("0x%08x: hash == target-1: %v", c, err)
		}
		var zero [32]byte
		if err := CheckProofOfWork(zero, c, limit); err != nil {
			t.Errorf("0x%08x: zero hash: %v", c, err)
		}
		above := TargetBytes(new(big.Int).Add(target, big.NewInt(1)))
		if err := CheckProofOfWork(above, c, limit); !errors.Is(err, ErrHighHash) {
			t.Errorf("0x%08x: hash == target+1: got %v, want ErrHighHash", c, err)
		}
		var ones [32]byte
		for i := range ones {
			ones[i] = 0xff
		}
		if err := CheckProofOfWork(ones, c, limit); !errors.Is(err, ErrHighHash) {
			t.Errorf("0x%08x: max hash: got %v, want ErrHighHash", c, err)
		}
	}

	// Byte order: a hash that is small only when read little-endian fails.
	var le [32]byte
	le[0] = 0xff // big-endian: huge
	if err := CheckProofOfWork(le, 0x1d00ffff, limit); !errors.Is(err, ErrHighHash) {
		t.Errorf("big-endian order not used: %v", err)
	}

	var h [32]byte
	for _, tc := range []struct {
		c    uint32
		lim  *big.Int
		want error
	}{
		{0x04923456, nil, ErrNegativeTarget},
		{0xff123456, nil, ErrOverflowTarget},
		{0x00000000, nil, ErrZeroTarget},
		{0x1d010000, limit, ErrTargetAboveLimit},
	} {
		err := CheckProofOfWork(h, tc.c, tc.lim)
		if !errors.Is(err, tc.want) {
			t.Errorf("CheckProofOfWork(0x%08x) = %v, want %v", tc.c, err, tc.want)
		}
		for _, other := range []error{ErrNegativeTarget, ErrOverflowTarget, ErrZeroTarget, ErrTargetAboveLimit, ErrHighHash} {
			if other != tc.want && errors.Is(err, other) {
				t.Errorf("CheckProofOfWork(0x%08x) = %v also matches %v", tc.c, err, other)
			}
		}
	}
}

func TestWork(t *testing.T) {
	tests := []struct {
		c    uint32
		want string
	}{
		{0x1d00ffff, "0x100010001"},
		{0x1b0404cb, "0x3fb3ab764c00"},
		{0x207fffff, "0x2"},
		{0x2100ffff, "0x1"},
		{0x01010000, "0x8000000000000000000000000000000000000000000000000000000000000000"},
		// Invalid compact values give 0.
		{0x00000000, "0"},
		{0x01003456, "0"},
		{0x04923456, "0"},
		{0x01fedcba, "0"},
		{0xff123456, "0"},
		{0x21010000, "0"},
	}
	for _, tc := range tests {
		want := mustBig(t, tc.want)
		if got := Work(tc.c); got.Cmp(want) != 0 {
			t.Errorf("Work(0x%08x) = %#x, want %#x", tc.c, got, want)
		}
		if got := Compact(tc.c).Work(); got.Cmp(want) != 0 {
			t.Errorf("Compact(0x%08x).Work() = %#x, want %#x", tc.c, got, want)
		}
	}
	// Bitcoin Core's formula: (~target / (target+1)) + 1 equals
	// 2^256 / (target+1) for every target in [1, 2^256).
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		c := uint32(rng.IntN(0x21))<<24 | rng.Uint32()&compactMantissa
		target, neg, ovf := CompactToBig(c)
		if neg || ovf || target.Sign() == 0 {
			continue
		}
		not := new(big.Int).Xor(target, maxUint256)
		core := not.Quo(not, new(big.Int).Add(target, big.NewInt(1)))
		core.Add(core, big.NewInt(1))
		if got := Work(c); got.Cmp(core) != 0 {
			t.Fatalf("Work(0x%08x) = %x, Core formula %x", c, got, core)
		}
	}
	for _, bad := range []*big.Int{nil, big.NewInt(0), big.NewInt(-1), new(big.Int).Set(twoTo256)} {
		if got := WorkFromTarget(bad); got.Sign() != 0 {
			t.Errorf("WorkFromTarget(%v) = %v, want 0", bad, got)
		}
	}
	// Cumulative work is a plain big-int sum; results are fresh values.
	total := new(big.Int)
	total.Add(total, Work(0x1d00ffff))
	total.Add(total, Work(0x1d00ffff))
	if total.Cmp(mustBig(t, "0x200020002")) != 0 {
		t.Errorf("cumulative work = %#x", total)
	}
	w := Work(0x1d00ffff)
	w.SetInt64(7)
	if Work(0x1d00ffff).Cmp(mustBig(t, "0x100010001")) != 0 {
		t.Error("Work result shares state")
	}
}

// TestHashMeetsTargetRandom compares HashMeetsTarget with big.Int comparison on
// 100k pairs, most of them equal or nearly equal.
func TestHashMeetsTargetRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 4242))
	randBytes := func(b *[32]byte) {
		for i := 0; i < 32; i += 8 {
			binary.LittleEndian.PutUint64(b[i:], rng.Uint64())
		}
	}
	const n = 100_000
	counts := [2]int{}
	for i := 0; i < n; i++ {
		var h, tg [32]byte
		randBytes(&h)
		switch i % 6 {
		case 0: // independent
			randBytes(&tg)
		case 1: // equal
			tg = h
		case 2: // differ in one byte
			tg = h
			tg[rng.IntN(32)] ^= byte(1 + rng.IntN(255))
		case 3: // ±1 as integers
			v := HashToBig(h)
			if rng.IntN(2) == 0 {
				v.Add(v, big.NewInt(1))
			} else {
				v.Sub(v, big.NewInt(1))
			}
			tg = TargetBytes(v)
		case 4: // shared random-length prefix, random tail
			randBytes(&tg)
			copy(tg[:rng.IntN(33)], h[:])
		case 5: // target-like: leading zero bytes
			randBytes(&tg)
			z := rng.IntN(32)
			for j := 0; j < z; j++ {
				tg[j] = 0
			}
			copy(h[:z], tg[:z])
			if rng.IntN(2) == 0 && z < 32 {
				h[z] = tg[z]
			}
		}
		want := HashToBig(h).Cmp(HashToBig(tg)) <= 0
		got := HashMeetsTarget(&h, &tg)
		if got != want {
			t.Fatalf("HashMeetsTarget(%x, %x) = %v, want %v", h, tg, got, want)
		}
		if got {
			counts[1]++
		} else {
			counts[0]++
		}
	}
	if counts[0] < n/10 || counts[1] < n/10 {
		t.Fatalf("unbalanced outcomes: %v", counts)
	}
}

func TestHashMeetsTargetNoAlloc(t *testing.T) {
	var h, tg [32]byte
	tg[3] = 1
	allocs := testing.AllocsPerRun(100, func() {
		HashMeetsTarget(&h, &tg)
	})
	if allocs != 0 {
		t.Fatalf("HashMeetsTarget allocates %v times", allocs)
	}
}
