package peer

import (
	"sync"

	"github.com/cointoolkit/coin/lib/types"
)

// KnownSet is a bounded set of hashes: when full, the oldest entry leaves. Its memory grows
// with use up to the bound. It is safe for concurrent use.
type KnownSet struct {
	mu   sync.Mutex
	max  int
	m    map[types.Hash]struct{}
	ring []types.Hash
	next int
}

// NewKnownSet holds at most n hashes.
func NewKnownSet(n int) *KnownSet {
	return &KnownSet{max: max(n, 1), m: make(map[types.Hash]struct{})}
}

// Add inserts h and reports whether it was new.
func (s *KnownSet) Add(h types.Hash) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[h]; ok {
		return false
	}
	if len(s.ring) < s.max {
		s.ring = append(s.ring, h)
	} else {
		delete(s.m, s.ring[s.next])
		s.ring[s.next] = h
		s.next = (s.next + 1) % len(s.ring)
	}
	s.m[h] = struct{}{}
	return true
}

// Has reports whether h is in the set.
func (s *KnownSet) Has(h types.Hash) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[h]
	return ok
}

// Len is the number of hashes held.
func (s *KnownSet) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// Reset empties the set.
func (s *KnownSet) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.m)
	s.ring, s.next = s.ring[:0], 0
}
