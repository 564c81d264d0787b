package faucet

import (
	"slices"
	"sync"
	"time"
)

// The per-client and global limits on claims (protocol §14).

// window counts events over a sliding window (an hour): at most max events in any window.
// A key's events are a slice of at most max times, so memory is bounded by the keys seen
// within one window times max; keys whose events all left the window are swept.
type window struct {
	mu     sync.Mutex
	max    int
	period time.Duration
	events map[string][]time.Time
	now    func() time.Time
	swept  time.Time
}

func newWindow(max int, period time.Duration) *window {
	return &window{max: max, period: period, events: map[string][]time.Time{}, now: time.Now}
}

// take counts an event for key now, unless key already had max events within the window:
// then it returns how long until the oldest leaves it. The returned undo removes the event
// again (a claim that was not paid does not count).
func (w *window) take(key string) (undo func(), wait time.Duration) {
	if w == nil || w.max <= 0 {
		return func() {}, 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	if now.Sub(w.swept) > w.period {
		w.sweep(now)
	}
	ev := w.live(key, now)
	if len(ev) >= w.max {
		return nil, ev[0].Add(w.period).Sub(now)
	}
	t := now
	w.events[key] = append(ev, t)
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		ev := w.events[key]
		for i := range ev {
			if ev[i].Equal(t) {
				w.events[key] = append(ev[:i:i], ev[i+1:]...)
				break
			}
		}
		if len(w.events[key]) == 0 {
			delete(w.events, key)
		}
	}, 0
}

// seed counts an event of key at t (a claim paid before a restart), keeping key's events in
// order and at most max of them, the latest.
func (w *window) seed(key string, t time.Time) {
	if w == nil || w.max <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	ev := w.events[key]
	i := len(ev)
	for i > 0 && ev[i-1].After(t) {
		i--
	}
	ev = slices.Insert(ev, i, t)
	if len(ev) > w.max {
		ev = ev[len(ev)-w.max:]
	}
	w.events[key] = ev
}

// countPaidClaims counts the claims of the last hour that the claim store recorded into the
// per-client and budget windows, so that a restart does not give every client and the
// faucet a fresh hour.
func (s *Service) countPaidClaims() error {
	if (s.claimsPerClient == nil && s.budget == nil) || s.cfg.Claims == nil {
		return nil
	}
	recs, err := s.cfg.Claims.Recent(time.Now().Add(-time.Hour))
	if err != nil {
		return err
	}
	for _, r := range recs {
		s.budget.seed("", r.Time)
		if r.Client != "" {
			s.claimsPerClient.seed(r.Client, r.Time)
		}
	}
	return nil
}

// live drops key's events older than the window and returns the rest, oldest first.
func (w *window) live(key string, now time.Time) []time.Time {
	ev := w.events[key]
	i := 0
	for i < len(ev) && now.Sub(ev[i]) >= w.period {
		i++
	}
	if i > 0 {
		ev = append(ev[:0:0], ev[i:]...)
		w.events[key] = ev
	}
	return ev
}

func (w *window) sweep(now time.Time) {
	w.swept = now
	for k := range w.events {
		if len(w.live(k, now)) == 0 {
			delete(w.events, k)
		}
	}
}
