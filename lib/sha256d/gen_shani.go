//go:build ignore

// gen_shani.go writes shani_amd64.s: the SHA-NI double-SHA-256 scan kernels,
// one per stream count. Run it with `go generate` in this directory.
//
// Every kernel has the Go signature
//
//	func scanSHANIx<N>(c *shaniCtx, nonce, batches uint64, out *[shaniMaxWidth * 8]uint32) (done, cand uint64)
//
// and hashes batches×N consecutive nonces, N at a time (one per "stream").
// A batch is the header's second block (rounds 4..63: rounds 0..3 see only
// W0..W3, which do not depend on the nonce, and start from a precomputed
// state) followed by the outer hash (64 rounds), for all N streams in
// lockstep:
//
//   - Round pairs (one SHA256RNDS2) are emitted round-robin across the
//     streams. SHA256RNDS2 has a latency of about twice its reciprocal
//     throughput (4 vs 2 cycles on the CPUs measured), so one stream leaves
//     the unit idle at least half of the time; N independent chains fill it.
//   - Only the two state registers of each stream and the implicit X0 stay
//     in registers during the rounds. Message words M[j] (W[4j..4j+3]) and
//     W+K go to an aligned scratch area on the stack, except the newest M of
//     each stream, which stays in a register because the schedule recurrence
//     runs through it. That keeps up to four streams within the 16 XMM
//     registers that the (legacy-encoded) SHA instructions can address.
//   - The schedule step for block j of every stream is emitted `lookahead`
//     blocks before the rounds of block j, interleaved with them, so that the
//     schedule's own dependency chain (PALIGNR, PADDD, SHA256MSG2 through the
//     newest M) overlaps the rounds and the in-order dispatch never meets a
//     long run of dependent instructions.
//   - Constant message words (the SHA-256 padding of both blocks) are folded
//     into constant W+K rows.
//
// After a batch every stream's final state (ABEF, CDGH) is stored to out and
// its first digest word compared, unsigned, with the target's first word. A
// kernel returns after the batch in which some stream passed that test
// (cand = 1); done is the number of batches run.
package main

import (
	"bytes"
	"fmt"
	"os"
)

var k256 = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

var iv = [8]uint32{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}

// Layout of the aligned scratch area addressed by R8.
const (
	stS4A   = 0   // state after rounds 0..3 of block 2, ABEF
	stS4C   = 16  // ... CDGH
	stMidA  = 32  // midstate ABEF
	stMidC  = 48  // midstate CDGH
	stM0    = 64  // W0..W3 of block 2
	stArea  = 128 // per stream: M and W+K slots of both hashes
	perHash = 512 // 16 M slots, then 16 W+K slots
	perStrm = 2 * perHash
)

// Offsets inside the constant table shaniC<>.
const (
	cIVA   = 0   // IV, ABEF order
	cIVC   = 16  // IV, CDGH order
	cPad1  = 32  // [0, 0, 0x80000000, 0]: W4..W7 of block 2 without the nonce
	cH1M3  = 48  // [0, 0, 0, 0x2c0]: W12..W15 of block 2
	cH1WK1 = 64  // K[4..7] + cPad1
	cH1WK3 = 80  // K[12..15] + cH1M3
	cH2M2  = 96  // [0x80000000, 0, 0, 0]: W8..W11 of the outer block
	cH2M3  = 112 // [0, 0, 0, 0x100]: W12..W15 of the outer block
	cH2WK2 = 128 // K[8..11] + cH2M2
	cH2WK3 = 144 // K[12..15] + cH2M3
	cZero  = 160 // zeros: W8..W11 of block 2
	cSize  = 176
)

// lookahead is how many blocks before its rounds a schedule step is
// emitted. 1, 2 and 3 measured the same within noise (PERFORMANCE.md); 4
// runs the four-stream kernel out of registers.
const lookahead = 2

func cnst(off int) string { return fmt.Sprintf("shaniC<>+%d(SB)", off) }
func krow(j int) string   { return fmt.Sprintf("shaniK<>+%d(SB)", 16*j) }

type gen struct {
	b    bytes.Buffer
	free []string
	n    int
	last []string // per stream: register holding the newest M, or ""
}

func (g *gen) p(format string, args ...any) { fmt.Fprintf(&g.b, format+"\n", args...) }
func (g *gen) i(format string, args ...any) { fmt.Fprintf(&g.b, "\t"+format+"\n", args...) }

func (g *gen) alloc() string {
	if len(g.free) == 0 {
		panic("out of registers")
	}
	r := g.free[len(g.free)-1]
	g.free = g.free[:len(g.free)-1]
	return r
}

func (g *gen) release(r string) { g.free = append(g.free, r) }

func stA(s int) string { return fmt.Sprintf("X%d", 1+2*s) }
func stC(s int) string { return fmt.Sprintf("X%d", 2+2*s) }

// mSlot and wkSlot address stream s's slots for hash h (0: header block,
// 1: outer block), block j.
func mSlot(s, h, j int) string  { return fmt.Sprintf("%d(R8)", stArea+s*perStrm+h*perHash+16*j) }
func wkSlot(s, h, j int) string { return fmt.Sprintf("%d(R8)", stArea+s*perStrm+h*perHash+256+16*j) }
func wkSlotHi(s, h, j int) string {
	return fmt.Sprintf("%d(R8)", stArea+s*perStrm+h*perHash+256+16*j+8)
}

// mLoc is where M[j] of stream s, hash h, can be read from memory.
func mLoc(s, h, j int) string {
	switch {
	case h == 0 && j == 0:
		return fmt.Sprintf("%d(R8)", stM0)
	case h == 0 && j == 2:
		return cnst(cZero)
	case h == 0 && j == 3:
		return cnst(cH1M3)
	case h == 1 && j == 2:
		return cnst(cH2M2)
	case h == 1 && j == 3:
		return cnst(cH2M3)
	}
	return mSlot(s, h, j)
}

// step emits the schedule step computing M[j] (4 <= j <= 15) of stream s:
// M[j] = MSG2(MSG1(M[j-4], M[j-3]) + ALIGNR(M[j-1], M[j-2], 4), M[j-1]).
func (g *gen) step(s, h, j int) {
	last := g.last[s]
	if last == "" {
		last = mLoc(s, h, j-1)
	}
	t1 := g.alloc()
	g.i("MOVO %s, %s", mLoc(s, h, j-4), t1)
	g.i("SHA256MSG1 %s, %s", mLoc(s, h, j-3), t1)
	t3 := g.alloc()
	g.i("MOVO %s, %s", last, t3)
	g.i("PALIGNR $4, %s, %s", mLoc(s, h, j-2), t3)
	g.i("PADDD %s, %s", t3, t1)
	g.i("SHA256MSG2 %s, %s", last, t1)
	if g.last[s] != "" {
		g.release(g.last[s])
	}
	if j <= 13 { // M[14], M[15] are only ever read from the register
		g.i("MOVO %s, %s", t1, mSlot(s, h, j))
	}
	g.i("MOVO %s, %s", t1, t3)
	g.i("PADDD %s, %s", krow(j), t3)
	g.i("MOVO %s, %s", t3, wkSlot(s, h, j))
	g.release(t3)
	if j == 15 {
		g.release(t1)
		g.last[s] = ""
	} else {
		g.last[s] = t1
	}
}

// rnds emits half h (0: W+K lanes 0,1; 1: lanes 2,3) of a round block for
// stream s with X0 already loaded.
func (g *gen) rnds(s, half int) {
	if half == 0 {
		g.i("SHA256RNDS2 X0, %s, %s", stA(s), stC(s))
	} else {
		g.i("SHA256RNDS2 X0, %s, %s", stC(s), stA(s))
	}
}

// block emits the rounds of block j of hash h for all streams, with the
// schedule steps due at this block interleaved.
func (g *gen) block(h, j int, wk0 []string) {
	n := g.n
	steps := func() {
		if sj := j + lookahead; sj >= 4 && sj <= 15 {
			for s := 0; s < n; s++ {
				g.step(s, h, sj)
			}
		}
		// first blocks: steps that the lookahead would put before block 0/1
		first := 1
		if h == 1 {
			first = 0
		}
		if j == first {
			for sj := 4; sj < first+lookahead && sj <= 15; sj++ {
				for s := 0; s < n; s++ {
					g.step(s, h, sj)
				}
			}
		}
	}
	for half := 0; half < 2; half++ {
		switch {
		case h == 0 && j == 1 && half == 0:
			// W4, W5 carry the nonce: X0 = nonce words + K[4], K[5]
			for s := 0; s < n; s++ {
				g.i("MOVQ %s, X0", nonceReg(s))
				g.i("PADDD %s, X0", cnst(cH1WK1))
				g.rnds(s, half)
			}
		case h == 0 && j == 1 && half == 1:
			g.i("MOVQ %s, X0", fmt.Sprintf("shaniC<>+%d(SB)", cH1WK1+8))
			for s := 0; s < n; s++ {
				g.rnds(s, half)
			}
		case h == 0 && (j == 2 || j == 3), h == 1 && (j == 2 || j == 3):
			var off string
			switch {
			case h == 0 && j == 2:
				off = fmt.Sprintf("shaniK<>+%d(SB)", 32+8*half)
			case h == 0 && j == 3:
				off = fmt.Sprintf("shaniC<>+%d(SB)", cH1WK3+8*half)
			case h == 1 && j == 2:
				off = fmt.Sprintf("shaniC<>+%d(SB)", cH2WK2+8*half)
			default:
				off = fmt.Sprintf("shaniC<>+%d(SB)", cH2WK3+8*half)
			}
			g.i("MOVQ %s, X0", off)
			for s := 0; s < n; s++ {
				g.rnds(s, half)
			}
		case h == 1 && j == 0:
			for s := 0; s < n; s++ {
				if half == 0 {
					g.i("MOVO %s, X0", wk0[s])
				} else {
					g.i("PSHUFD $0x0e, %s, X0", wk0[s])
					g.release(wk0[s])
				}
				g.rnds(s, half)
			}
		default:
			for s := 0; s < n; s++ {
				if half == 0 {
					g.i("MOVQ %s, X0", wkSlot(s, h, j))
				} else {
					g.i("MOVQ %s, X0", wkSlotHi(s, h, j))
				}
				g.rnds(s, half)
			}
		}
		if half == 0 {
			steps()
		}
	}
}

var nonceRegs = []string{"AX", "R10", "R11", "R12"}

func nonceReg(s int) string { return nonceRegs[s] }

func (g *gen) kernel(n int) {
	g.n = n
	g.last = make([]string, n)
	g.free = nil
	for r := 15; r > 2*n; r-- {
		g.free = append(g.free, fmt.Sprintf("X%d", r))
	}
	frame := stArea + n*perStrm + 16
	g.p("// func scanSHANIx%d(c *shaniCtx, nonce uint64, batches uint64, out *[shaniMaxWidth * 8]uint32) (done uint64, cand uint64)", n)
	g.p("// Requires: SHA, SSE4.1, SSSE3")
	g.p("TEXT ·scanSHANIx%d(SB), $%d-48", n, frame)
	g.i("MOVQ c+0(FP), DI")
	g.i("MOVQ nonce+8(FP), DX")
	g.i("MOVQ batches+16(FP), CX")
	g.i("MOVQ out+24(FP), SI")
	g.i("MOVQ $0, done+32(FP)")
	g.i("MOVQ $0, cand+40(FP)")
	g.i("TESTQ CX, CX")
	g.i("JEQ x%dret", n)
	g.i("MOVL 80(DI), BX // target word 0")
	g.i("LEAQ 15(SP), R8")
	g.i("ANDQ $-16, R8")
	for off := 0; off < 80; off += 16 {
		g.i("MOVOU %d(DI), X0", off)
		g.i("MOVO X0, %d(R8)", off)
	}
	g.i("XORQ R9, R9 // batches done")
	g.p("x%dloop:", n)

	g.p("\t// the nonce words W4, W5 of each stream; M[1] of the header block")
	for s := 0; s < n; s++ {
		r := nonceReg(s)
		g.i("LEAQ %d(DX), %s", s, r)
		g.i("BSWAPQ %s", r)
		g.i("ROLQ $32, %s", r)
		t := g.alloc()
		g.i("MOVQ %s, %s", r, t)
		g.i("PADDD %s, %s", cnst(cPad1), t)
		g.i("MOVO %s, %s", t, mSlot(s, 0, 1))
		g.release(t)
	}
	g.p("\t// header block, rounds 4..63")
	for s := 0; s < n; s++ {
		g.i("MOVO %d(R8), %s", stS4A, stA(s))
		g.i("MOVO %d(R8), %s", stS4C, stC(s))
	}
	for j := 1; j < 16; j++ {
		g.block(0, j, nil)
	}

	g.p("\t// feed-forward; M[0], M[1] of the outer block")
	wk0 := make([]string, n)
	for s := 0; s < n; s++ {
		a, c := stA(s), stC(s)
		g.i("PADDD %d(R8), %s", stMidA, a)
		g.i("PADDD %d(R8), %s", stMidC, c)
		m0 := g.alloc()
		g.i("MOVO %s, %s", a, m0)
		g.i("PUNPCKHQDQ %s, %s", c, m0) // [B A D C]
		g.i("PSHUFD $0xb1, %s, %s", m0, m0)
		g.i("MOVO %s, %s", m0, mSlot(s, 1, 0))
		g.i("PADDD %s, %s", krow(0), m0)
		wk0[s] = m0
		g.i("PUNPCKLQDQ %s, %s", c, a) // [F E H G]
		g.i("PSHUFD $0xb1, %s, %s", a, a)
		g.i("MOVO %s, %s", a, mSlot(s, 1, 1))
		g.i("PADDD %s, %s", krow(1), a)
		g.i("MOVO %s, %s", a, wkSlot(s, 1, 1))
		g.i("MOVO %s, %s", cnst(cIVA), a)
		g.i("MOVO %s, %s", cnst(cIVC), c)
	}
	g.p("\t// outer block")
	for j := 0; j < 16; j++ {
		g.block(1, j, wk0)
	}

	g.p("\t// feed-forward, store, compare the first word")
	ta, tc := g.alloc(), g.alloc()
	g.i("MOVO %s, %s", cnst(cIVA), ta)
	g.i("MOVO %s, %s", cnst(cIVC), tc)
	for s := 0; s < n; s++ {
		g.i("PADDD %s, %s", ta, stA(s))
		g.i("PADDD %s, %s", tc, stC(s))
		g.i("MOVOU %s, %d(SI)", stA(s), 32*s)
		g.i("MOVOU %s, %d(SI)", stC(s), 32*s+16)
	}
	g.release(tc)
	g.release(ta)
	g.i("INCQ R9")
	for s := 0; s < n; s++ {
		g.i("PEXTRD $3, %s, R13", stA(s))
		g.i("CMPL R13, BX")
		g.i("JLS x%dcand", n)
	}
	g.i("ADDQ $%d, DX", n)
	g.i("DECQ CX")
	g.i("JNZ x%dloop", n)
	g.i("MOVQ R9, done+32(FP)")
	g.p("x%dret:", n)
	g.i("RET")
	g.p("x%dcand:", n)
	g.i("MOVQ R9, done+32(FP)")
	g.i("MOVQ $1, cand+40(FP)")
	g.i("RET")
	g.p("")
	if len(g.free) != 15-2*n {
		panic(fmt.Sprintf("register leak: %v", g.free))
	}
}

func main() {
	g := &gen{}
	g.p("// Code generated by gen_shani.go; DO NOT EDIT.")
	g.p("")
	g.p("//go:build amd64 && !purego")
	g.p("")
	g.p("#include \"textflag.h\"")
	g.p("")
	for _, n := range []int{2, 3, 4} {
		g.kernel(n)
	}
	for j := 0; j < 64; j++ {
		g.p("DATA shaniK<>+%d(SB)/4, $0x%08x", 4*j, k256[j])
	}
	g.p("GLOBL shaniK<>(SB), RODATA|NOPTR, $256")
	g.p("")
	c := make([]uint32, cSize/4)
	set := func(off int, w [4]uint32) { copy(c[off/4:], w[:]) }
	set(cIVA, [4]uint32{iv[5], iv[4], iv[1], iv[0]})
	set(cIVC, [4]uint32{iv[7], iv[6], iv[3], iv[2]})
	set(cPad1, [4]uint32{0, 0, 0x80000000, 0})
	set(cH1M3, [4]uint32{0, 0, 0, 0x2c0})
	set(cH1WK1, [4]uint32{k256[4], k256[5], k256[6] + 0x80000000, k256[7]})
	set(cH1WK3, [4]uint32{k256[12], k256[13], k256[14], k256[15] + 0x2c0})
	set(cH2M2, [4]uint32{0x80000000, 0, 0, 0})
	set(cH2M3, [4]uint32{0, 0, 0, 0x100})
	set(cH2WK2, [4]uint32{k256[8] + 0x80000000, k256[9], k256[10], k256[11]})
	set(cH2WK3, [4]uint32{k256[12], k256[13], k256[14], k256[15] + 0x100})
	for j, w := range c {
		g.p("DATA shaniC<>+%d(SB)/4, $0x%08x", 4*j, w)
	}
	g.p("GLOBL shaniC<>(SB), RODATA|NOPTR, $%d", cSize)
	if err := os.WriteFile("shani_amd64.s", g.b.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
