package payout

import (
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

// newAddress is a fresh regtest address and its pubkey hash.
func newAddress(t testing.TB) (string, types.Hash) {
	t.Helper()
	k := newKey(t)
	pkh, err := wallet.DecodeAddress(k.Address, params.Regtest)
	if err != nil {
		t.Fatal(err)
	}
	return k.Address, pkh
}

// A claim's client network is kept in its entry by time: the claim record keeps the format
// versions before read (48 bytes), Recent gives the claims of the window with their clients
// and drops older entries, and a refused payout's Forget removes the entry with the record.
func TestRecentClaims(t *testing.T) {
	s, err := OpenClaimStore(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Unix(1_800_000_000, 0)
	a, pkh := newAddress(t)
	b, pkhB := newAddress(t)
	s.now = func() time.Time { return now.Add(-2 * time.Hour) }
	if err := s.Record(&Payout{Tx: &types.Transaction{}, Claims: []Claim{{Address: b, PKH: pkhB, Amount: 5, Client: "198.51.100.7"}}}); err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time { return now }
	p := &Payout{Tx: &types.Transaction{}, Claims: []Claim{{Address: a, PKH: pkh, Amount: 5, Client: "2001:db8:1:2::/64"}}}
	if err := s.Record(p); err != nil {
		t.Fatal(err)
	}
	if raw, err := s.db.Get(claimKey(a), nil); err != nil || len(raw) != 48 {
		t.Fatalf("claim record: %d bytes, %v; want the 48 of before", len(raw), err)
	}
	recent, err := s.Recent(now.Add(-time.Hour))
	if err != nil || len(recent) != 1 || recent[0].Client != "2001:db8:1:2::/64" || !recent[0].Time.Equal(now) {
		t.Fatalf("Recent of the last hour: %+v %v", recent, err)
	}
	if all, err := s.Recent(time.Unix(0, 0)); err != nil || len(all) != 1 {
		t.Fatalf("the entry older than the window was not dropped: %+v %v", all, err)
	}
	if _, ok, _ := s.Last(b); !ok {
		t.Fatal("dropping the old entry dropped the claim record")
	}
	if err := s.Forget(p); err != nil {
		t.Fatal(err)
	}
	if left, err := s.Recent(time.Unix(0, 0)); err != nil || len(left) != 0 {
		t.Fatalf("entries after Forget: %+v %v", left, err)
	}
}
