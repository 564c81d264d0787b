package amount

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Subunits per COIN and the supply cap.
const (
	Coin     uint64 = 100_000_000
	MaxMoney uint64 = 21_000_000 * Coin
)

// Parse errors.
var (
	ErrSyntax    = errors.New("not a decimal amount")
	ErrPrecision = errors.New("more than 8 fractional digits")
	ErrRange     = errors.New("amount above the 21,000,000 COIN supply cap")
	ErrZero      = errors.New("amount must be greater than zero")
)

// Format renders subunits as COIN with exactly 8 fractional digits.
func Format(v uint64) string {
	return fmt.Sprintf("%d.%08d", v/Coin, v%Coin)
}

// Parse reads COIN text exactly. It accepts digits with an optional fraction; the JSON forms
// "1e3" or "-1" are rejected. Zero is an error.
func Parse(s string) (uint64, error) {
	v, err := ParseAllowZero(s)
	if err == nil && v == 0 {
		return 0, ErrZero
	}
	return v, err
}

// ParseAllowZero is Parse without the zero check.
func ParseAllowZero(s string) (uint64, error) {
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" || !digits(whole) || (hasDot && (frac == "" || !digits(frac))) {
		return 0, fmt.Errorf("%w: %q", ErrSyntax, clip(s))
	}
	if len(frac) > 8 {
		return 0, ErrPrecision
	}
	whole = strings.TrimLeft(whole, "0")
	if len(whole) > 8 {
		return 0, ErrRange
	}
	w, _ := strconv.ParseUint("0"+whole, 10, 64)
	f, _ := strconv.ParseUint((frac + "00000000")[:8], 10, 64)
	v := w*Coin + f
	if v > MaxMoney {
		return 0, ErrRange
	}
	return v, nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}
