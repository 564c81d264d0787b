package httpapi

import (
	"github.com/cointoolkit/coin/lib/faucet"
	"net/http"
	"testing"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/params"
)

// TestDefaultLimits: testnet keeps protocol §14's per-client limit and hourly budget, regtest
// has none; a server on regtest whose Config leaves them 0 pays a seventh claim of one client.
func TestDefaultLimits(t *testing.T) {
	if c, b := faucet.DefaultLimits(params.Testnet); c != 5 || b != 100 {
		t.Errorf("testnet: %d claims per client, %d an hour; want 5 and 100", c, b)
	}
	if c, b := faucet.DefaultLimits(params.Regtest); c >= 0 || b >= 0 {
		t.Errorf("regtest: %d claims per client, %d an hour; want off (negative)", c, b)
	}
	h := regtestHarness(t, 10, withLimits(0, 0, 0, 0, 0), withAmount(10*amount.Coin))
	if h.scfg.Net != params.Regtest {
		t.Fatalf("harness on %s", h.scfg.Net.Name)
	}
	for i := 0; i < faucet.DefaultClaimsPerClient+2; i++ {
		if r := h.do(t, http.MethodPost, "/api/faucet", claimBody(mustAddr(t))); r.Status != 200 {
			t.Fatalf("claim %d of one client on regtest: %d %s", i+1, r.Status, r.Raw)
		}
	}
}
