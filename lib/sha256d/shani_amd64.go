//go:build amd64 && !purego

package sha256d

import (
	"fmt"

	"golang.org/x/sys/cpu"
)

//go:generate go run gen_shani.go

// shaniMaxWidth is the largest number of streams a generated kernel runs.
const shaniMaxWidth = 4

// shaniCtx is the per-template input of the SHA-NI kernels. The offsets are
// fixed by gen_shani.go. The state vectors are in the register order the SHA
// instructions use: ABEF = [f e b a], CDGH = [h g d c] (lane 0 first).
type shaniCtx struct {
	s4A, s4C   [4]uint32 // state after rounds 0..3 of the second block
	midA, midC [4]uint32 // midstate
	m0         [4]uint32 // W0..W3 of the second block
	target0    uint32    // target bytes 0..3, big-endian
	_          [3]uint32
}

type archState struct {
	ctx shaniCtx
	out [shaniMaxWidth * 8]uint32
}

func abef(st *[8]uint32) [4]uint32 { return [4]uint32{st[5], st[4], st[1], st[0]} }
func cdgh(st *[8]uint32) [4]uint32 { return [4]uint32{st[7], st[6], st[3], st[2]} }

func (a *archState) init(s *Scanner) {
	a.ctx.s4A, a.ctx.s4C = abef(&s.s4), cdgh(&s.s4)
	a.ctx.midA, a.ctx.midC = abef(&s.mid), cdgh(&s.mid)
	copy(a.ctx.m0[:], s.w1[0:4])
	a.ctx.target0 = s.tw0
}

// Each kernel hashes batches*N nonces from nonce on, N per batch, and stores
// the final states (ABEF, CDGH per stream) of the last batch it ran in out.
// It stops early after a batch in which some stream's first digest word is
// <= c.target0 (cand = 1). done is the number of batches run.

//go:noescape
func scanSHANIx2(c *shaniCtx, nonce uint64, batches uint64, out *[shaniMaxWidth * 8]uint32) (done uint64, cand uint64)

//go:noescape
func scanSHANIx3(c *shaniCtx, nonce uint64, batches uint64, out *[shaniMaxWidth * 8]uint32) (done uint64, cand uint64)

//go:noescape
func scanSHANIx4(c *shaniCtx, nonce uint64, batches uint64, out *[shaniMaxWidth * 8]uint32) (done uint64, cand uint64)

// cpuidSHA reports CPUID.(EAX=7,ECX=0):EBX bit 29 (SHA extensions).
// golang.org/x/sys/cpu does not expose this bit for x86.
func cpuidSHA() bool

var hasSHANI = cpu.X86.HasSSSE3 && cpu.X86.HasSSE41 && cpuidSHA()

// shaniWidth is the stream count Scan uses; see PERFORMANCE.md for the
// measurements behind the choice.
var shaniWidth = 4

var shaniWidths = []int{2, 3, 4}

func haveAccel() bool { return hasSHANI }

func accelName() string { return fmt.Sprintf("sha-ni-%dway", shaniWidth) }

func callSHANI(width int, c *shaniCtx, nonce, batches uint64, out *[shaniMaxWidth * 8]uint32) (done, cand uint64) {
	switch width {
	case 2:
		return scanSHANIx2(c, nonce, batches, out)
	case 3:
		return scanSHANIx3(c, nonce, batches, out)
	case 4:
		return scanSHANIx4(c, nonce, batches, out)
	}
	panic("sha256d: no SHA-NI kernel of that width")
}

// laneWords converts stream lane's final state in out to digest words.
func laneWords(out *[shaniMaxWidth * 8]uint32, lane int) [8]uint32 {
	o := out[8*lane : 8*lane+8]
	return [8]uint32{o[3], o[2], o[7], o[6], o[1], o[0], o[5], o[4]}
}

func (s *Scanner) scanAccel(start, count uint64) (nonce uint64, hash [32]byte, found bool, hashed uint64) {
	return s.scanSHANI(start, count, shaniWidth)
}

func (s *Scanner) scanSHANI(start, count uint64, width int) (nonce uint64, hash [32]byte, found bool, hashed uint64) {
	w := uint64(width)
	var i uint64 // nonces consumed so far
	for i < count {
		rem := count - i
		batches := rem / w
		if rem%w != 0 {
			batches++
		}
		done, cand := callSHANI(width, &s.arch.ctx, start+i, batches, &s.arch.out)
		if cand == 0 {
			break
		}
		base := i + (done-1)*w
		for lane := 0; lane < width && base+uint64(lane) < count; lane++ {
			st := laneWords(&s.arch.out, lane)
			if st[0] > s.tw0 {
				continue
			}
			h := wordsToHash(&st)
			if MeetsTarget(&h, &s.target) {
				idx := base + uint64(lane)
				return start + idx, h, true, idx + 1
			}
		}
		if count-base <= w {
			break
		}
		i = base + w
	}
	return 0, hash, false, count
}
