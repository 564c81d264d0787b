package events

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
)

func TestFilter(t *testing.T) {
	a, b, c := "tcoin1a", "tcoin1b", "tcoin1c"
	evs := []Event{
		{ID: 1, Type: TypeAgentRegistered, Actor: a},
		{ID: 2, Type: TypeVouched, Actor: a, Target: b},
		{ID: 3, Type: TypeContractCreated, Actor: a, Initiator: a, Counterparty: b},
		{ID: 4, Type: TypeContractFulfilled, Actor: b, Initiator: a, Counterparty: b},
		{ID: 5, Type: TypeReviewed, Actor: b, Subject: a},
		{ID: 6, Type: TypeScoreChanged, Address: c},
		{ID: 7, Type: TypeRetracted, Retracts: 3, RetractedType: TypeContractCreated, Actor: a, Initiator: a, Counterparty: b},
		{ID: 8, Type: TypeContractRefunded, Actor: c, Initiator: c, Counterparty: a},
	}
	ids := func(f Filter) []uint64 {
		var out []uint64
		for i := range evs {
			if f.Match(&evs[i]) {
				out = append(out, evs[i].ID)
			}
		}
		return out
	}
	for _, tc := range []struct {
		f    Filter
		want []uint64
	}{
		{Filter{}, []uint64{1, 2, 3, 4, 5, 6, 7, 8}},
		{Filter{Address: b}, []uint64{2, 3, 4, 5, 7}},
		{Filter{Address: c}, []uint64{6, 8}},
		{Filter{Address: "tcoin1nobody"}, nil},
		{Filter{Types: []string{TypeContractCreated}}, []uint64{3, 7}}, // with its retraction
		{Filter{Types: []string{TypeRetracted}}, []uint64{7}},
		{Filter{Address: a, Types: []string{TypeReviewed, TypeContractRefunded}}, []uint64{5, 8}},
	} {
		if got := ids(tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.f, got, tc.want)
		}
	}
	if got := evs[3].Addresses(); !slices.Equal(got, []string{b, a}) {
		t.Errorf("Addresses %v", got)
	}
}

func TestParseTypes(t *testing.T) {
	got, err := ParseTypes(" contract_created, ,retracted,contract_created")
	if err != nil || !slices.Equal(got, []string{TypeContractCreated, TypeRetracted}) {
		t.Fatalf("%v %v", got, err)
	}
	if got, err := ParseTypes(""); err != nil || got != nil {
		t.Fatalf("empty: %v %v", got, err)
	}
	if _, err := ParseTypes("contract_created,bogus"); err == nil {
		t.Fatal("an unknown type was accepted")
	}
}

// The store gives ids in order, keeps them across reopening, writes meta in the events'
// batch, and keeps the newest Retention events.
func TestStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "events")
	s, err := OpenStore(dir, 5)
	if err != nil {
		t.Fatal(err)
	}
	if f, l := s.Bounds(); f != 1 || l != 0 {
		t.Fatalf("empty bounds %d %d", f, l)
	}
	evs, err := s.Append([]Event{{Type: TypeAgentRegistered, Actor: "x"}, {Type: TypeVouched}}, map[string][]byte{"k": []byte("v1")})
	if err != nil || evs[0].ID != 1 || evs[1].ID != 2 {
		t.Fatalf("%+v %v", evs, err)
	}
	if _, err := s.Append(nil, map[string][]byte{"k": []byte("v2"), "gone": nil}); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStore(dir, 5); !errors.Is(err, ErrStoreInUse) {
		t.Fatalf("a second open: %v, want ErrStoreInUse", err)
	}
	s.Close()

	s, err = OpenStore(dir, 5)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if f, l := s.Bounds(); f != 1 || l != 2 {
		t.Fatalf("reopened bounds %d %d", f, l)
	}
	if v, _ := s.Meta("k"); string(v) != "v2" {
		t.Fatalf("meta %q", v)
	}
	e, ok, err := s.Get(1)
	if err != nil || !ok || e.Actor != "x" || e.Type != TypeAgentRegistered {
		t.Fatalf("Get: %+v %v %v", e, ok, err)
	}
	for i := 0; i < 5; i++ {
		if _, err := s.Append([]Event{{Type: TypeReviewed}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if f, l := s.Bounds(); f != 3 || l != 7 {
		t.Fatalf("bounds after retention %d %d, want 3 7", f, l)
	}
	if _, ok, _ := s.Get(2); ok {
		t.Fatal("event 2 outlived the retention")
	}
	page, err := s.Range(4, 2)
	if err != nil || len(page) != 2 || page[0].ID != 5 || page[1].ID != 6 {
		t.Fatalf("Range: %+v %v", page, err)
	}
	page, _ = s.Range(0, 100)
	if len(page) != 5 || page[0].ID != 3 {
		t.Fatalf("Range from 0: %+v", page)
	}
}
