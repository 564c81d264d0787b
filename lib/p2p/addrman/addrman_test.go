package addrman

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTest(t *testing.T) (*Manager, *clock, string) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	path := filepath.Join(t.TempDir(), "peers.json")
	return New(Config{Path: path, Now: c.now, MaxAddrs: 5}), c, path
}

func TestPersistence(t *testing.T) {
	m, c, path := newTest(t)
	if err := m.Load(); err != nil {
		t.Fatalf("missing file: %v", err)
	}
	m.Add("10.0.0.1:38333", SourceAddr, c.t)
	m.Good("10.0.0.2:38333", SourceOutbound)
	m.Add("seed.example:28333", SourceConnect, c.t)
	m.Ban(netip.MustParseAddr("10.9.9.9"), time.Hour, "invalid block")
	m.Ban(netip.MustParseAddr("::ffff:10.9.9.8"), time.Minute, "bad checksum")
	if err := m.Save(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f file
	if err := json.Unmarshal(raw, &f); err != nil || f.Version != FileVersion || len(f.Peers) != 3 || len(f.Bans) != 2 {
		t.Fatalf("peers.json %s (err %v)", raw, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}

	c.advance(2 * time.Minute) // the one-minute ban has ended
	m2 := New(Config{Path: path, Now: c.now})
	if err := m2.Load(); err != nil {
		t.Fatal(err)
	}
	if m2.Len() != 3 {
		t.Fatalf("reloaded %d addresses", m2.Len())
	}
	if e, ok := m2.Get("10.0.0.2:38333"); !ok || e.LastSuccess == 0 || e.Source != SourceOutbound {
		t.Fatalf("entry %+v", e)
	}
	if b, ok := m2.Banned(netip.MustParseAddr("10.9.9.9")); !ok || b.Reason != "invalid block" {
		t.Fatalf("ban lost: %+v", b)
	}
	if _, ok := m2.Banned(netip.MustParseAddr("10.9.9.8")); ok {
		t.Fatal("expired ban reloaded")
	}
	if len(m2.Bans()) != 1 {
		t.Fatalf("bans %+v", m2.Bans())
	}
}

func TestCorruptFile(t *testing.T) {
	m, _, path := newTest(t)
	os.WriteFile(path, []byte("{not json"), 0o600)
	if err := m.Load(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err %v", err)
	}
	os.WriteFile(path, []byte(`{"version": 9}`), 0o600)
	if err := m.Load(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err %v", err)
	}
}

func TestBackoff(t *testing.T) {
	m, c, _ := newTest(t)
	a := "10.0.0.1:38333"
	m.Add(a, SourceAddr, c.t)
	if got := m.Candidates(10, nil); len(got) != 1 {
		t.Fatalf("candidates %v", got)
	}
	var waits []time.Duration
	for i := 0; i < 12; i++ {
		m.Attempt(a)
		waits = append(waits, m.NextAttempt(a).Sub(c.t))
		if len(m.Candidates(10, nil)) != 0 {
			t.Fatalf("attempt %d: candidate during backoff", i)
		}
		c.advance(waits[i])
		if len(m.Candidates(10, nil)) != 1 {
			t.Fatalf("attempt %d: not a candidate after %s", i, waits[i])
		}
	}
	if waits[0] != time.Second || waits[1] != 2*time.Second || waits[2] != 4*time.Second || waits[11] != 10*time.Minute {
		t.Fatalf("waits %v", waits)
	}
	m.Good(a, SourceOutbound)
	if !m.NextAttempt(a).IsZero() {
		t.Fatal("success did not reset the backoff")
	}
	// --connect addresses back off to at most ConnectBackoffMax.
	m.Add("10.0.0.3:1", SourceConnect, c.t)
	for i := 0; i < 10; i++ {
		m.Attempt("10.0.0.3:1")
	}
	if w := m.NextAttempt("10.0.0.3:1").Sub(c.t); w != 30*time.Second {
		t.Fatalf("connect backoff %s", w)
	}
}

func TestBoundsAndOrder(t *testing.T) {
	m, c, _ := newTest(t)
	m.Add("10.0.0.100:1", SourceConnect, c.t)
	for i := 0; i < 20; i++ {
		c.advance(time.Second)
		m.Add(fmt.Sprintf("10.0.0.%d:1", i), SourceAddr, c.t)
	}
	if m.Len() != 5 {
		t.Fatalf("%d addresses, bound 5", m.Len())
	}
	if _, ok := m.Get("10.0.0.100:1"); !ok {
		t.Fatal("a --connect address was evicted")
	}
	if _, ok := m.Get("10.0.0.19:1"); !ok {
		t.Fatal("the newest address was evicted")
	}
	m.Good("10.0.0.17:1", SourceOutbound)
	got := m.Candidates(2, func(a string) bool { return a == "10.0.0.19:1" })
	if len(got) != 2 || got[0] != "10.0.0.17:1" || got[1] != "10.0.0.18:1" {
		t.Fatalf("candidates %v", got)
	}
	for _, bad := range []string{"", "host", "1.2.3.4:0", "1.2.3.4:99999", ":5"} {
		if m.Add(bad, SourceAddr, c.t) {
			t.Errorf("accepted %q", bad)
		}
	}
	b := New(Config{MaxBans: 3, Now: c.now})
	for i := 0; i < 10; i++ {
		b.Ban(netip.AddrFrom4([4]byte{10, 1, 1, byte(i)}), time.Duration(i+1)*time.Hour, "x")
	}
	if n := len(b.Bans()); n != 3 {
		t.Fatalf("%d bans, bound 3", n)
	}
	if _, ok := b.Banned(netip.AddrFrom4([4]byte{10, 1, 1, 9})); !ok {
		t.Fatal("the longest ban was evicted")
	}
	b.Unban(netip.AddrFrom4([4]byte{10, 1, 1, 9}))
	if _, ok := b.Banned(netip.AddrFrom4([4]byte{10, 1, 1, 9})); ok {
		t.Fatal("unban")
	}
}
