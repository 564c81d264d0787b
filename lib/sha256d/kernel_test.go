package sha256d

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"testing"
	"time"
)

func randHeader(r *rand.Rand) *[HeaderSize]byte {
	var h [HeaderSize]byte
	for i := 0; i < HeaderSize; i += 8 {
		binary.LittleEndian.PutUint64(h[i:], r.Uint64())
	}
	return &h
}

func withNonce(h *[HeaderSize]byte, nonce uint64) *[HeaderSize]byte {
	c := *h
	binary.LittleEndian.PutUint64(c[NonceOffset:], nonce)
	return &c
}

func mustHex32(t *testing.T, s string) [32]byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		t.Fatalf("bad hex %q", s)
	}
	return [32]byte(b)
}

// scanFunc is one way of running a scan: the public Scan with or without the
// portable kernel forced, or (on amd64) one SHA-NI width.
type scanFunc struct {
	name string
	scan func(s *Scanner, start, count uint64) (uint64, [32]byte, bool, uint64)
}

// archScanFuncs is extended by architecture-specific test files.
var archScanFuncs []scanFunc

func allScanFuncs() []scanFunc {
	return append([]scanFunc{
		{"portable", func(s *Scanner, start, count uint64) (uint64, [32]byte, bool, uint64) {
			ForcePortable(true)
			defer ForcePortable(false)
			return s.Scan(start, count)
		}},
		{"default", (*Scanner).Scan},
	}, archScanFuncs...)
}

// bruteForce returns the index of the first nonce in start..start+count-1
// (not wrapping past 2^64-1) whose Hash meets target.
func bruteForce(h *[HeaderSize]byte, target *[32]byte, start, count uint64) (idx uint64, ok bool) {
	for i := uint64(0); i < count; i++ {
		if start+i < start {
			break // wrapped
		}
		hh := Hash(withNonce(h, start+i))
		if MeetsTarget(&hh, target) {
			return i, true
		}
	}
	return 0, false
}

func TestHashKnownVector(t *testing.T) {
	// SHA256(SHA256(88 zero bytes)), computed independently.
	want := mustHex32(t, "447b167ca8b37e7b5ac2ca557239e42452ea35199192767b038eee9c1896ed48")
	var h [HeaderSize]byte
	if got := Hash(&h); got != want {
		t.Fatalf("Hash(zeros) = %x, want %x", got, want)
	}
	var target [32]byte
	if got := NewScanner(&h, &target).hashWith(0); got != want {
		t.Fatalf("portable(zeros) = %x, want %x", got, want)
	}
}

func TestMidstate(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200; i++ {
		h := randHeader(r)
		// crypto/sha256's marshaled state is "sha\x03" ‖ 8 big-endian words ‖ …
		d := sha256.New()
		d.Write(h[:64])
		b, err := d.(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var want [8]uint32
		for j := range want {
			want[j] = binary.BigEndian.Uint32(b[4+4*j:])
		}
		if got := Midstate(h); got != want {
			t.Fatalf("Midstate = %08x, want %08x", got, want)
		}
	}
}

func TestMeetsTarget(t *testing.T) {
	var a, b [32]byte
	if !MeetsTarget(&a, &b) {
		t.Error("equal must meet")
	}
	for i := 0; i < 32; i++ {
		a, b = [32]byte{}, [32]byte{}
		a[i] = 1
		if MeetsTarget(&a, &b) {
			t.Errorf("hash byte %d above target must not meet", i)
		}
		if !MeetsTarget(&b, &a) {
			t.Errorf("hash byte %d below target must meet", i)
		}
	}
	// The most significant differing byte decides.
	a, b = [32]byte{0: 1}, [32]byte{0: 0, 1: 0xff, 31: 0xff}
	if MeetsTarget(&a, &b) || !MeetsTarget(&b, &a) {
		t.Error("big-endian order")
	}
}

func TestPortableMatchesHash(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var target [32]byte
	for i := 0; i < 3000; i++ {
		h := randHeader(r)
		s := NewScanner(h, &target)
		nonce := r.Uint64()
		switch i % 4 {
		case 0:
			nonce = uint64(r.Uint32())
		case 1:
			nonce = ^uint64(0) - uint64(r.IntN(3))
		}
		got := s.hashWith(nonce)
		if want := Hash(withNonce(h, nonce)); got != want {
			t.Fatalf("header %x nonce %d: portable %x, want %x", h, nonce, got, want)
		}
	}
}

// TestKnownHeader is a regression vector: header bytes i*7+3, target
// 0x0000ffff…ff; the first nonce from 0 meeting it, found and hashed
// independently of this package.
func TestKnownHeader(t *testing.T) {
	hdr := fixedHeader()
	var target [32]byte
	for i := 2; i < 32; i++ {
		target[i] = 0xff
	}
	const wantNonce = 155552
	wantHash := mustHex32(t, "0000ca0a094ed43968a2b23a392328ad8f675b976de730f08154bb47923b3c31")
	if got := Hash(withNonce(hdr, wantNonce)); got != wantHash {
		t.Fatalf("Hash = %x, want %x", got, wantHash)
	}
	for _, f := range allScanFuncs() {
		s := NewScanner(hdr, &target)
		nonce, hash, found, hashed := f.scan(s, 0, 1<<20)
		if !found || nonce != wantNonce || hash != wantHash || hashed != wantNonce+1 {
			t.Errorf("%s: Scan = (%d, %x, %v, %d), want (%d, %x, true, %d)",
				f.name, nonce, hash, found, hashed, wantNonce, wantHash, wantNonce+1)
		}
		// Starting right after it, the next solution is further on.
		nonce, _, found, _ = f.scan(s, wantNonce+1, 1000)
		if found && nonce <= wantNonce {
			t.Errorf("%s: rescan returned %d", f.name, nonce)
		}
	}
}

func TestScanFindsFirst(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	// About one nonce in 256 meets 0x00ffff…; one in 4096 meets 0x000fff….
	targets := [][32]byte{{0x00, 0xff}, {0x00, 0x0f}}
	for i := 2; i < 32; i++ {
		targets[0][i], targets[1][i] = 0xff, 0xff
	}
	for iter := 0; iter < 12; iter++ {
		hdr := randHeader(r)
		target := targets[iter%2]
		start := r.Uint64() >> 1
		count := uint64(1 + r.IntN(3000))
		idx, ok := bruteForce(hdr, &target, start, count)
		for _, f := range allScanFuncs() {
			s := NewScanner(hdr, &target)
			nonce, hash, found, hashed := f.scan(s, start, count)
			if found != ok {
				t.Fatalf("%s iter %d: found=%v, brute force %v", f.name, iter, found, ok)
			}
			if !ok {
				if hashed != count {
					t.Fatalf("%s: hashed %d, want %d", f.name, hashed, count)
				}
				continue
			}
			if nonce != start+idx || hashed != idx+1 {
				t.Fatalf("%s iter %d: nonce %d hashed %d, want %d, %d", f.name, iter, nonce, hashed, start+idx, idx+1)
			}
			if want := Hash(withNonce(hdr, nonce)); hash != want {
				t.Fatalf("%s: hash %x, want %x", f.name, hash, want)
			}
		}
	}
}

func TestScanBoundaries(t *testing.T) {
	hdr := fixedHeader()
	var target [32]byte
	target[0] = 0x00
	for i := 1; i < 32; i++ {
		target[i] = 0xff
	}
	// Solutions of this header/target from nonce 1000 on.
	var sols []uint64
	for n := uint64(1000); len(sols) < 3; n++ {
		h := Hash(withNonce(hdr, n))
		if MeetsTarget(&h, &target) {
			sols = append(sols, n)
		}
	}
	for _, f := range allScanFuncs() {
		s := NewScanner(hdr, &target)
		if n, h, found, hashed := f.scan(s, sols[0], 0); found || hashed != 0 || n != 0 || h != ([32]byte{}) {
			t.Errorf("%s: count=0 gave (%d, %x, %v, %d)", f.name, n, h, found, hashed)
		}
		if n, _, found, hashed := f.scan(s, sols[0], 1); !found || n != sols[0] || hashed != 1 {
			t.Errorf("%s: count=1 on a solution gave (%d, %v, %d)", f.name, n, found, hashed)
		}
		if _, _, found, hashed := f.scan(s, sols[0]+1, 1); found != (sols[1] == sols[0]+1) || hashed != 1 {
			t.Errorf("%s: count=1 off a solution gave (%v, %d)", f.name, found, hashed)
		}
		// Every count from 1 to 13 ending just before / at a solution,
		// so the solution falls in every position of a partial batch.
		for c := uint64(1); c <= 13; c++ {
			start := sols[1] - c // sols[1] is index c
			if start <= sols[0] {
				continue
			}
			if _, _, found, hashed := f.scan(s, start, c); found || hashed != c {
				t.Errorf("%s: solution just past count %d reported (%v, %d)", f.name, c, found, hashed)
			}
			if n, _, found, hashed := f.scan(s, start, c+1); !found || n != sols[1] || hashed != c+1 {
				t.Errorf("%s: solution at index %d: (%d, %v, %d)", f.name, c, n, found, hashed)
			}
		}
	}
}

func TestScanStopsAtMaxNonce(t *testing.T) {
	hdr := fixedHeader()
	const maxN = ^uint64(0)
	var never [32]byte // only an all-zero hash would meet it
	for _, f := range allScanFuncs() {
		s := NewScanner(hdr, &never)
		if _, _, found, hashed := f.scan(s, maxN-4, 100); found || hashed != 5 {
			t.Errorf("%s: (%v, %d), want 5 nonces up to 2^64-1", f.name, found, hashed)
		}
		if _, _, found, hashed := f.scan(s, maxN, maxN); found || hashed != 1 {
			t.Errorf("%s: start 2^64-1: (%v, %d)", f.name, found, hashed)
		}
		// A target met exactly by the last nonce is found there.
		last := Hash(withNonce(hdr, maxN))
		s = NewScanner(hdr, &last)
		idx, ok := bruteForce(hdr, &last, maxN-6, 7)
		if !ok {
			t.Fatal("the last nonce meets its own hash")
		}
		if n, _, found, hashed := f.scan(s, maxN-6, 1000); !found || n != maxN-6+idx || hashed != idx+1 {
			t.Errorf("%s: near 2^64-1 got (%d, %v, %d)", f.name, n, found, hashed)
		}
		// Nonces that would wrap to 0.. are not hashed: nonce 0 meets
		// this target, and must not be reported from a scan near the end.
		zero := Hash(withNonce(hdr, 0))
		s = NewScanner(hdr, &zero)
		if _, ok := bruteForce(hdr, &zero, maxN-2, 3); !ok {
			if n, _, found, hashed := f.scan(s, maxN-2, 10); found || hashed != 3 {
				t.Errorf("%s: wrapped to nonce 0: (%d, %v, %d)", f.name, n, found, hashed)
			}
		}
	}
}

// TestScanCandidateRejected: a nonce whose first hash word equals the
// target's (passing the early exit) but whose full hash is above the target
// must not be reported; the scan must go on.
func TestScanCandidateRejected(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for iter := 0; iter < 20; iter++ {
		hdr := randHeader(r)
		start := r.Uint64() >> 2
		k := uint64(r.IntN(40))
		target := Hash(withNonce(hdr, start+k))
		// target = hash - 1 (borrowing), keeping the first word unless
		// the hash ends in 28 zero bytes, which does not happen.
		for i := 31; i >= 0; i-- {
			target[i]--
			if target[i] != 0xff {
				break
			}
		}
		idx, ok := bruteForce(hdr, &target, start, 200)
		for _, f := range allScanFuncs() {
			s := NewScanner(hdr, &target)
			nonce, _, found, hashed := f.scan(s, start, 200)
			if found != ok || (ok && (nonce != start+idx || hashed != idx+1)) || (!ok && hashed != 200) {
				t.Fatalf("%s iter %d: (%d, %v, %d), brute force (%d, %v)", f.name, iter, nonce, found, hashed, start+idx, ok)
			}
			if found && nonce == start+k {
				t.Fatalf("%s: reported the rejected candidate", f.name)
			}
		}
	}
}

func TestScanNoAllocs(t *testing.T) {
	var target [32]byte
	s := NewScanner(fixedHeader(), &target)
	for _, portable := range []bool{false, true} {
		ForcePortable(portable)
		if a := testing.AllocsPerRun(20, func() { s.Scan(0, 100) }); a != 0 {
			t.Errorf("portable=%v: %v allocations per Scan", portable, a)
		}
	}
	ForcePortable(false)
}

func TestKernelName(t *testing.T) {
	ForcePortable(true)
	if got := KernelName(); got != "portable" {
		t.Errorf("forced: %q", got)
	}
	ForcePortable(false)
	t.Logf("kernel: %s", KernelName())
}

func TestNewScannerIgnoresNonceAndCopies(t *testing.T) {
	hdr := fixedHeader()
	var target [32]byte
	target[0] = 0x01
	a := NewScanner(withNonce(hdr, 12345), &target)
	b := NewScanner(hdr, &target)
	hdr[0] ^= 1 // must not affect the scanners
	target[0] = 0
	for _, f := range allScanFuncs() {
		n1, h1, f1, c1 := f.scan(a, 0, 2000)
		n2, h2, f2, c2 := f.scan(b, 0, 2000)
		if n1 != n2 || h1 != h2 || f1 != f2 || c1 != c2 || !f1 {
			t.Errorf("%s: (%d %v %d) vs (%d %v %d)", f.name, n1, f1, c1, n2, f2, c2)
		}
	}
}

func TestBenchmarkHelper(t *testing.T) {
	per, total := Benchmark(2, 30*time.Millisecond)
	if len(per) != 2 {
		t.Fatalf("%d rates", len(per))
	}
	sum := 0.0
	for _, r := range per {
		if r <= 0 {
			t.Errorf("rate %v", r)
		}
		sum += r
	}
	if total != sum {
		t.Errorf("total %v != sum %v", total, sum)
	}
	t.Logf("%s: %v nonces/s per thread", KernelName(), per)
}

func TestHashIsStdlib(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	h := randHeader(r)
	first := sha256.Sum256(h[:])
	want := sha256.Sum256(first[:])
	got := Hash(h)
	if !bytes.Equal(got[:], want[:]) {
		t.Fatal("Hash differs from crypto/sha256 twice")
	}
}

// hashWith returns the digest of the header with nonce using the portable
// kernel.
func (s *Scanner) hashWith(nonce uint64) [32]byte {
	var st [8]uint32
	s.hashPortable(nonce, &st)
	return wordsToHash(&st)
}
