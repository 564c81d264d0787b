package faucet

import (
	"testing"
	"time"
)

func TestWindow(t *testing.T) {
	now := time.Unix(1000, 0)
	w := newWindow(2, time.Hour)
	w.now = func() time.Time { return now }
	undo1, _ := w.take("a")
	now = now.Add(10 * time.Minute)
	if u, _ := w.take("a"); u == nil {
		t.Fatal("second event refused")
	}
	if u, wait := w.take("a"); u != nil || wait != 50*time.Minute {
		t.Fatalf("third event: %v %v", u != nil, wait)
	}
	if u, _ := w.take("b"); u == nil {
		t.Fatal("another key refused")
	}
	undo1()
	if u, _ := w.take("a"); u == nil {
		t.Fatal("undone event still counted")
	}
	now = now.Add(2 * time.Hour)
	w.take("c")
	if len(w.events) != 1 {
		t.Fatalf("old keys not swept: %v", w.events)
	}
}

// seed keeps a key's events in order and at most max of them, the latest.
func TestWindowSeed(t *testing.T) {
	now := time.Unix(10_000, 0)
	w := newWindow(2, time.Hour)
	w.now = func() time.Time { return now }
	for _, m := range []int{50, 10, 30} {
		w.seed("a", now.Add(-time.Duration(m)*time.Minute))
	}
	if u, wait := w.take("a"); u != nil || wait != 30*time.Minute {
		t.Fatalf("after seeding 3 events into a window of 2: take gave %v, wait %v; want a refusal for 30m", u != nil, wait)
	}
}
