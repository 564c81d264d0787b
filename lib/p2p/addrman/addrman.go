package addrman

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Sources of an address.
const (
	SourceConnect  = "connect"  // given with --connect
	SourceAddr     = "addr"     // learned from a peer's addr message
	SourceOutbound = "outbound" // an outbound connection to it succeeded
)

// FileVersion is the version of the peers.json layout.
const FileVersion = 1

// Entry is one known peer address.
type Entry struct {
	Addr        string `json:"addr"`
	Source      string `json:"source"`
	LastSeen    int64  `json:"last_seen,omitempty"`    // unix seconds: announced or connected
	LastSuccess int64  `json:"last_success,omitempty"` // last completed handshake
	LastAttempt int64  `json:"last_attempt,omitempty"`
	Attempts    int    `json:"attempts,omitempty"` // attempts since the last success
}

// file is the layout of peers.json: addresses only. Files written before bans moved to
// banlist.json (lib/p2p's ban manager) also hold a "bans" list; it is ignored when read and
// gone at the next save: those bans were all automatic (ban score), which is now in-memory
// discouragement, never a lasting ban.
type file struct {
	Version int     `json:"version"`
	Peers   []Entry `json:"peers"`
}

// Config tunes a Manager. Zero values take the defaults.
type Config struct {
	// Path is the peers.json file; empty keeps everything in memory.
	Path     string
	MaxAddrs int // default 2,000
	// BackoffBase is the wait after the first failed attempt; it doubles with each further
	// failure up to BackoffMax (learned addresses) or ConnectBackoffMax (--connect ones).
	BackoffBase       time.Duration // default 1 s
	BackoffMax        time.Duration // default 10 min
	ConnectBackoffMax time.Duration // default 30 s
	Now               func() time.Time
}

// Manager keeps known addresses. It is safe for concurrent use.
type Manager struct {
	cfg   Config
	mu    sync.Mutex
	addrs map[string]*Entry
	dirty bool
}

// New returns an empty manager; call Load to read cfg.Path.
func New(cfg Config) *Manager {
	if cfg.MaxAddrs <= 0 {
		cfg.MaxAddrs = 2000
	}
	if cfg.BackoffBase <= 0 {
		cfg.BackoffBase = time.Second
	}
	if cfg.BackoffMax <= 0 {
		cfg.BackoffMax = 10 * time.Minute
	}
	if cfg.ConnectBackoffMax <= 0 {
		cfg.ConnectBackoffMax = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Manager{cfg: cfg, addrs: make(map[string]*Entry)}
}

// ErrCorrupt is returned by Load for a peers.json that does not parse; the manager stays
// empty and the next Save replaces the file.
var ErrCorrupt = errors.New("addrman: peers.json is corrupt")

// Load reads cfg.Path. A missing file is not an error.
func (m *Manager) Load() error {
	if m.cfg.Path == "" {
		return nil
	}
	raw, err := os.ReadFile(m.cfg.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("addrman: %w", err)
	}
	var f file
	if err := json.Unmarshal(raw, &f); err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if f.Version != FileVersion {
		return fmt.Errorf("%w: version %d, want %d", ErrCorrupt, f.Version, FileVersion)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range f.Peers {
		if _, _, err := SplitAddr(e.Addr); err != nil {
			continue
		}
		e := e
		m.addrs[e.Addr] = &e
	}
	m.evictLocked()
	return nil
}

// Save writes cfg.Path atomically if anything changed since the last Save.
func (m *Manager) Save() error {
	if m.cfg.Path == "" {
		return nil
	}
	m.mu.Lock()
	if !m.dirty {
		m.mu.Unlock()
		return nil
	}
	f := file{Version: FileVersion, Peers: make([]Entry, 0, len(m.addrs))}
	for _, e := range m.addrs {
		f.Peers = append(f.Peers, *e)
	}
	m.dirty = false
	m.mu.Unlock()
	sort.Slice(f.Peers, func(i, j int) bool { return f.Peers[i].Addr < f.Peers[j].Addr })
	raw, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(m.cfg.Path, append(raw, '\n')); err != nil {
		m.mu.Lock()
		m.dirty = true
		m.mu.Unlock()
		return fmt.Errorf("addrman: save: %w", err)
	}
	return nil
}

func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".peers-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// SplitAddr checks "host:port" and returns its parts.
func SplitAddr(addr string) (string, uint16, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 || host == "" {
		return "", 0, fmt.Errorf("invalid address %q: want host:port", addr)
	}
	return host, uint16(p), nil
}

// Add records an address learned from source. It returns false when the address is invalid
// or already known (a known one only has its last-seen time updated).
func (m *Manager) Add(addr, source string, lastSeen time.Time) bool {
	if _, _, err := SplitAddr(addr); err != nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := lastSeen.Unix()
	if now := m.cfg.Now().Unix(); seen > now {
		seen = now
	}
	if e, ok := m.addrs[addr]; ok {
		if seen > e.LastSeen {
			e.LastSeen = seen
			m.dirty = true
		}
		if source == SourceConnect && e.Source != SourceConnect {
			e.Source = SourceConnect
			m.dirty = true
		}
		return false
	}
	m.addrs[addr] = &Entry{Addr: addr, Source: source, LastSeen: seen}
	m.dirty = true
	m.evictLocked()
	return true
}

// evictLocked drops the least useful learned addresses beyond MaxAddrs: never connected
// first, then the longest unseen. --connect addresses stay.
func (m *Manager) evictLocked() {
	for len(m.addrs) > m.cfg.MaxAddrs {
		var worst *Entry
		for _, e := range m.addrs {
			if e.Source == SourceConnect {
				continue
			}
			if worst == nil || e.LastSuccess < worst.LastSuccess ||
				e.LastSuccess == worst.LastSuccess && e.LastSeen < worst.LastSeen {
				worst = e
			}
		}
		if worst == nil {
			return
		}
		delete(m.addrs, worst.Addr)
		m.dirty = true
	}
}

// Attempt records a connection attempt (the backoff counts attempts since the last success).
func (m *Manager) Attempt(addr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.addrs[addr]
	if !ok {
		return
	}
	e.LastAttempt = m.cfg.Now().Unix()
	e.Attempts++
	m.dirty = true
}

// Good records a completed handshake with addr, adding it if unknown.
func (m *Manager) Good(addr, source string) {
	if _, _, err := SplitAddr(addr); err != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.cfg.Now().Unix()
	e, ok := m.addrs[addr]
	if !ok {
		e = &Entry{Addr: addr, Source: source}
		m.addrs[addr] = e
	}
	e.LastSuccess, e.LastSeen, e.Attempts = now, now, 0
	m.dirty = true
	m.evictLocked()
}

// Remove forgets addr (for example our own address).
func (m *Manager) Remove(addr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.addrs[addr]; ok {
		delete(m.addrs, addr)
		m.dirty = true
	}
}

// Get returns the entry of addr.
func (m *Manager) Get(addr string) (Entry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.addrs[addr]
	if !ok {
		return Entry{}, false
	}
	return *e, true
}

// backoffLocked is how long after its last attempt addr may be tried again.
func (m *Manager) backoffLocked(e *Entry) time.Duration {
	if e.Attempts == 0 {
		return 0
	}
	max := m.cfg.BackoffMax
	if e.Source == SourceConnect {
		max = m.cfg.ConnectBackoffMax
	}
	d := m.cfg.BackoffBase
	for i := 1; i < e.Attempts && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}

// NextAttempt is the earliest time addr may be dialled again (zero if now).
func (m *Manager) NextAttempt(addr string) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.addrs[addr]
	if !ok || e.Attempts == 0 {
		return time.Time{}
	}
	return time.Unix(e.LastAttempt, 0).Add(m.backoffLocked(e))
}

// Candidates lists up to n addresses whose backoff is over, for which skip is false, most
// recently successful first, then most recently seen.
func (m *Manager) Candidates(n int, skip func(addr string) bool) []string {
	m.mu.Lock()
	now := m.cfg.Now()
	var ready []*Entry
	for _, e := range m.addrs {
		if e.Attempts > 0 && now.Before(time.Unix(e.LastAttempt, 0).Add(m.backoffLocked(e))) {
			continue
		}
		ready = append(ready, e)
	}
	sort.Slice(ready, func(i, j int) bool {
		a, b := ready[i], ready[j]
		if a.LastSuccess != b.LastSuccess {
			return a.LastSuccess > b.LastSuccess
		}
		if a.LastSeen != b.LastSeen {
			return a.LastSeen > b.LastSeen
		}
		return a.Addr < b.Addr
	})
	addrs := make([]string, 0, len(ready))
	for _, e := range ready {
		addrs = append(addrs, e.Addr)
	}
	m.mu.Unlock()
	out := make([]string, 0, n)
	for _, a := range addrs {
		if len(out) == n {
			break
		}
		if skip != nil && skip(a) {
			continue
		}
		out = append(out, a)
	}
	return out
}

// Sample returns up to n known addresses, the most recently seen first (for addr replies).
func (m *Manager) Sample(n int) []Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Entry, 0, len(m.addrs))
	for _, e := range m.addrs {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LastSeen > out[j].LastSeen })
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// Len is the number of known addresses.
func (m *Manager) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.addrs)
}
