package pow

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"strconv"
	"testing"
)

type compactVector struct {
	CompactHex   string  `json:"compact_hex"`
	TargetHex    *string `json:"target_hex"`
	Negative     bool    `json:"negative"`
	Overflow     bool    `json:"overflow"`
	RecompactHex *string `json:"recompact_hex"`
	Source       string  `json:"source"`
	Note         string  `json:"note"`
}

func parseHex32(t *testing.T, s string) uint32 {
	t.Helper()
	if len(s) != 8 {
		t.Fatalf("compact hex %q: want 8 digits", s)
	}
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		t.Fatalf("compact hex %q: %v", s, err)
	}
	return uint32(v)
}

func mustBig(t testing.TB, s string) *big.Int {
	t.Helper()
	v, ok := new(big.Int).SetString(s, 0)
	if !ok {
		t.Fatalf("bad big int %q", s)
	}
	return v
}

func TestCompactVectors(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/vectors/bitcoin_compact_nbits.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors []compactVector
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	if len(vectors) != 23 {
		t.Fatalf("got %d vectors, README says 23", len(vectors))
	}
	sawEncodeOnly := false
	for _, v := range vectors {
		t.Run(v.CompactHex, func(t *testing.T) {
			c := parseHex32(t, v.CompactHex)
			target, negative, overflow := CompactToBig(c)
			if negative != v.Negative || overflow != v.Overflow {
				t.Fatalf("CompactToBig(0x%08x) flags = neg %v, ovf %v; want neg %v, ovf %v",
					c, negative, overflow, v.Negative, v.Overflow)
			}
			if target.Sign() < 0 || target.BitLen() > 256 {
				t.Fatalf("CompactToBig(0x%08x) = %v, outside [0, 2^256)", c, target)
			}
			if v.TargetHex == nil {
				// Overflow case: the source checks only the flags.
				if !v.Overflow {
					t.Fatal("vector without target_hex must be an overflow case")
				}
				if v.RecompactHex != nil {
					t.Fatal("overflow vector unexpectedly has recompact_hex")
				}
				return
			}
			want, err := hex.DecodeString(*v.TargetHex)
			if err != nil || len(want) != 32 {
				t.Fatalf("bad target_hex %q", *v.TargetHex)
			}
			if got := TargetBytes(target); hex.EncodeToString(got[:]) != *v.TargetHex {
				t.Fatalf("CompactToBig(0x%08x) = %x, want %s", c, got, *v.TargetHex)
			}
			if v.RecompactHex == nil {
				t.Fatal("missing recompact_hex")
			}
			signed := new(big.Int).Set(target)
			if v.Negative {
				signed.Neg(signed)
			}
			wantRe := parseHex32(t, *v.RecompactHex)
			if got := BigToCompact(signed); got != wantRe {
				t.Fatalf("BigToCompact(%v) = 0x%08x, want 0x%08x", signed, got, wantRe)
			}
			if c == 0x02008000 {
				// Encode-only case in Core: GetCompact(0x80) == 0x02008000.
				sawEncodeOnly = true
				if got := BigToCompact(big.NewInt(0x80)); got != 0x02008000 {
					t.Fatalf("BigToCompact(0x80) = 0x%08x, want 0x02008000", got)
				}
			}
			// Re-encoding is canonical: it decodes to the same magnitude
			// and sign, and encodes to itself again.
			reTarget, reNeg, reOvf := CompactToBig(wantRe)
			if reTarget.Cmp(target) != 0 || reOvf || reNeg != (v.Negative && target.Sign() != 0) {
				t.Fatalf("decode of recompact 0x%08x = %v neg %v ovf %v", wantRe, reTarget, reNeg, reOvf)
			}
		})
	}
	if !sawEncodeOnly {
		t.Fatal("encode-only vector 0x02008000 not found")
	}
}

func TestBigToCompactExtra(t *testing.T) {
	tests := []struct {
		in   *big.Int
		want uint32
	}{
		{nil, 0},
		{big.NewInt(0), 0},
		{big.NewInt(1), 0x01010000},
		{big.NewInt(-1), 0x01810000},
		{big.NewInt(0x7f), 0x017f0000},
		{big.NewInt(0x80), 0x02008000},
		{big.NewInt(-0x80), 0x02808000},
		{big.NewInt(0x123456), 0x03123456},
		{big.NewInt(0x12345678), 0x04123456},
		{mustBig(t, "0xffff0000000000000000000000000000000000000000000000000000"), 0x1d00ffff},
		{new(big.Int).Set(maxUint256), 0x2100ffff},
		{new(big.Int).Set(twoTo256), 0x21010000},
		{new(big.Int).Lsh(big.NewInt(1), 8*300), 0xff7fffff},
		{new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 8*300)), 0xffffffff},
	}
	for _, tc := range tests {
		if got := BigToCompact(tc.in); got != tc.want {
			t.Errorf("BigToCompact(%v) = 0x%08x, want 0x%08x", tc.in, got, tc.want)
		}
	}
	// BigToCompact must not modify its argument.
	x := big.NewInt(-0x1234)
	BigToCompact(x)
	if x.Int64() != -0x1234 {
		t.Fatalf("argument modified: %v", x)
	}
}

func TestCompactToBigExtra(t *testing.T) {
	tests := []struct {
		c        uint32
		want     string
		neg, ovf bool
	}{
		{0x1d00ffff, "0xffff0000000000000000000000000000000000000000000000000000", false, false},
		{0x207fffff, "0x7fffff0000000000000000000000000000000000000000000000000000000000", false, false},
		{0x2100ffff, "0xffff000000000000000000000000000000000000000000000000000000000000", false, false},
		{0x21010000, "0", false, true}, // 2^256 wraps to 0, as in Core
		{0x220000ff, "0xff00000000000000000000000000000000000000000000000000000000000000", false, false}, // 0xff << 248: fits
		{0x22010000, "0", false, true},
		{0x2300ff00, "0", false, true},
		{0xff000000, "0", false, false}, // zero mantissa never overflows
		{0xff800000, "0", false, false}, // nor is it negative
		{0x2200ff00, "0", false, true},  // 0xff00 << 248 wraps to 0
		{0x04800001, "0x100", true, false},
	}
	for _, tc := range tests {
		got, neg, ovf := CompactToBig(tc.c)
		want := mustBig(t, tc.want)
		if got.Cmp(want) != 0 || neg != tc.neg || ovf != tc.ovf {
			t.Errorf("CompactToBig(0x%08x) = %x neg %v ovf %v; want %x neg %v ovf %v",
				tc.c, got, neg, ovf, want, tc.neg, tc.ovf)
		}
	}
	if Compact(0x1d00ffff).String() != "0x1d00ffff" {
		t.Errorf("String = %s", Compact(0x1d00ffff))
	}
}

// TestOverflowIsExact checks that the overflow flag is set exactly when the
// encoded number is 2^256 or more, for every exponent and a spread of
// mantissas.
func TestOverflowIsExact(t *testing.T) {
	words := []uint32{0, 1, 0x7f, 0xff, 0x100, 0x7fff, 0xffff, 0x10000, 0x7fffff}
	for size := uint32(0); size <= 0xff; size++ {
		for _, w := range words {
			c := size<<24 | w
			_, _, ovf := CompactToBig(c)
			word := w
			var exact *big.Int
			if size <= 3 {
				exact = big.NewInt(int64(word >> (8 * (3 - size))))
			} else {
				exact = new(big.Int).Lsh(big.NewInt(int64(word)), uint(8*(size-3)))
			}
			if want := exact.Cmp(maxUint256) > 0; ovf != want {
				t.Fatalf("0x%08x: overflow %v, want %v", c, ovf, want)
			}
		}
	}
}

func TestTargetFromCompact(t *testing.T) {
	mainLimit := mustBig(t, "0x00000000ffffffffffffffffffffffffffffffffffffffffffffffffffffffff")
	tests := []struct {
		c       uint32
		limit   *big.Int
		wantErr error
	}{
		{0x1d00ffff, mainLimit, nil},
		{0x1b0404cb, mainLimit, nil},
		{0x1d00ffff, nil, nil},
		{0x207fffff, nil, nil},
		{0x2100ffff, nil, nil},
		{0x1d00ffff, new(big.Int).SetUint64(1), ErrTargetAboveLimit},
		{0x1d010000, mainLimit, ErrTargetAboveLimit},
		{0x1e00ffff, mainLimit, ErrTargetAboveLimit},
		{0x04923456, mainLimit, ErrNegativeTarget},
		{0x01fedcba, nil, ErrNegativeTarget},
		{0xff123456, nil, ErrOverflowTarget},
		{0x21010000, nil, ErrOverflowTarget},
		{0xff923456, nil, ErrNegativeTarget}, // both: negative wins
		{0x00000000, mainLimit, ErrZeroTarget},
		{0x01003456, mainLimit, ErrZeroTarget},
		{0x03800000, mainLimit, ErrZeroTarget}, // sign bit, zero mantissa
	}
	for _, tc := range tests {
		got, err := TargetFromCompact(tc.c, tc.limit)
		if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
			t.Errorf("TargetFromCompact(0x%08x) error = %v, want %v", tc.c, err, tc.wantErr)
			continue
		}
		if err != nil {
			if got != nil {
				t.Errorf("TargetFromCompact(0x%08x) returned target with error", tc.c)
			}
			continue
		}
		want, _, _ := CompactToBig(tc.c)
		if got.Cmp(want) != 0 {
			t.Errorf("TargetFromCompact(0x%08x) = %x, want %x", tc.c, got, want)
		}
		if m, err := Compact(tc.c).Target(tc.limit); err != nil || m.Cmp(want) != 0 {
			t.Errorf("Compact.Target mismatch")
		}
	}
	// A target exactly at the limit is valid.
	if _, err := TargetFromCompact(0x1d00ffff, mustBig(t, "0xffff0000000000000000000000000000000000000000000000000000")); err != nil {
		t.Errorf("target equal to limit: %v", err)
	}
}
