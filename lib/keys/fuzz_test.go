package keys

import (
	"errors"
	"strings"
	"testing"
)

// FuzzDecodeAddress: DecodeAddress never panics, every error matches
// ErrBadAddress, and whatever decodes re-encodes to the lower-case input.
func FuzzDecodeAddress(f *testing.F) {
	for _, s := range []string{
		goldenTestnetAddress, goldenMainnetAddress,
		strings.ToUpper(goldenTestnetAddress), strings.ToUpper(goldenMainnetAddress),
		"coin1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq",
		"A1LQFN3A", "a1lqfn3a", "?1v759aa", "A12UEL5L", "split1checkupstagehandshakeupstreamerranterredcaperredlc445v",
		"", "1", "coin1", "tcoin1", "coin1\x00", "Coin1qqqq", "\x80coin1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hrps := []string{HRPMainnet, HRPTestnet}
		// Also the input's own HRP, to reach the checks after the HRP check.
		if one := strings.LastIndexByte(s, '1'); one > 0 {
			if own := strings.ToLower(s[:one]); checkHRP(own) == nil {
				hrps = append(hrps, own)
			}
		}
		decoded := 0
		for _, hrp := range hrps {
			h, err := DecodeAddress(s, hrp)
			if err != nil {
				if !errors.Is(err, ErrBadAddress) {
					t.Fatalf("DecodeAddress(%q, %q): error %v does not match ErrBadAddress", s, hrp, err)
				}
				if h != (PubKeyHash{}) {
					t.Fatalf("DecodeAddress(%q, %q): non-zero hash with error", s, hrp)
				}
				continue
			}
			decoded++
			re, err := EncodeAddress(hrp, h)
			if err != nil {
				t.Fatalf("EncodeAddress(%q, %x) after decoding %q: %v", hrp, h, s, err)
			}
			if re != strings.ToLower(s) {
				t.Fatalf("DecodeAddress(%q, %q) = %x, re-encoded as %q", s, hrp, h, re)
			}
		}
		if decoded > 0 && strings.ToLower(s) != s && strings.ToUpper(s) != s {
			t.Fatalf("mixed-case %q decoded", s)
		}
	})
}
