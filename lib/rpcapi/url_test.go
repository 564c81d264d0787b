package rpcapi

import (
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/params"
)

func TestNodeURL(t *testing.T) {
	for raw, want := range map[string]string{"": "http://127.0.0.1:38332", "127.0.0.1:9": "http://127.0.0.1:9",
		" https://node.example:443 ": "https://node.example:443"} {
		if got, err := NodeURL(raw, params.Regtest); err != nil || got != want {
			t.Errorf("NodeURL(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	for _, raw := range []string{"ftp://x", "http://", "::"} {
		if _, err := NodeURL(raw, params.Testnet); err == nil || !strings.Contains(err.Error(), "28332") {
			t.Errorf("NodeURL(%q): %v", raw, err)
		}
	}
	if _, err := NodeURL("", nil); err == nil {
		t.Error("no URL and no network accepted")
	}
}

// TestNodeURLHidesPassword: a refused --rpc value never shows its password.
func TestNodeURLHidesPassword(t *testing.T) {
	for _, raw := range []string{"ftp://alice:s3cret@host:1", "http://alice:s3cret@[::1", "alice:s3cret@%zz"} {
		_, err := NodeURL(raw, params.Regtest)
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("NodeURL(%q): %v", raw, err)
		}
	}
}
