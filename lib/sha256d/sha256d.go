package sha256d

import (
	"crypto/sha256"
	"encoding/binary"
	"math/bits"
	"sync/atomic"
)

// HeaderSize is the size of a block header in bytes.
const HeaderSize = 88

// NonceOffset is the offset of the little-endian 64-bit nonce in the header.
const NonceOffset = 80

var _K = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

var _IV = [8]uint32{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}

// Hash returns SHA256(SHA256(header)) computed with crypto/sha256. It is the
// reference the scanning kernels are tested against.
func Hash(header *[HeaderSize]byte) [32]byte {
	first := sha256.Sum256(header[:])
	return sha256.Sum256(first[:])
}

// Midstate returns the SHA-256 state (a..h) after compressing the first 64
// bytes of header. Those bytes do not depend on the timestamp, target or
// nonce, so a miner computes this once per template.
func Midstate(header *[HeaderSize]byte) [8]uint32 {
	st := _IV
	var w [64]uint32
	for i := 0; i < 16; i++ {
		w[i] = binary.BigEndian.Uint32(header[4*i:])
	}
	expand(&w, 16)
	compress(&st, &w, 0)
	for i := range st {
		st[i] += _IV[i]
	}
	return st
}

// MeetsTarget reports whether hash, read as a big-endian 256-bit integer, is
// less than or equal to target (also big-endian).
func MeetsTarget(hash, target *[32]byte) bool {
	for i := 0; i < 32; i += 8 {
		h := binary.BigEndian.Uint64(hash[i:])
		t := binary.BigEndian.Uint64(target[i:])
		if h != t {
			return h < t
		}
	}
	return true
}

// expand fills w[from..63] with the SHA-256 message schedule.
func expand(w *[64]uint32, from int) {
	for i := from; i < 64; i++ {
		v1 := w[i-2]
		t1 := bits.RotateLeft32(v1, -17) ^ bits.RotateLeft32(v1, -19) ^ (v1 >> 10)
		v2 := w[i-15]
		t2 := bits.RotateLeft32(v2, -7) ^ bits.RotateLeft32(v2, -18) ^ (v2 >> 3)
		w[i] = t1 + w[i-7] + t2 + w[i-16]
	}
}

// rnd is one SHA-256 round with kw = K[i] + W[i]. It returns the new e and
// the new a; the callers rotate the variable roles instead of moving values.
func rnd(a, b, c, d, e, f, g, h, kw uint32) (newE, newA uint32) {
	t1 := h + (bits.RotateLeft32(e, -6) ^ bits.RotateLeft32(e, -11) ^ bits.RotateLeft32(e, -25)) +
		((e & f) ^ (^e & g)) + kw
	t2 := (bits.RotateLeft32(a, -2) ^ bits.RotateLeft32(a, -13) ^ bits.RotateLeft32(a, -22)) +
		((a & b) ^ (a & c) ^ (b & c))
	return d + t1, t1 + t2
}

// rounds8 runs rounds from..63 (from a multiple of 8) on the state a..h.
func rounds8(a, b, c, d, e, f, g, h uint32, w *[64]uint32, from int) (uint32, uint32, uint32, uint32, uint32, uint32, uint32, uint32) {
	for i := from; i < 64; i += 8 {
		k, x := _K[i:i+8:i+8], w[i:i+8:i+8]
		d, h = rnd(a, b, c, d, e, f, g, h, k[0]+x[0])
		c, g = rnd(h, a, b, c, d, e, f, g, k[1]+x[1])
		b, f = rnd(g, h, a, b, c, d, e, f, k[2]+x[2])
		a, e = rnd(f, g, h, a, b, c, d, e, k[3]+x[3])
		h, d = rnd(e, f, g, h, a, b, c, d, k[4]+x[4])
		g, c = rnd(d, e, f, g, h, a, b, c, k[5]+x[5])
		f, b = rnd(c, d, e, f, g, h, a, b, k[6]+x[6])
		e, a = rnd(b, c, d, e, f, g, h, a, k[7]+x[7])
	}
	return a, b, c, d, e, f, g, h
}

// compress runs rounds from..63 on st with the expanded schedule w; from is
// 0 or 4. It does not add the feed-forward; callers do.
func compress(st *[8]uint32, w *[64]uint32, from int) {
	a, b, c, d, e, f, g, h := st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7]
	if from == 4 {
		d, h = rnd(a, b, c, d, e, f, g, h, _K[4]+w[4])
		c, g = rnd(h, a, b, c, d, e, f, g, _K[5]+w[5])
		b, f = rnd(g, h, a, b, c, d, e, f, _K[6]+w[6])
		a, e = rnd(f, g, h, a, b, c, d, e, _K[7]+w[7])
		// the roles a..h are now held by e, f, g, h, a, b, c, d
		a, b, c, d, e, f, g, h = rounds8(e, f, g, h, a, b, c, d, w, 8)
	} else {
		a, b, c, d, e, f, g, h = rounds8(a, b, c, d, e, f, g, h, w, 0)
	}
	st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7] = a, b, c, d, e, f, g, h
}

// forcePortable makes every Scanner use the pure-Go kernel (see ForcePortable).
var forcePortable atomic.Bool

// ForcePortable makes Scan use the portable pure-Go kernel even where a
// faster one is available (force=true), or restores the automatic choice
// (force=false). It is meant for tests and benchmarks and affects all
// Scanners; it is safe to call concurrently with Scan.
func ForcePortable(force bool) { forcePortable.Store(force) }

// KernelName names the kernel Scan uses now: "portable", or
// "sha-ni-<N>way" when the SHA extensions kernel with N interleaved streams
// is in use.
func KernelName() string {
	if forcePortable.Load() || !haveAccel() {
		return "portable"
	}
	return accelName()
}

// Scanner hashes consecutive nonces of one header template and reports the
// first that meets a target. A Scanner is not safe for concurrent use; give
// each goroutine its own.
type Scanner struct {
	target [32]byte
	tw0    uint32     // target bytes 0..3, big-endian: the early-exit word
	mid    [8]uint32  // midstate after bytes 0..63
	s4     [8]uint32  // state after rounds 0..3 of the second block
	w1     [64]uint32 // second-block schedule template: W0..W15 with W4=W5=0
	w2     [64]uint32 // outer schedule scratch, W8..W15 preset

	arch archState // per-kernel precomputed context
}

// NewScanner prepares a Scanner for header (whose nonce field is ignored) and
// target (a 32-byte big-endian number). It copies both.
func NewScanner(header *[HeaderSize]byte, target *[32]byte) *Scanner {
	s := new(Scanner)
	s.target = *target
	s.tw0 = binary.BigEndian.Uint32(target[0:4])
	s.mid = Midstate(header)
	for i := 0; i < 4; i++ {
		s.w1[i] = binary.BigEndian.Uint32(header[64+4*i:])
	}
	// W0..W3: merkle_root[28:32], timestamp, difficulty target.
	// W4, W5: the nonce; set per nonce. W6..W15: SHA-256 padding.
	s.w1[4], s.w1[5] = 0, 0
	s.w1[6] = 0x80000000
	for i := 7; i < 15; i++ {
		s.w1[i] = 0
	}
	s.w1[15] = HeaderSize * 8
	// Rounds 0..3 use only W0..W3, which do not depend on the nonce.
	s.s4 = s.mid
	compress4(&s.s4, &s.w1)
	s.w2[8] = 0x80000000
	s.w2[15] = 32 * 8
	s.arch.init(s)
	return s
}

// compress4 runs rounds 0..3 only.
func compress4(st *[8]uint32, w *[64]uint32) {
	a, b, c, d, e, f, g, h := st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7]
	d, h = rnd(a, b, c, d, e, f, g, h, _K[0]+w[0])
	c, g = rnd(h, a, b, c, d, e, f, g, _K[1]+w[1])
	b, f = rnd(g, h, a, b, c, d, e, f, _K[2]+w[2])
	a, e = rnd(f, g, h, a, b, c, d, e, _K[3]+w[3])
	// the roles a..h are now held by e, f, g, h, a, b, c, d
	st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7] = e, f, g, h, a, b, c, d
}

// hashPortable computes the double SHA-256 digest words of the header with
// the given nonce: two compressions, the second block of the inner hash from
// the midstate (rounds 4..63 from the precomputed state) and the outer block.
func (s *Scanner) hashPortable(nonce uint64, out *[8]uint32) {
	w := &s.w1
	w[4] = bits.ReverseBytes32(uint32(nonce))
	w[5] = bits.ReverseBytes32(uint32(nonce >> 32))
	expand(w, 16)
	st := s.s4
	compress(&st, w, 4)
	w2 := &s.w2
	for i := 0; i < 8; i++ {
		w2[i] = st[i] + s.mid[i]
	}
	expand(w2, 16)
	st = _IV
	compress(&st, w2, 0)
	for i := 0; i < 8; i++ {
		out[i] = st[i] + _IV[i]
	}
}

// wordsToHash serializes digest words big-endian.
func wordsToHash(st *[8]uint32) (h [32]byte) {
	for i, v := range st {
		binary.BigEndian.PutUint32(h[4*i:], v)
	}
	return h
}

// maxCount clamps count so that the scan stops at nonce 2^64-1.
func maxCount(start, count uint64) uint64 {
	if last := ^uint64(0) - start; count > last {
		// start..2^64-1 holds last+1 nonces; last+1 overflows only when
		// start == 0, where every count fits.
		return last + 1
	}
	return count
}

// Scan hashes the nonces startNonce, startNonce+1, ..., startNonce+count-1
// in that order and returns the first whose double SHA-256 meets the target,
// with its hash. hashed is the number of nonces examined: the found nonce's
// index plus one, or count when none was found. Nonces do not wrap: the scan
// stops after nonce 2^64-1, so hashed may be less than count then.
//
// Scan allocates nothing and makes no interface or indirect call per nonce.
func (s *Scanner) Scan(startNonce uint64, count uint64) (nonce uint64, hash [32]byte, found bool, hashed uint64) {
	count = maxCount(startNonce, count)
	if count == 0 {
		return 0, hash, false, 0
	}
	if !forcePortable.Load() && haveAccel() {
		return s.scanAccel(startNonce, count)
	}
	return s.scanPortable(startNonce, count)
}

func (s *Scanner) scanPortable(start, count uint64) (nonce uint64, hash [32]byte, found bool, hashed uint64) {
	var st [8]uint32
	for i := uint64(0); i < count; i++ {
		n := start + i
		s.hashPortable(n, &st)
		if st[0] > s.tw0 {
			continue
		}
		h := wordsToHash(&st)
		if MeetsTarget(&h, &s.target) {
			return n, h, true, i + 1
		}
	}
	return 0, hash, false, count
}
