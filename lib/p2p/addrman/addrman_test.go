package addrman

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	if err := m.Save(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f file
	if err := json.Unmarshal(raw, &f); err != nil || f.Version != FileVersion || len(f.Peers) != 3 || strings.Contains(string(raw), "bans") {
		t.Fatalf("peers.json %s (err %v)", raw, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}

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
}

// TestOldFileWithBans: a peers.json written before bans moved to banlist.json loads (its
// addresses kept, its automatic bans dropped) and the next save leaves addresses only.
func TestOldFileWithBans(t *testing.T) {
	m, c, path := newTest(t)
	old := `{"version": 1, "peers": [{"addr": "10.0.0.1:38333", "source": "addr", "last_seen": 1799999999}],
	 "bans": [{"ip": "127.0.0.1", "until": 1900000000, "reason": "wire: wrong network magic"}]}`
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.Load(); err != nil {
		t.Fatalf("an old peers.json with bans: %v", err)
	}
	if _, ok := m.Get("10.0.0.1:38333"); !ok || m.Len() != 1 {
		t.Fatalf("addresses of the old file lost: %d", m.Len())
	}
	m.Add("10.0.0.2:38333", SourceAddr, c.t)
	if err := m.Save(); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), "bans") || !strings.Contains(string(raw), "10.0.0.1:38333") {
		t.Fatalf("saved %s", raw)
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
}
