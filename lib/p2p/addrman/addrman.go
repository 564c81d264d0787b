package addrman

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/cointoolkit/coin/lib/atomicfile"
)

// Sources of an address.
const (
	SourceConnect  = "connect"  // given with --connect
	SourceAddnode  = "addnode"  // given with --addnode or the addnode RPC
	SourceSeednode = "seednode" // given with --seednode
	SourceDNS      = "dns"      // answered by a DNS seed
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
	// From is the address of the peer (or the DNS seed) that told us of this one; its
	// network group is the source group that, with the address's own group, picks the
	// entry's bucket in the new table.
	From string `json:"from,omitempty"`
	// Tried marks an entry of the tried table: a handshake with it completed.
	Tried bool `json:"tried,omitempty"`

	bucket int  // the bucket of its table; -1 while pinned
	pinned bool // a --connect, --addnode or --seednode address: kept outside the tables
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
	Path string
	// The tables (table.go): NewBuckets and TriedBuckets buckets of BucketSize entries each
	// (defaults 256, 64 and 16: at most 5,120 addresses besides the pinned ones).
	NewBuckets   int
	TriedBuckets int
	BucketSize   int
	// Policy says which addresses are stored (routable only, or also private and loopback).
	Policy Policy
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

	key   [32]byte            // secret of the bucket hashes, random per process
	newT  []map[string]*Entry // the new table's buckets
	tried []map[string]*Entry // the tried table's buckets
}

// New returns an empty manager; call Load to read cfg.Path.
func New(cfg Config) *Manager {
	if cfg.NewBuckets <= 0 {
		cfg.NewBuckets = 256
	}
	if cfg.TriedBuckets <= 0 {
		cfg.TriedBuckets = 64
	}
	if cfg.BucketSize <= 0 {
		cfg.BucketSize = 16
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
	m := &Manager{cfg: cfg, addrs: make(map[string]*Entry)}
	if _, err := rand.Read(m.key[:]); err != nil {
		panic("addrman: no randomness: " + err.Error())
	}
	m.newT = makeTable(cfg.NewBuckets)
	m.tried = makeTable(cfg.TriedBuckets)
	return m
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
	m.loadLocked(f.Peers)
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
	if err := atomicfile.Write(m.cfg.Path, append(raw, '\n')); err != nil {
		m.mu.Lock()
		m.dirty = true
		m.mu.Unlock()
		return fmt.Errorf("addrman: save: %w", err)
	}
	return nil
}
