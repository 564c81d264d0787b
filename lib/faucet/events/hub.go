package events

import (
	"errors"
	"sync"
)

// DefaultBuffer is how many events a subscriber may have waiting before it is dropped. The
// queue holds pointers to the published events, which all subscribers share (8 bytes a
// slot, 8 KiB a subscriber, rather than a copy of each 328-byte Event: 328 KiB a subscriber,
// 3.2 GiB for 10,000 streams).
const DefaultBuffer = 1024

// ErrSlow is why a subscription ended when its reader fell DefaultBuffer (Hub.Buffer)
// events behind: it is disconnected rather than allowed to hold up the others.
var ErrSlow = errors.New("subscriber too slow: more events waiting than its buffer holds")

// Hub writes events to the store and hands them to the subscribers whose filters match.
// Publishing never waits for a subscriber: each has a bounded buffer, and one whose buffer
// is full is dropped (its channel closed, Err ErrSlow).
type Hub struct {
	store  *Store
	buffer int

	mu     sync.Mutex
	subs   map[*Subscription]struct{}
	closed bool
}

// NewHub serves the events of store. buffer bounds each subscriber's queue (DefaultBuffer
// when 0 or less).
func NewHub(store *Store, buffer int) *Hub {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	return &Hub{store: store, buffer: buffer, subs: map[*Subscription]struct{}{}}
}

// Store is the hub's event log.
func (h *Hub) Store() *Store { return h.store }

// Subscription is one subscriber's live feed.
type Subscription struct {
	// C carries the matching events published after the subscription began, in id order.
	// It is closed by Cancel, or when the subscriber fell too far behind (Err is ErrSlow).
	// The events are shared with the other subscribers: read them, never change them.
	C      <-chan *Event
	c      chan *Event
	filter Filter
	hub    *Hub
	// After is the last id published when the subscription began: every event up to it is
	// in the store (Range), every later one comes on C.
	After uint64
	err   error
}

// Err is ErrSlow once the hub dropped the subscription, else nil.
func (s *Subscription) Err() error {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return s.err
}

// Cancel ends the subscription; C is closed. It may be called more than once.
func (s *Subscription) Cancel() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	if _, ok := s.hub.subs[s]; ok {
		delete(s.hub.subs, s)
		close(s.c)
	}
}

// SubscribeLive starts a subscription to the events that match f from now on.
func (h *Hub) SubscribeLive(f Filter) *Subscription {
	c := make(chan *Event, h.buffer)
	s := &Subscription{C: c, c: c, filter: f, hub: h}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, s.After = h.store.Bounds()
	if h.closed {
		close(c)
		return s
	}
	h.subs[s] = struct{}{}
	return s
}

// Close ends every subscription and refuses new ones (their channels are closed at once),
// so that the streams end and an HTTP server can shut down.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		delete(h.subs, s)
		close(s.c)
	}
}

// Subscribe is the hook for other transports (the MCP server's resource subscriptions):
// the events that match f from now on, and the function that ends the subscription. The
// channel is closed by cancel, or when the reader fell too far behind.
func (h *Hub) Subscribe(f Filter) (<-chan *Event, func()) {
	s := h.SubscribeLive(f)
	return s.C, s.Cancel
}

// Subscribers counts the live subscriptions.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Publish appends evs and meta to the store (Store.Append) and then hands the events to
// the subscribers; it returns the events with their ids.
func (h *Hub) Publish(evs []Event, meta map[string][]byte) ([]Event, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	evs, err := h.store.Append(evs, meta)
	if err != nil {
		return nil, err
	}
	shared := make([]Event, len(evs)) // the subscribers' copy, apart from the caller's
	copy(shared, evs)
	for s := range h.subs {
		for i := range shared {
			if !s.filter.Match(&shared[i]) {
				continue
			}
			select {
			case s.c <- &shared[i]:
			default:
				s.err = ErrSlow
				delete(h.subs, s)
				close(s.c)
			}
			if s.err != nil {
				break
			}
		}
	}
	return evs, nil
}
