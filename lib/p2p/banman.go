package p2p

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/cointoolkit/coin/lib/atomicfile"
	"github.com/cointoolkit/coin/lib/reason"
)

// The ban manager: who may not connect, in the manner of Bitcoin Core's BanMan. Two lists,
// kept apart because they differ in who decides and how long they last:
//
//   - Bans are the operator's (setban): subnets (a single address is a /32 or /128), each
//     with its end, persisted in <data-dir>/banlist.json. A banned address's connections are
//     refused at accept, it is never dialled, and setban disconnects its peers at once.
//   - Discouragement is the node's own verdict on a peer that sent consensus-invalid data
//     (its ban score reached the threshold): the address is kept in memory for
//     DiscourageDuration (24 h), is not dialled, and its inbound connections take only free
//     slots and are evicted first. It is not persisted: a restart forgets it, as in Core,
//     so a mistake of the node's (a bug, a rule change) never locks a peer out for good.
//
// Loopback peers and those in a --whitelist range are never discouraged automatically:
// they are disconnected when they misbehave, nothing more.

// Errors of the ban list.
var (
	// ErrAlreadyBanned: setban add for a subnet banned already (Core's "IP/Subnet already banned").
	ErrAlreadyBanned error = &netError{reason.AlreadyBanned, "IP/Subnet already banned"}
	// ErrNotBanned: setban remove for a subnet that is not banned (Core's "Unban failed").
	ErrNotBanned error = &netError{reason.NotBanned, "unban failed: IP/Subnet was not previously manually banned"}
	// ErrBanlistCorrupt: banlist.json does not parse; the list starts empty and the next
	// save replaces the file.
	ErrBanlistCorrupt = errors.New("p2p: banlist.json is corrupt")
)

// Ban is one manual ban.
type Ban struct {
	Subnet  netip.Prefix
	Created time.Time
	Until   time.Time
	Reason  string
}

// banFile is the layout of banlist.json (version 1). Field names are Core's listbanned ones.
type banFile struct {
	Version int          `json:"version"`
	Banned  []banFileRow `json:"banned"`
}

type banFileRow struct {
	Address     string `json:"address"`
	BanCreated  int64  `json:"ban_created"`
	BannedUntil int64  `json:"banned_until"`
	Reason      string `json:"reason,omitempty"`
}

// banlistVersion is the version of banlist.json.
const banlistVersion = 1

// Bounds of the lists: past them the entry that ends first is dropped.
const (
	maxBans        = 10_000
	maxDiscouraged = 50_000
)

// BanManager keeps the bans and the discouraged addresses. It is safe for concurrent use.
type BanManager struct {
	path          string // banlist.json; empty: in memory only
	whitelist     []netip.Prefix
	discourageFor time.Duration
	log           *slog.Logger
	now           func() time.Time
	// exemptLoopback is true except in tests that play hostile peers from loopback addresses.
	exemptLoopback bool

	mu   sync.Mutex
	bans map[netip.Prefix]Ban
	// lens counts the bans per prefix length (IPv4 lengths as 0..32, IPv6 as 100..228), so
	// Banned looks an address up once per length in use instead of scanning every ban.
	lens        map[int]int
	discouraged map[netip.Addr]time.Time // → until
	dirty       bool
}

// NewBanManager returns an empty manager; Load reads path.
func NewBanManager(path string, whitelist []netip.Prefix, discourageFor time.Duration, log *slog.Logger) *BanManager {
	if discourageFor <= 0 {
		discourageFor = 24 * time.Hour
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	wl := make([]netip.Prefix, len(whitelist))
	for i, p := range whitelist {
		wl[i] = canonicalPrefix(p)
	}
	return &BanManager{path: path, whitelist: wl, discourageFor: discourageFor, log: log, now: time.Now,
		exemptLoopback: true, bans: make(map[netip.Prefix]Ban), lens: make(map[int]int), discouraged: make(map[netip.Addr]time.Time)}
}

// lenKey is the key of a prefix's length in BanManager.lens.
func lenKey(p netip.Prefix) int {
	if p.Addr().Is4() {
		return p.Bits()
	}
	return 100 + p.Bits()
}

// putLocked and dropLocked add and remove a ban, keeping lens (m.mu held).
func (m *BanManager) putLocked(b Ban) {
	if _, ok := m.bans[b.Subnet]; !ok {
		m.lens[lenKey(b.Subnet)]++
	}
	m.bans[b.Subnet] = b
}

func (m *BanManager) dropLocked(p netip.Prefix) bool {
	if _, ok := m.bans[p]; !ok {
		return false
	}
	delete(m.bans, p)
	if k := lenKey(p); m.lens[k] <= 1 {
		delete(m.lens, k)
	} else {
		m.lens[k]--
	}
	return true
}

// canonicalPrefix unmaps an IPv4-mapped prefix and zeroes the host bits.
func canonicalPrefix(p netip.Prefix) netip.Prefix {
	a, bits := p.Addr(), p.Bits()
	if a.Is4In6() {
		a, bits = a.Unmap(), max(bits-96, 0)
	}
	return netip.PrefixFrom(a, bits).Masked()
}

// ParseSubnet reads an address or a CIDR range ("10.0.0.1", "10.0.0.0/8", "2001:db8::/32",
// "[::1]"), as setban and --whitelist take them.
func ParseSubnet(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return canonicalPrefix(p), nil
	}
	if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		s = s[1 : len(s)-1]
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		if len(s) > 64 {
			s = s[:64] + "..."
		}
		return netip.Prefix{}, fmt.Errorf("invalid IP/subnet %q: want an address (1.2.3.4, ::1) or a CIDR range (1.2.3.0/24)", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// Load reads banlist.json; a missing file is no error. Expired bans are dropped.
func (m *BanManager) Load() error {
	if m.path == "" {
		return nil
	}
	raw, err := os.ReadFile(m.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("p2p: %w", err)
	}
	var f banFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return fmt.Errorf("%w: %v", ErrBanlistCorrupt, err)
	}
	if f.Version != banlistVersion {
		return fmt.Errorf("%w: version %d, want %d", ErrBanlistCorrupt, f.Version, banlistVersion)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for _, r := range f.Banned {
		p, err := ParseSubnet(r.Address)
		until := time.Unix(r.BannedUntil, 0)
		if err != nil || !until.After(now) {
			continue
		}
		m.putLocked(Ban{Subnet: p, Created: time.Unix(r.BanCreated, 0), Until: until, Reason: r.Reason})
	}
	m.boundLocked()
	return nil
}

// Save writes banlist.json atomically when the list changed since the last Save.
func (m *BanManager) Save() error {
	if m.path == "" {
		return nil
	}
	m.mu.Lock()
	if !m.dirty {
		m.mu.Unlock()
		return nil
	}
	m.dirty = false
	list := m.listLocked()
	m.mu.Unlock()
	f := banFile{Version: banlistVersion, Banned: make([]banFileRow, 0, len(list))}
	for _, b := range list {
		f.Banned = append(f.Banned, banFileRow{Address: b.Subnet.String(), BanCreated: b.Created.Unix(),
			BannedUntil: b.Until.Unix(), Reason: b.Reason})
	}
	raw, err := json.MarshalIndent(f, "", "  ")
	if err == nil {
		err = atomicfile.Write(m.path, append(raw, '\n'))
	}
	if err != nil {
		m.mu.Lock()
		m.dirty = true
		m.mu.Unlock()
		return fmt.Errorf("p2p: saving banlist.json: %w", err)
	}
	return nil
}

// Ban bans subnet until the given time (setban add). A subnet banned already is refused
// with ErrAlreadyBanned, as in Core.
func (m *BanManager) Ban(subnet netip.Prefix, until time.Time, reason string) error {
	subnet = canonicalPrefix(subnet)
	m.mu.Lock()
	now := m.now()
	if b, ok := m.bans[subnet]; ok && b.Until.After(now) {
		m.mu.Unlock()
		return ErrAlreadyBanned
	}
	m.putLocked(Ban{Subnet: subnet, Created: now, Until: until, Reason: reason})
	m.dirty = true
	m.boundLocked()
	m.mu.Unlock()
	m.log.Info("subnet banned", "subnet", subnet.String(), "until", until.UTC().Format(time.RFC3339), "reason", reason)
	return nil
}

// Unban lifts the ban of exactly subnet (setban remove); ErrNotBanned when there is none.
func (m *BanManager) Unban(subnet netip.Prefix) error {
	subnet = canonicalPrefix(subnet)
	m.mu.Lock()
	ok := m.dropLocked(subnet)
	m.dirty = m.dirty || ok
	m.mu.Unlock()
	if !ok {
		return ErrNotBanned
	}
	m.log.Info("subnet unbanned", "subnet", subnet.String())
	return nil
}

// Clear lifts every ban (clearbanned). Discouragement stays: it is the node's, not the
// operator's (as in Core, where clearbanned does not clear it either).
func (m *BanManager) Clear() {
	m.mu.Lock()
	n := len(m.bans)
	clear(m.bans)
	clear(m.lens)
	m.dirty = m.dirty || n > 0
	m.mu.Unlock()
	m.log.Info("ban list cleared", "bans", n)
}

// List is the bans in force, by subnet.
func (m *BanManager) List() []Ban {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.listLocked()
}

func (m *BanManager) listLocked() []Ban {
	now := m.now()
	out := make([]Ban, 0, len(m.bans))
	for k, b := range m.bans {
		if !b.Until.After(now) {
			m.dropLocked(k)
			m.dirty = true
			continue
		}
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Subnet, out[j].Subnet
		if c := a.Addr().Compare(b.Addr()); c != 0 {
			return c < 0
		}
		return a.Bits() < b.Bits()
	})
	return out
}

// boundLocked drops the bans that end first beyond maxBans.
func (m *BanManager) boundLocked() {
	for len(m.bans) > maxBans {
		var first *Ban
		for _, b := range m.bans {
			if first == nil || b.Until.Before(first.Until) {
				b := b
				first = &b
			}
		}
		m.dropLocked(first.Subnet)
	}
}

// Banned reports whether ip is in a banned subnet, with the ban.
func (m *BanManager) Banned(ip netip.Addr) (Ban, bool) {
	ip = ip.Unmap()
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for k := range m.lens {
		bits := k
		if !ip.Is4() {
			bits = k - 100
		}
		if (k >= 100) == ip.Is4() {
			continue // the other family's lengths
		}
		p, err := ip.Prefix(bits)
		if err != nil {
			continue
		}
		b, ok := m.bans[p]
		if !ok {
			continue
		}
		if !b.Until.After(now) {
			m.dropLocked(p)
			m.dirty = true
			continue
		}
		return b, true
	}
	return Ban{}, false
}

// Exempt reports whether ip is never discouraged automatically: loopback, or in a
// --whitelist range.
func (m *BanManager) Exempt(ip netip.Addr) bool {
	ip = ip.Unmap()
	if m.exemptLoopback && ip.IsLoopback() {
		return true
	}
	for _, p := range m.whitelist {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Discourage marks ip discouraged for DiscourageDuration, logging why at info, unless it
// is exempt (then it logs that and returns false).
func (m *BanManager) Discourage(ip netip.Addr, peer, reason string) bool {
	ip = ip.Unmap()
	if !ip.IsValid() {
		return false
	}
	if m.Exempt(ip) {
		m.log.Info("misbehaving peer not discouraged: loopback or whitelisted", "peer", peer, "reason", reason)
		return false
	}
	m.mu.Lock()
	now := m.now()
	m.discouraged[ip] = now.Add(m.discourageFor)
	if len(m.discouraged) > maxDiscouraged {
		for k, until := range m.discouraged {
			if !until.After(now) || len(m.discouraged) > maxDiscouraged {
				delete(m.discouraged, k)
			}
		}
	}
	m.mu.Unlock()
	m.log.Info("peer discouraged", "peer", peer, "ip", ip.String(), "for", m.discourageFor.String(), "reason", reason)
	return true
}

// Discouraged reports whether ip is discouraged now.
func (m *BanManager) Discouraged(ip netip.Addr) bool {
	ip = ip.Unmap()
	m.mu.Lock()
	defer m.mu.Unlock()
	until, ok := m.discouraged[ip]
	if ok && !until.After(m.now()) {
		delete(m.discouraged, ip)
		return false
	}
	return ok
}
