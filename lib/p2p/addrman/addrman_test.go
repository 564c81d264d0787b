package addrman

import (
	"encoding/json"
	"errors"
	"net/netip"
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
	return New(Config{Path: path, Now: c.now, Policy: Policy{AllowLocal: true}}), c, path
}

func TestPersistence(t *testing.T) {
	m, c, path := newTest(t)
	if err := m.Load(); err != nil {
		t.Fatalf("missing file: %v", err)
	}
	m.Add("10.0.0.1:38333", SourceAddr, "10.1.0.1:38333", c.t)
	m.Good("10.0.0.2:38333", SourceOutbound)
	if err := m.Pin("seed.example:28333", SourceConnect); err != nil {
		t.Fatal(err)
	}
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

	m2 := New(Config{Path: path, Now: c.now, Policy: Policy{AllowLocal: true}})
	if err := m2.Load(); err != nil {
		t.Fatal(err)
	}
	if m2.Len() != 2 { // the hostname is pinned again by the flag that names it
		t.Fatalf("reloaded %d addresses", m2.Len())
	}
	if e, ok := m2.Get("10.0.0.2:38333"); !ok || e.LastSuccess == 0 || e.Source != SourceOutbound || !e.Tried {
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
	m.Add("10.0.0.2:38333", SourceAddr, "10.1.0.1:38333", c.t)
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
	m.Add(a, SourceAddr, "10.1.0.1:1", c.t)
	if got := m.Candidates(10, nil, nil); len(got) != 1 {
		t.Fatalf("candidates %v", got)
	}
	var waits []time.Duration
	for i := 0; i < 12; i++ {
		m.Attempt(a)
		waits = append(waits, m.NextAttempt(a).Sub(c.t))
		if len(m.Candidates(10, nil, nil)) != 0 {
			t.Fatalf("attempt %d: candidate during backoff", i)
		}
		c.advance(waits[i])
		if len(m.Candidates(10, nil, nil)) != 1 {
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
	m.Pin("10.0.0.3:1", SourceConnect)
	for i := 0; i < 10; i++ {
		m.Attempt("10.0.0.3:1")
	}
	if w := m.NextAttempt("10.0.0.3:1").Sub(c.t); w != 30*time.Second {
		t.Fatalf("connect backoff %s", w)
	}
}

// addr is the IPv4 address a.b.c.d with port p.
func addr(a, b, c, d byte, p uint16) string {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{a, b, c, d}), p).String()
}

// TestOneRangeFillsOneBucket: 50 addresses in one /24, all from one source, take at most
// one bucket's worth of the table, and they push out nothing that other sources told us.
func TestOneRangeFillsOneBucket(t *testing.T) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	m := New(Config{Now: c.now})
	var honest []string
	for i := 0; i < 40; i++ {
		a := addr(byte(20+i), 1, 1, 1, 18333)
		if !m.Add(a, SourceAddr, addr(byte(100+i), 9, 9, 9, 18333), c.t) {
			t.Fatalf("honest address %s refused", a)
		}
		honest = append(honest, a)
	}
	honestBucket := map[string]int{}
	for _, a := range honest {
		honestBucket[a] = m.addrs[a].bucket
	}
	attacker := addr(66, 66, 66, 66, 18333)
	stored := 0
	for i := 0; i < 50; i++ {
		c.advance(time.Second) // each newer than the last: freshness buys nothing
		if m.Add(addr(5, 6, 7, byte(i+1), 18333), SourceAddr, attacker, c.t) {
			stored++
		}
	}
	inRange := 0
	m.mu.Lock()
	for a := range m.addrs {
		if strings.HasPrefix(a, "5.6.7.") {
			inRange++
		}
	}
	m.mu.Unlock()
	if inRange > m.cfg.BucketSize || inRange == 0 {
		t.Fatalf("%d addresses of one /24 from one source stored, bucket size %d", inRange, m.cfg.BucketSize)
	}
	// What the flood touched: the buckets holding its addresses. Every honest address in
	// another bucket (all but about 40/256 of them, the key being random) is still there.
	survivors := func(what string) {
		t.Helper()
		flooded := map[int]bool{}
		m.mu.Lock()
		for _, e := range m.addrs {
			if e.From == attacker {
				flooded[e.bucket] = true
			}
		}
		m.mu.Unlock()
		kept := 0
		for _, a := range honest {
			if _, ok := m.Get(a); ok {
				kept++
			} else if !flooded[honestBucket[a]] {
				t.Fatalf("honest address %s, in a bucket the %s did not reach, was pushed out", a, what)
			}
		}
		if kept < len(honest)/2 {
			t.Fatalf("the %s pushed out %d of %d honest addresses", what, len(honest)-kept, len(honest))
		}
	}
	survivors("flood of one /24")
	// One source sending addresses of many ranges reaches at most newBucketsPerSourceGroup
	// buckets.
	for i := 0; i < 4000; i++ {
		m.Add(addr(byte(1+i%200), byte(i/200), 1, 1, 18333), SourceAddr, attacker, c.t)
	}
	used := map[int]bool{}
	m.mu.Lock()
	for _, e := range m.addrs {
		if e.From == attacker {
			used[e.bucket] = true
		}
	}
	m.mu.Unlock()
	if len(used) > newBucketsPerSourceGroup {
		t.Fatalf("one source reached %d buckets, bound %d", len(used), newBucketsPerSourceGroup)
	}
	survivors("wide flood")
}

// TestTotalBounded: however many sources and ranges, the tables hold at most their size.
func TestTotalBounded(t *testing.T) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	m := New(Config{Now: c.now, NewBuckets: 8, TriedBuckets: 4, BucketSize: 4})
	for i := 0; i < 3000; i++ {
		a := addr(byte(1+i%220), byte(i/220), byte(i), 1, 18333)
		m.Add(a, SourceAddr, addr(byte(1+i%97), byte(i%13), 1, 1, 1), c.t)
		if i%3 == 0 {
			m.Good(a, SourceOutbound)
		}
	}
	n, tr := m.TableLen()
	if n > 8*4 || tr > 4*4 || m.Len() != n+tr {
		t.Fatalf("new %d (bound 32), tried %d (bound 16), len %d", n, tr, m.Len())
	}
	if tr == 0 || n == 0 {
		t.Fatalf("new %d, tried %d: both tables should be in use", n, tr)
	}
}

// TestCandidatesDistinctGroups: outbound candidates are of distinct network groups, none
// of a group already connected, and pinned addresses are not drawn.
func TestCandidatesDistinctGroups(t *testing.T) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	m := New(Config{Now: c.now})
	for i := 0; i < 50; i++ { // one /24 (one /16 group), many sources
		m.Add(addr(5, 6, 7, byte(i+1), 18333), SourceAddr, addr(byte(100+i), 1, 1, 1, 1), c.t)
	}
	for _, a := range []string{addr(8, 8, 1, 1, 18333), addr(9, 9, 1, 1, 18333), addr(11, 1, 1, 1, 18333)} {
		m.Add(a, SourceAddr, addr(77, 1, 1, 1, 1), c.t)
	}
	m.Good(addr(12, 1, 1, 1, 18333), SourceOutbound)
	m.Pin(addr(13, 1, 1, 1, 18333), SourceAddnode)
	for round := 0; round < 20; round++ {
		got := m.Candidates(16, nil, nil)
		if len(got) != 5 {
			t.Fatalf("candidates %v: want one of each of the 5 groups", got)
		}
		groups := map[string]bool{}
		for _, a := range got {
			if groups[Group(a)] {
				t.Fatalf("two candidates of group %s: %v", Group(a), got)
			}
			groups[Group(a)] = true
			if a == addr(13, 1, 1, 1, 18333) {
				t.Fatal("a pinned address was drawn")
			}
		}
		if got[0] != addr(12, 1, 1, 1, 18333) {
			t.Fatalf("the tried address is not first: %v", got)
		}
	}
	got := m.Candidates(16, nil, map[string]bool{"5.6.0.0/16": true, "8.8.0.0/16": true})
	for _, a := range got {
		if g := Group(a); g == "5.6.0.0/16" || g == "8.8.0.0/16" {
			t.Fatalf("drew %s of a group in use", a)
		}
	}
	if len(got) != 3 {
		t.Fatalf("candidates %v", got)
	}
}

func TestPolicyAndGroups(t *testing.T) {
	main, local := Policy{}, Policy{AllowLocal: true}
	for _, tc := range []struct {
		addr        string
		main, local bool
	}{
		{"8.8.8.8:18333", true, true},
		{"[2a01:4f8::1]:18333", true, true},
		{"10.1.2.3:18333", false, true},
		{"192.168.1.1:18333", false, true},
		{"127.0.0.1:38333", false, true},
		{"[::1]:38333", false, true},
		{"100.64.1.1:18333", false, false},
		{"169.254.1.1:18333", false, false},
		{"0.0.0.0:18333", false, false},
		{"224.0.0.1:18333", false, false},
		{"8.8.8.8:0", false, false},
		{"[2001:db8::1]:18333", false, false},
	} {
		ap := netip.MustParseAddrPort(tc.addr)
		if main.Acceptable(ap) != tc.main || local.Acceptable(ap) != tc.local {
			t.Errorf("%s: mainnet %v (want %v), local %v (want %v)", tc.addr, main.Acceptable(ap), tc.main, local.Acceptable(ap), tc.local)
		}
	}
	m := New(Config{})
	if m.Add("10.1.2.3:18333", SourceAddr, "8.8.8.8:1", time.Now()) || m.Add("127.0.0.1:18333", SourceAddr, "", time.Now()) {
		t.Fatal("mainnet policy stored a private address")
	}
	for _, tc := range [][2]string{
		{"1.2.3.4:1", "1.2.0.0/16"}, {"1.2.200.9:7", "1.2.0.0/16"}, {"[2a01:4f8:1:2::3]:5", "2a01:4f8::/32"},
		{"127.0.0.1:38333", "127.0.0.1:38333"}, {"seed.example:1", "host:seed.example"},
	} {
		if g := Group(tc[0]); g != tc[1] {
			t.Errorf("Group(%s) = %s, want %s", tc[0], g, tc[1])
		}
	}
	if Group("127.0.0.1:1") == Group("127.0.0.1:2") {
		t.Fatal("loopback nodes on two ports share a group")
	}
}

func TestSample(t *testing.T) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	m := New(Config{Now: c.now})
	for i := 0; i < 10; i++ {
		m.Add(addr(byte(20+i), 1, 1, 1, 1), SourceAddr, addr(byte(100+i), 1, 1, 1, 1), c.t)
	}
	if got := m.Sample(1000, 23); len(got) != 10 {
		t.Fatalf("a small table is sent whole: %d", len(got))
	}
	for i := 0; i < 2000; i++ {
		m.Add(addr(byte(1+i%200), byte(i/200), 1, 1, 1), SourceAddr, addr(byte(1+i%50), byte(i%7), 1, 1, 1), c.t)
	}
	n := m.Len()
	if got := m.Sample(1000, 23); len(got) != min(1000, max(n*23/100, 64)) {
		t.Fatalf("sample %d of %d", len(got), n)
	}
	if got := m.Sample(5, 0); len(got) != 5 {
		t.Fatalf("sample %d, want 5", len(got))
	}
}
