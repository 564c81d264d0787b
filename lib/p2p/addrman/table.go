package addrman

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"time"
)

// The address tables, after Bitcoin Core's addrman (simplified: one reference per address).
//
// A learned address goes to the new table, into the bucket that a keyed hash of its source
// group (the network group of the peer that told us) and its own network group picks: all
// addresses of one range learned from one source share one bucket, and one source group
// reaches at most newBucketsPerSourceGroup buckets. When an outbound handshake with it
// completes, it moves to the tried table, into one of triedBucketsPerGroup buckets of its
// group. A full bucket makes room by dropping its worst entry (failed, else the longest
// unseen; in the tried table the entry goes back to the new table). So a peer that floods
// addresses, or a range of addresses, fills a few buckets and cannot push out what other
// sources told us; and the total is bounded by the tables' size. The bucket key is random
// per process, so an attacker cannot aim at buckets.
//
// Pinned entries (--connect, --addnode, --seednode) live outside the tables: never evicted,
// never drawn as candidates (their own loops dial them), kept for their backoff.
const (
	newBucketsPerSourceGroup = 32
	triedBucketsPerGroup     = 4
	// terribleAttempts failed attempts in a row, with none succeeding, mark an address to be
	// dropped first; so does not having been seen for staleAfter.
	terribleAttempts = 3
	staleAfter       = 30 * 24 * time.Hour
)

func makeTable(n int) []map[string]*Entry {
	t := make([]map[string]*Entry, n)
	for i := range t {
		t[i] = make(map[string]*Entry)
	}
	return t
}

// hash is a keyed hash of the parts, reduced modulo n.
func (m *Manager) hash(n int, parts ...string) int {
	h := sha256.New()
	h.Write(m.key[:])
	for _, p := range parts {
		var l [4]byte
		binary.LittleEndian.PutUint32(l[:], uint32(len(p)))
		h.Write(l[:])
		h.Write([]byte(p))
	}
	return int(binary.LittleEndian.Uint64(h.Sum(nil)[:8]) % uint64(n))
}

// newBucketOf is the new-table bucket of addr learned from from.
func (m *Manager) newBucketOf(addr, from string) int {
	src := Group(from)
	if from == "" {
		src = Group(addr)
	}
	sub := m.hash(newBucketsPerSourceGroup, "new1", Group(addr), src)
	return m.hash(len(m.newT), "new", src, strconv.Itoa(sub))
}

// triedBucketOf is the tried-table bucket of addr.
func (m *Manager) triedBucketOf(addr string) int {
	sub := m.hash(triedBucketsPerGroup, "tried1", addr)
	return m.hash(len(m.tried), "tried", Group(addr), strconv.Itoa(sub))
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

// acceptable reports whether a learned addr (an IP and port) may be stored.
func (m *Manager) acceptable(addr string) bool {
	ap, err := netip.ParseAddrPort(addr)
	return err == nil && m.cfg.Policy.Acceptable(ap)
}

// terrible reports whether e is to be dropped first.
func (m *Manager) terrible(e *Entry, now int64) bool {
	if e.LastSuccess == 0 && e.Attempts >= terribleAttempts {
		return true
	}
	return e.LastSeen < now-int64(staleAfter/time.Second)
}

// worse reports whether a is a worse entry to keep than b.
func (m *Manager) worse(a, b *Entry, now int64) bool {
	ta, tb := m.terrible(a, now), m.terrible(b, now)
	if ta != tb {
		return ta
	}
	if a.LastSuccess != b.LastSuccess {
		return a.LastSuccess < b.LastSuccess
	}
	return a.LastSeen < b.LastSeen
}

// unlinkLocked takes e out of its table.
func (m *Manager) unlinkLocked(e *Entry) {
	if e.pinned || e.bucket < 0 {
		return
	}
	if e.Tried {
		delete(m.tried[e.bucket], e.Addr)
	} else {
		delete(m.newT[e.bucket], e.Addr)
	}
	e.bucket = -1
}

// insertNewLocked puts e (not in any table) into its new bucket, making room by dropping
// the bucket's worst entry when e is better. It reports whether e was stored.
func (m *Manager) insertNewLocked(e *Entry) bool {
	now := m.cfg.Now().Unix()
	b := m.newBucketOf(e.Addr, e.From)
	bucket := m.newT[b]
	if len(bucket) >= m.cfg.BucketSize {
		var worst *Entry
		for _, o := range bucket {
			if worst == nil || m.worse(o, worst, now) {
				worst = o
			}
		}
		if !m.worse(worst, e, now) {
			return false
		}
		delete(bucket, worst.Addr)
		delete(m.addrs, worst.Addr)
	}
	e.Tried, e.bucket = false, b
	bucket[e.Addr] = e
	m.addrs[e.Addr] = e
	m.dirty = true
	return true
}

// insertTriedLocked puts e (not in any table) into its tried bucket; a full bucket's entry
// with the oldest success goes back to the new table.
func (m *Manager) insertTriedLocked(e *Entry) {
	now := m.cfg.Now().Unix()
	b := m.triedBucketOf(e.Addr)
	bucket := m.tried[b]
	if len(bucket) >= m.cfg.BucketSize {
		var worst *Entry
		for _, o := range bucket {
			if worst == nil || m.worse(o, worst, now) {
				worst = o
			}
		}
		delete(bucket, worst.Addr)
		worst.bucket = -1
		if !m.insertNewLocked(worst) {
			delete(m.addrs, worst.Addr)
		}
	}
	e.Tried, e.bucket = true, b
	bucket[e.Addr] = e
	m.addrs[e.Addr] = e
	m.dirty = true
}

// loadLocked fills the tables from peers.json's entries, the tried ones (most recent
// success first) before the others (most recently seen first).
func (m *Manager) loadLocked(entries []Entry) {
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if a.Tried != b.Tried {
			return a.Tried
		}
		if a.LastSuccess != b.LastSuccess {
			return a.LastSuccess > b.LastSuccess
		}
		return a.LastSeen > b.LastSeen
	})
	for _, e := range entries {
		if _, _, err := SplitAddr(e.Addr); err != nil || m.addrs[e.Addr] != nil {
			continue
		}
		e := e
		e.bucket, e.pinned = -1, false
		switch {
		case !m.acceptable(e.Addr):
			// A hostname given with --connect or --addnode, or an address this network's
			// policy does not take: the flags pin it again if they still name it.
		case e.Tried:
			m.insertTriedLocked(&e)
		default:
			m.insertNewLocked(&e)
		}
	}
}

// Add records an address (an IP and port) that from told us of, the way source says (an
// addr message, a DNS seed). It returns false when the address is refused (invalid, not
// taken by the policy, no room in its bucket) or already known; a known one only has its
// last-seen time updated.
func (m *Manager) Add(addr, source, from string, lastSeen time.Time) bool {
	if !m.acceptable(addr) {
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
		return false
	}
	return m.insertNewLocked(&Entry{Addr: addr, Source: source, From: from, LastSeen: seen, bucket: -1})
}

// Pin keeps addr (host:port; a hostname is allowed) outside the tables as a --connect,
// --addnode or --seednode address: never evicted, dialled by its own loop.
func (m *Manager) Pin(addr, source string) error {
	if _, _, err := SplitAddr(addr); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidAddr, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.addrs[addr]
	if !ok {
		e = &Entry{Addr: addr, LastSeen: m.cfg.Now().Unix(), bucket: -1}
		m.addrs[addr] = e
	}
	m.unlinkLocked(e)
	e.pinned, e.Source, e.Tried = true, source, false
	m.dirty = true
	return nil
}

// Unpin returns a pinned address to the tables (when the policy takes it) or forgets it.
func (m *Manager) Unpin(addr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.addrs[addr]
	if !ok || !e.pinned {
		return
	}
	e.pinned = false
	delete(m.addrs, addr)
	m.dirty = true
	if !m.acceptable(addr) {
		return
	}
	if e.LastSuccess > 0 {
		m.insertTriedLocked(e)
	} else {
		m.insertNewLocked(e)
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

// Good records a completed outbound handshake with addr: the address moves to the tried
// table (a pinned one stays pinned), added if unknown and the policy takes it.
func (m *Manager) Good(addr, source string) {
	if _, _, err := SplitAddr(addr); err != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.cfg.Now().Unix()
	e, ok := m.addrs[addr]
	if !ok {
		if !m.acceptable(addr) {
			return
		}
		e = &Entry{Addr: addr, Source: source, From: addr, bucket: -1}
	}
	e.LastSuccess, e.LastSeen, e.Attempts = now, now, 0
	m.dirty = true
	if e.pinned || (e.Tried && e.bucket >= 0) {
		return
	}
	m.unlinkLocked(e)
	delete(m.addrs, addr)
	m.insertTriedLocked(e)
}

// Remove forgets addr (for example our own address).
func (m *Manager) Remove(addr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.addrs[addr]; ok {
		m.unlinkLocked(e)
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
	if e.pinned || e.Source == SourceConnect {
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

// Candidates draws up to n addresses to dial for outbound connections: from the tables
// (not pinned ones), whose backoff is over and for which skip is false, each of a network
// group not in used and none two of one group. Tried addresses come first, in random
// order, then new ones in random order, so a range of fresh addresses that floods the new
// table gets at most one outbound connection and no precedence.
func (m *Manager) Candidates(n int, skip func(addr string) bool, used map[string]bool) []string {
	m.mu.Lock()
	now := m.cfg.Now()
	var tried, fresh []string
	for _, e := range m.addrs {
		if e.pinned || e.Attempts > 0 && now.Before(time.Unix(e.LastAttempt, 0).Add(m.backoffLocked(e))) {
			continue
		}
		if e.Tried {
			tried = append(tried, e.Addr)
		} else {
			fresh = append(fresh, e.Addr)
		}
	}
	m.mu.Unlock()
	groups := make(map[string]bool, len(used)+n)
	for g := range used {
		groups[g] = true
	}
	out := make([]string, 0, n)
	for _, list := range [][]string{tried, fresh} {
		// A Fisher-Yates shuffle taken one step at a time: stops as soon as n are drawn.
		for i := 0; i < len(list) && len(out) < n; i++ {
			j := i + rand.IntN(len(list)-i)
			list[i], list[j] = list[j], list[i]
			a := list[i]
			g := Group(a)
			if groups[g] || skip != nil && skip(a) {
				continue
			}
			groups[g] = true
			out = append(out, a)
		}
	}
	return out
}

// Sample returns a random sample of the stored addresses (not pinned ones, not terrible
// ones) for an addr answer or getnodeaddresses: at most max, and, when pct > 0, at most
// pct percent of them but no fewer than min(all, minSample) (Bitcoin Core sends at most
// 1,000 or 23%; a small table is sent whole, so a young network can find itself).
func (m *Manager) Sample(max, pct int) []Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.cfg.Now().Unix()
	all := make([]*Entry, 0, len(m.addrs))
	for _, e := range m.addrs {
		if !e.pinned && !m.terrible(e, now) {
			all = append(all, e)
		}
	}
	n := len(all)
	if pct > 0 {
		n = max2(n*pct/100, min(n, minSample))
	}
	if max > 0 {
		n = min(n, max)
	}
	out := make([]Entry, n)
	for i := range out { // the first n steps of a Fisher-Yates shuffle
		j := i + rand.IntN(len(all)-i)
		all[i], all[j] = all[j], all[i]
		out[i] = *all[i]
	}
	return out
}

// minSample is the size of a table that Sample hands out whole.
const minSample = 64

func max2(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// Len is the number of known addresses (pinned ones included).
func (m *Manager) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.addrs)
}

// TableLen is the number of addresses in the new and in the tried table.
func (m *Manager) TableLen() (newCount, triedCount int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range m.newT {
		newCount += len(b)
	}
	for _, b := range m.tried {
		triedCount += len(b)
	}
	return newCount, triedCount
}
