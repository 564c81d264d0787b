package p2p

import (
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/types"
)

func mustSubnet(t *testing.T, s string) netip.Prefix {
	t.Helper()
	p, err := ParseSubnet(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBanManager: bans by subnet with Core's add/remove errors, persisted in banlist.json
// and reloaded without the expired ones; discouragement in memory for its duration, never
// for loopback or whitelisted addresses; every verdict logged at info with its reason.
func TestBanManager(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	path := filepath.Join(t.TempDir(), "banlist.json")
	lb := &logBuf{}
	log := slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelInfo}))
	m := NewBanManager(path, []netip.Prefix{mustSubnet(t, "198.51.100.0/24")}, 0, log)
	m.now = func() time.Time { return now }

	for in, want := range map[string]string{"10.1.2.3": "10.1.2.3/32", "10.1.2.3/8": "10.0.0.0/8", "[2001:db8::1]": "2001:db8::1/128",
		"::ffff:10.0.0.1": "10.0.0.1/32", "2001:db8::/32": "2001:db8::/32"} {
		if p, err := ParseSubnet(in); err != nil || p.String() != want {
			t.Errorf("ParseSubnet(%q) = %v, %v; want %s", in, p, err, want)
		}
	}
	for _, bad := range []string{"", "10.1.2", "host.example", "10.0.0.0/33", "fe80::1%eth0"} {
		if _, err := ParseSubnet(bad); err == nil {
			t.Errorf("ParseSubnet(%q) accepted", bad)
		}
	}

	if err := m.Ban(mustSubnet(t, "10.0.0.0/8"), now.Add(time.Hour), "manual"); err != nil {
		t.Fatal(err)
	}
	if err := m.Ban(mustSubnet(t, "10.0.0.0/8"), now.Add(2*time.Hour), "again"); !errors.Is(err, ErrAlreadyBanned) || !errors.Is(err, reason.AlreadyBanned) {
		t.Fatalf("second ban: %v", err)
	}
	if err := m.Ban(mustSubnet(t, "2001:db8::5"), now.Add(time.Minute), "short"); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Banned(netip.MustParseAddr("10.200.1.1")); !ok {
		t.Fatal("an address in a banned /8 is not banned")
	}
	if _, ok := m.Banned(netip.MustParseAddr("::ffff:10.200.1.1")); !ok {
		t.Fatal("an IPv4-mapped address in a banned /8 is not banned")
	}
	if _, ok := m.Banned(netip.MustParseAddr("11.0.0.1")); ok {
		t.Fatal("an address outside is banned")
	}
	if err := m.Unban(mustSubnet(t, "10.1.0.0/16")); !errors.Is(err, ErrNotBanned) || !errors.Is(err, reason.NotBanned) {
		t.Fatalf("unban of a subnet not banned as such: %v", err)
	}
	if err := m.Save(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(raw), `"address": "10.0.0.0/8"`) || !strings.Contains(string(raw), `"banned_until"`) {
		t.Fatalf("banlist.json %s (%v)", raw, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}

	// Reloaded two minutes later: the one-minute ban has ended.
	m2 := NewBanManager(path, nil, 0, nil)
	m2.now = func() time.Time { return now.Add(2 * time.Minute) }
	if err := m2.Load(); err != nil {
		t.Fatal(err)
	}
	if l := m2.List(); len(l) != 1 || l[0].Subnet.String() != "10.0.0.0/8" || l[0].Reason != "manual" || !l[0].Created.Equal(now) {
		t.Fatalf("reloaded %+v", l)
	}
	m2.Clear()
	if len(m2.List()) != 0 {
		t.Fatal("clear")
	}

	// Discouragement: in memory, for 24 h; loopback and whitelisted addresses are exempt.
	bad := netip.MustParseAddr("203.0.113.9")
	if !m.Discourage(bad, "203.0.113.9:1234", "invalid block") || !m.Discouraged(bad) {
		t.Fatal("not discouraged")
	}
	for _, ip := range []string{"127.0.0.1", "::1", "198.51.100.77"} {
		if m.Discourage(netip.MustParseAddr(ip), ip, "invalid block") || m.Discouraged(netip.MustParseAddr(ip)) {
			t.Errorf("%s discouraged", ip)
		}
	}
	now = now.Add(24*time.Hour + time.Second)
	if m.Discouraged(bad) {
		t.Fatal("still discouraged after 24 h")
	}
	if !lb.Contains(`msg="peer discouraged"`) || !lb.Contains(`reason="invalid block"`) || !lb.Contains(`msg="subnet banned"`) ||
		!lb.Contains("misbehaving peer not discouraged: loopback or whitelisted") {
		t.Fatalf("log:\n%s", lb)
	}

	// A corrupt file is reported and the list starts empty.
	os.WriteFile(path, []byte("{nope"), 0o600)
	if err := NewBanManager(path, nil, 0, nil).Load(); !errors.Is(err, ErrBanlistCorrupt) {
		t.Fatalf("corrupt file: %v", err)
	}
}

// TestListenAddrs: the listening flags resolved per network.
func TestListenAddrs(t *testing.T) {
	cases := []struct {
		binds  []string
		net    *params.Network
		listen bool
		want   string
	}{
		{nil, params.Regtest, true, "127.0.0.1:38333"},
		{nil, params.Testnet, true, ":38333"},
		{nil, params.Mainnet, true, ":38333"},
		{nil, params.Mainnet, false, ""},
		{[]string{"10.0.0.5", "[::1]:9000", "0.0.0.0:1234", "::"}, params.Regtest, true, "10.0.0.5:38333 [::1]:9000 0.0.0.0:1234 [::]:38333"},
	}
	for _, c := range cases {
		got, err := ListenAddrs(c.binds, 38333, c.net, c.listen)
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("%v %s listen=%v: %v (%v), want %s", c.binds, c.net.Name, c.listen, got, err, c.want)
		}
	}
	for _, bad := range []string{"host.example", "1.2.3.4:99999", "1.2.3.4:x"} {
		if _, err := ListenAddrs([]string{bad}, 1, params.Regtest, true); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// nonLoopbackIP is an IPv4 address of this machine that is not loopback, or the test skips.
func nonLoopbackIP(t *testing.T) netip.Addr {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(ipn.IP); ok && ip.Unmap().Is4() && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() {
					return ip.Unmap()
				}
			}
		}
	}
	t.Skip("no non-loopback IPv4 address on this machine: the loopback exemption would hide discouragement")
	return netip.Addr{}
}

// TestInvalidBlockDiscourages: a peer at a real (non-loopback) address that sends an
// invalid block is discouraged, with the loopback exemption in force: the node logs it at
// info, will not dial the address, and it is not banned. The same peer from a --whitelist
// range is only disconnected.
func TestInvalidBlockDiscourages(t *testing.T) {
	ip := nonLoopbackIP(t)
	w := newWallet(41)
	for _, whitelisted := range []bool{false, true} {
		n := startNode(t, "N", nodeOpts{listen: netip.AddrPortFrom(ip, 0).String(), quiet: true, tweak: func(c *Config) {
			if whitelisted {
				c.Whitelist = []netip.Prefix{netip.PrefixFrom(ip, 32)}
			}
		}})
		n.mine(w, 1)
		r, err := dialRaw(t, netip.AddrPortFrom(ip, n.s.ListenPort()).String(), ip.String())
		if err != nil {
			t.Fatal(err)
		}
		if err := r.handshake(rawVersion(0, 4242)); err != nil {
			t.Fatal(err)
		}
		b := n.nextBlock(w)
		b.Transactions[0].Outputs[0].Value += 1 // pays more than subsidy + fees
		b.Header.MerkleRoot = types.MerkleRoot(b.TxIDs())
		if err := types.SolveBlock(b, 1<<32); err != nil {
			t.Fatal(err)
		}
		r.send(&wire.MsgBlock{Block: b})
		if !r.closed(10 * time.Second) {
			t.Fatal("the peer that sent an invalid block was kept")
		}
		if whitelisted {
			waitFor(t, 5*time.Second, "the exemption logged", func() bool {
				return n.log.Contains("misbehaving peer not discouraged: loopback or whitelisted")
			})
			if n.s.bans.Discouraged(ip) {
				t.Fatal("a whitelisted peer was discouraged")
			}
			continue
		}
		waitFor(t, 5*time.Second, "the discouragement", func() bool { return n.s.bans.Discouraged(ip) })
		if !n.log.Contains(`level=INFO msg="peer discouraged"`) || !n.log.Contains("invalid block") {
			t.Fatalf("the discouragement is not logged at info with its reason:\n%s", n.log)
		}
		if _, banned := n.s.bans.Banned(ip); banned {
			t.Fatal("discouragement became a ban")
		}
		if !n.s.cm.skipDial(netip.AddrPortFrom(ip, 38333).String()) {
			t.Fatal("a discouraged address would be dialled")
		}
	}
}

// BenchmarkBannedFullList is the check every accepted connection and every dial makes,
// against a full ban list (10,000 subnets) and a full discouraged set (50,000 addresses).
func BenchmarkBannedFullList(b *testing.B) {
	m := NewBanManager("", nil, 0, nil)
	m.exemptLoopback = false
	until := time.Now().Add(time.Hour)
	for i := 0; i < maxBans; i++ {
		m.Ban(netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 0}), 24), until, "bench")
	}
	for i := 0; i < maxDiscouraged; i++ {
		m.Discourage(netip.AddrFrom4([4]byte{172, 16 + byte(i>>16), byte(i >> 8), byte(i)}), "", "bench")
	}
	ip := netip.MustParseAddr("192.0.2.1") // in no list: the whole ban list is scanned
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, banned := m.Banned(ip); banned || m.Discouraged(ip) {
			b.Fatal("listed")
		}
	}
}
