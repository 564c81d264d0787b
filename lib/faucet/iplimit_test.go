package faucet

import (
	"testing"
	"time"
)

// A client's bucket refills, idle buckets are swept, and new clients share one overflow
// bucket when the map is full.
func TestIPLimiterRefillsAndSweeps(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewClientLimiter(60, 2)
	l.now = func() time.Time { return now }
	if ok, _ := l.Allow("a"); !ok {
		t.Fatal()
	}
	if ok, _ := l.Allow("a"); !ok {
		t.Fatal()
	}
	if ok, wait := l.Allow("a"); ok || wait <= 0 || wait > time.Second {
		t.Fatalf("third: %v %v", ok, wait)
	}
	now = now.Add(time.Second)
	if ok, _ := l.Allow("a"); !ok {
		t.Fatal("no refill")
	}
	now = now.Add(time.Hour)
	l.Allow("b")
	if _, ok := l.buckets["a"]; ok {
		t.Fatal("idle bucket not swept")
	}
	l.max = 1
	if ok, _ := l.Allow("c"); !ok { // overflow bucket
		t.Fatal()
	}
}
