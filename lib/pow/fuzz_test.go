package pow

import (
	"math/big"
	"testing"
)

// FuzzCompact checks that CompactToBig never panics, that its result is in
// [0, 2^256), and that for non-negative, non-overflowing values the Core
// re-encoding decodes to the same target and is canonical.
func FuzzCompact(f *testing.F) {
	for _, c := range []uint32{
		0, 0x00123456, 0x01003456, 0x01123456, 0x02008000, 0x01fedcba,
		0x04923456, 0x05009234, 0x20123456, 0xff123456, 0x1d00ffff,
		0x207fffff, 0x2100ffff, 0x21010000, 0x220000ff, 0x2200ff00,
		0x23000001, 0xff800000, 0xffffffff,
	} {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, c uint32) {
		target, negative, overflow := CompactToBig(c)
		if target == nil || target.Sign() < 0 || target.BitLen() > 256 {
			t.Fatalf("CompactToBig(0x%08x) = %v out of range", c, target)
		}
		if target.Sign() == 0 && !overflow && negative {
			t.Fatalf("0x%08x: zero target reported negative", c)
		}

		_ = Work(c)
		_, terr := TargetFromCompact(c, nil)
		if (terr == nil) != (!negative && !overflow && target.Sign() != 0) {
			t.Fatalf("TargetFromCompact(0x%08x) error %v inconsistent with flags", c, terr)
		}
		var h [32]byte
		_ = CheckProofOfWork(h, c, nil)
		_ = NextCompact(60, c, 7200, 0, nil, true)

		if negative || overflow {
			return
		}
		re := BigToCompact(target)
		back, bneg, bovf := CompactToBig(re)
		if bneg || bovf || back.Cmp(target) != 0 {
			t.Fatalf("0x%08x -> %x -> 0x%08x -> %x (neg %v ovf %v)", c, target, re, back, bneg, bovf)
		}
		if again := BigToCompact(back); again != re {
			t.Fatalf("re-encoding not canonical: 0x%08x then 0x%08x", re, again)
		}
		if re&compactSignBit != 0 {
			t.Fatalf("BigToCompact(%x) = 0x%08x has sign bit", target, re)
		}
		if target.Sign() != 0 {
			neg := BigToCompact(new(big.Int).Neg(target))
			if neg != re|compactSignBit {
				t.Fatalf("BigToCompact(-%x) = 0x%08x, want 0x%08x", target, neg, re|compactSignBit)
			}
			w := Work(c)
			if w.Sign() <= 0 {
				t.Fatalf("Work(0x%08x) = %v for valid target", c, w)
			}
		}
	})
}

// FuzzBigToCompact checks that encoding any 256-bit value only truncates: the
// decoded value is at most the input, shares its top bytes and the encoding is
// never negative or overflowing.
func FuzzBigToCompact(f *testing.F) {
	f.Add([]byte{0x80})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add(make([]byte, 32))
	f.Add([]byte{0xf6, 0x30, 0x30}) // 3 bytes whose top byte needs a 4th
	maxBytes := TargetBytes(maxUint256)
	f.Add(maxBytes[:])
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 32 {
			b = b[:32]
		}
		v := new(big.Int).SetBytes(b)
		c := BigToCompact(v)
		back, neg, ovf := CompactToBig(c)
		if neg || ovf {
			t.Fatalf("BigToCompact(%x) = 0x%08x decodes neg %v ovf %v", v, c, neg, ovf)
		}
		if back.Cmp(v) > 0 {
			t.Fatalf("BigToCompact(%x) = 0x%08x decodes above input: %x", v, c, back)
		}
		// The exponent is the byte length, or one more when the top byte
		// would set the sign bit; the lost part is below one unit of the
		// mantissa's last byte.
		size := (v.BitLen() + 7) / 8
		exp := int(c >> 24)
		if v.Sign() != 0 && exp != size && exp != size+1 {
			t.Fatalf("BigToCompact(%x) = 0x%08x: exponent %d for %d bytes", v, c, exp, size)
		}
		lost := new(big.Int).Sub(v, back)
		if exp <= 3 && lost.Sign() != 0 || exp > 3 && lost.BitLen() > 8*(exp-3) {
			t.Fatalf("BigToCompact(%x) = 0x%08x loses too much: %x", v, c, lost)
		}
		tb := TargetBytes(v)
		if HashToBig(tb).Cmp(v) != 0 {
			t.Fatalf("TargetBytes round trip failed for %x", v)
		}
	})
}
