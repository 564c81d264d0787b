package amount

import (
	"errors"
	"testing"
)

func TestFormat(t *testing.T) {
	for v, want := range map[uint64]string{0: "0.00000000", 1: "0.00000001", 150_000_000: "1.50000000",
		100 * Coin: "100.00000000", MaxMoney: "21000000.00000000"} {
		if got := Format(v); got != want {
			t.Errorf("Format(%d) = %s, want %s", v, got, want)
		}
	}
}

func TestParse(t *testing.T) {
	ok := map[string]uint64{"1": Coin, "1.5": 150_000_000, "0.00000001": 1, "100.00000000": 100 * Coin,
		"21000000": MaxMoney, "007.1": 710_000_000, "0.1": 10_000_000}
	for s, want := range ok {
		if got, err := Parse(s); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	bad := map[string]error{"": ErrSyntax, "-1": ErrSyntax, "1e3": ErrSyntax, "1.": ErrSyntax, ".5": ErrSyntax,
		"1.000000001": ErrPrecision, "21000000.00000001": ErrRange, "999999999999999999999": ErrRange,
		"0": ErrZero, "0.00000000": ErrZero, "1,5": ErrSyntax, " 1": ErrSyntax, "+1": ErrSyntax}
	for s, want := range bad {
		if _, err := Parse(s); !errors.Is(err, want) {
			t.Errorf("Parse(%q) = %v, want %v", s, err, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("1.5")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseAllowZero(s)
		if err != nil {
			return
		}
		if back, err := ParseAllowZero(Format(v)); err != nil || back != v {
			t.Fatalf("%q -> %d -> %q", s, v, Format(v))
		}
	})
}
