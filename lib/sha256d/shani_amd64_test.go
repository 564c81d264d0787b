//go:build amd64 && !purego

package sha256d

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

func init() {
	if !hasSHANI {
		return
	}
	for _, w := range shaniWidths {
		archScanFuncs = append(archScanFuncs, scanFunc{
			name: fmt.Sprintf("sha-ni-%dway", w),
			scan: func(s *Scanner, start, count uint64) (uint64, [32]byte, bool, uint64) {
				count = maxCount(start, count)
				if count == 0 {
					return 0, [32]byte{}, false, 0
				}
				return s.scanSHANI(start, count, w)
			},
		})
	}
}

// TestSHANIMatchesHash checks every lane of every width against
// crypto/sha256 and against the portable kernel.
func TestSHANIMatchesHash(t *testing.T) {
	if !hasSHANI {
		t.Skip("no SHA extensions")
	}
	r := rand.New(rand.NewPCG(5, 6))
	var target [32]byte
	for i := 0; i < 2000; i++ {
		h := randHeader(r)
		s := NewScanner(h, &target)
		nonce := r.Uint64()
		switch i % 4 {
		case 0:
			nonce = uint64(r.Uint32())
		case 1:
			nonce = 1<<32 - 2 // lanes cross into the high nonce word
		case 2:
			nonce = ^uint64(0) - 1 // lanes wrap (only inside the kernel)
		}
		for _, w := range shaniWidths {
			for lane, got := range s.hashesSHANI(nonce, w) {
				n := nonce + uint64(lane)
				if want := Hash(withNonce(h, n)); got != want {
					t.Fatalf("width %d lane %d nonce %d: %x, want %x", w, lane, n, got, want)
				}
				if p := s.hashWith(n); got != p {
					t.Fatalf("width %d lane %d nonce %d: %x, portable %x", w, lane, n, got, p)
				}
			}
		}
	}
}

func TestSHANIKernelName(t *testing.T) {
	if !hasSHANI {
		t.Skip("no SHA extensions")
	}
	if got, want := KernelName(), fmt.Sprintf("sha-ni-%dway", shaniWidth); got != want {
		t.Errorf("KernelName = %q, want %q", got, want)
	}
}

// hashesSHANI returns the digests of nonces nonce..nonce+width-1 computed by
// the width-stream kernel (for tests).
func (s *Scanner) hashesSHANI(nonce uint64, width int) [][32]byte {
	c := s.arch.ctx
	c.target0 = ^uint32(0) // every lane is a candidate
	var out [shaniMaxWidth * 8]uint32
	done, cand := callSHANI(width, &c, nonce, 1, &out)
	if done != 1 || cand != 1 {
		panic("sha256d: kernel did not report its batch")
	}
	hs := make([][32]byte, width)
	for lane := range hs {
		st := laneWords(&out, lane)
		hs[lane] = wordsToHash(&st)
	}
	return hs
}

// TestSHANICtxLayout pins the offsets the generated assembly uses.
func TestSHANICtxLayout(t *testing.T) {
	var c shaniCtx
	got := []uintptr{unsafe.Offsetof(c.s4A), unsafe.Offsetof(c.s4C), unsafe.Offsetof(c.midA),
		unsafe.Offsetof(c.midC), unsafe.Offsetof(c.m0), unsafe.Offsetof(c.target0)}
	want := []uintptr{0, 16, 32, 48, 64, 80}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("shaniCtx offsets %v, want %v", got, want)
		}
	}
}
