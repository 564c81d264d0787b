package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/faucet/api"
)

// strict decodes raw into v, refusing fields v does not have.
func strict(t *testing.T, raw string, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s into %T: %v", raw, v, err)
	}
}

// The server's answers are exactly the bodies of lib/faucet/api, which clients decode.
func TestAnswersAreAPITypes(t *testing.T) {
	h := regtestHarness(t, 3)
	r := h.do(t, http.MethodGet, "/api/wallet/new", "")
	var nw api.NewWalletResult
	strict(t, r.Raw, &nw)
	if nw.Address == "" || nw.Mnemonic == "" {
		t.Fatalf("new wallet %+v", nw)
	}
	r = h.do(t, http.MethodPost, "/api/wallet/derive", fmt.Sprintf(`{"mnemonic":%q}`, nw.Mnemonic))
	var ar api.AddressResult
	strict(t, r.Raw, &ar)
	if ar.Address != nw.Address {
		t.Fatalf("derive %+v, want %s", ar, nw.Address)
	}
	r = h.do(t, http.MethodPost, "/api/faucet", claimBody(nw.Address))
	var cr api.ClaimResult
	strict(t, r.Raw, &cr)
	if r.Status != http.StatusOK || cr.TxID == "" || cr.Amount != "100.00000000" {
		t.Fatalf("claim %d %+v", r.Status, cr)
	}
	// The claims-paid count follows the engine's round, which may finish just after the
	// answer: ask again for a while.
	var st api.StatusResult
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r = h.do(t, http.MethodGet, "/api/status", "")
		st = api.StatusResult{}
		strict(t, r.Raw, &st)
		if st.ClaimsPaid == 1 || time.Now().After(deadline) {
			break
		}
	}
	if st.ClaimsPaid != 1 || st.Network == "" {
		t.Fatalf("status %+v", st)
	}
	r = h.do(t, http.MethodGet, "/api/wallet/balance?address="+nw.Address, "")
	var br api.BalanceResult
	strict(t, r.Raw, &br)
	if br.Address != nw.Address {
		t.Fatalf("balance %+v", br)
	}
	r = h.do(t, http.MethodGet, "/nope", "")
	var eb api.ErrorBody
	strict(t, r.Raw, &eb)
	if r.Status != http.StatusNotFound || eb.Error.Code != "not_found" || eb.Error.Message == "" {
		t.Fatalf("error %d %+v", r.Status, eb)
	}
}
