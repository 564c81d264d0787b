package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cointoolkit/coin/lib/keys"
)

// Defaults of HandlerConfig.
const (
	DefaultHeartbeat      = 15 * time.Second
	DefaultWriteTimeout   = 10 * time.Second
	DefaultMaxSubscribers = 10_000
	DefaultRetry          = 2 * time.Second
	// DefaultMaxAge ends a stream after 10 minutes (the client reconnects with
	// Last-Event-ID and misses nothing), so a reader that never reads, whose kernel buffer
	// takes the pings for hours before a write blocks, does not hold its connection longer.
	DefaultMaxAge = 10 * time.Minute
)

// HandlerConfig configures the SSE endpoint.
type HandlerConfig struct {
	// HRP is the network's address prefix: ?address= must be an address of it (empty: not
	// checked).
	HRP string
	// Heartbeat is the interval of the comment lines that keep idle connections (and
	// proxies) open (default 15 s).
	Heartbeat time.Duration
	// WriteTimeout bounds each write to a subscriber (default 10 s); it replaces the HTTP
	// server's own write timeout, which would end every stream.
	WriteTimeout time.Duration
	// MaxSubscribers bounds the streams open at once (default 10,000); more are 503.
	MaxSubscribers int
	// Retry is the reconnection delay the stream suggests to clients (default 2 s).
	Retry time.Duration
	// MaxAge ends each stream after that long (default DefaultMaxAge), with a comment
	// saying to reconnect: a reader that does not read is dropped by then even when its
	// kernel buffers still take the pings.
	MaxAge time.Duration
	// Replay charges resumptions by the events they replay (replay.go); the zero value
	// is DefaultReplay's limits with every request one client.
	Replay ReplayLimits
}

// Handler serves GET /api/agent/events as Server-Sent Events (text/event-stream): every
// event that matches ?address= and ?types=, each as "id: ID", "event: TYPE" and "data:
// JSON". With Last-Event-ID (the header, or ?last_event_id= for a first connection) it first
// sends the stored events after that id, then the live ones, without a gap or a repeat; if
// the id is older than the store keeps, an event "gap" (data: {"type":"gap","from","to"},
// no id) says which ids are gone. Comment lines (": ping") are sent every Heartbeat.
func (h *Hub) Handler(cfg HandlerConfig) http.Handler {
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.MaxSubscribers <= 0 {
		cfg.MaxSubscribers = DefaultMaxSubscribers
	}
	if cfg.Retry <= 0 {
		cfg.Retry = DefaultRetry
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultMaxAge
	}
	replay := newReplayLimiter(cfg.Replay)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not supported; use GET")
			return
		}
		f, after, resume, err := parseRequest(r, cfg.HRP)
		if err != nil {
			var re *requestError
			errors.As(err, &re)
			writeError(w, http.StatusBadRequest, re.code, re.msg)
			return
		}
		if h.Subscribers() >= cfg.MaxSubscribers {
			w.Header().Set("Retry-After", "5")
			writeError(w, http.StatusServiceUnavailable, "too_many_subscribers", "the event stream has as many subscribers as it serves; retry later")
			return
		}
		h.stream(w, r, cfg, replay, f, after, resume)
	})
}

type requestError struct{ code, msg string }

func (e *requestError) Error() string { return e.msg }

// parseRequest reads the filter and the resumption point of a request.
func parseRequest(r *http.Request, hrp string) (f Filter, after uint64, resume bool, err error) {
	q := r.URL.Query()
	if a := strings.TrimSpace(q.Get("address")); a != "" {
		if hrp != "" {
			if _, derr := keys.DecodeAddress(a, hrp); derr != nil {
				return f, 0, false, &requestError{"invalid_address", fmt.Sprintf("invalid address %q: %v", a, derr)}
			}
		}
		f.Address = a
	}
	if t := q.Get("types"); t != "" {
		if f.Types, err = ParseTypes(t); err != nil {
			return f, 0, false, &requestError{"invalid_types", err.Error()}
		}
	}
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = q.Get("last_event_id")
	}
	if last = strings.TrimSpace(last); last != "" {
		if after, err = strconv.ParseUint(last, 10, 64); err != nil {
			return f, 0, false, &requestError{"invalid_last_event_id", fmt.Sprintf("Last-Event-ID %q is not an event id (a non-negative integer)", last)}
		}
		resume = true
	}
	return f, after, resume, nil
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

// stream runs one subscriber's stream until the client leaves, a write fails (each write
// has cfg.WriteTimeout), the hub drops it as too slow or cfg.MaxAge passes. A resumption is
// charged first by the events it replays (replay.go): refused with 429 and Retry-After when
// the client or the faucet has replayed too much lately, and started at most
// ReplayLimits.MaxReplay events back, with a gap event for the older ones.
func (h *Hub) stream(w http.ResponseWriter, r *http.Request, cfg HandlerConfig, replay *replayLimiter, f Filter, after uint64, resume bool) {
	sub := h.SubscribeLive(f)
	defer sub.Cancel()
	var skipTo uint64 // a resumption too far back starts after skipTo instead (a gap before)
	if resume && after < sub.After {
		first, _ := h.store.Bounds()
		from := max(after, first-1) // the first replayed event is from+1
		n := sub.After - from
		if n > replay.maxReplay {
			skipTo, n = sub.After-replay.maxReplay, replay.maxReplay
		}
		if ok, wait := replay.take(r, n); !ok {
			secs := int64((wait + time.Second - 1) / time.Second)
			w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
			writeError(w, http.StatusTooManyRequests, "replay_rate_limited",
				fmt.Sprintf("resuming here replays %d events, more than this client or the faucet may replay now; retry in %d s, or connect without Last-Event-ID", n, secs))
			return
		}
	}
	rc := http.NewResponseController(w)
	// The stream outlives the server's read timeout, whose expiry would cancel the request.
	_ = rc.SetReadDeadline(time.Time{})
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)

	var buf bytes.Buffer
	flush := func() bool {
		_ = rc.SetWriteDeadline(time.Now().Add(cfg.WriteTimeout))
		if _, err := w.Write(buf.Bytes()); err != nil {
			return false
		}
		buf.Reset()
		return rc.Flush() == nil
	}
	fmt.Fprintf(&buf, "retry: %d\n: connected, last event id %d\n\n", cfg.Retry.Milliseconds(), sub.After)
	cur := sub.After
	if resume {
		cur = after
		// after < first-1, not after+1 < first: Last-Event-ID 18446744073709551615 must not
		// wrap to 0.
		if first, _ := h.store.Bounds(); first > 0 && after < first-1 {
			fmt.Fprintf(&buf, "event: gap\ndata: {\"type\":\"gap\",\"from\":%d,\"to\":%d}\n\n", after+1, first-1)
			cur = first - 1
		}
		if skipTo > cur {
			fmt.Fprintf(&buf, "event: gap\ndata: {\"type\":\"gap\",\"from\":%d,\"to\":%d,\"reason\":\"replay_limit\"}\n\n", cur+1, skipTo)
			cur = skipTo
		}
		if after > sub.After {
			// An id this log never gave (its store was replaced): go on from the live end.
			fmt.Fprintf(&buf, "event: gap\ndata: {\"type\":\"gap\",\"from\":%d,\"to\":%d}\n\n", sub.After+1, after)
			cur = sub.After
		}
		for cur < sub.After {
			page, err := h.store.Range(cur, 256)
			if err != nil || len(page) == 0 {
				break
			}
			for i := range page {
				if page[i].ID > sub.After {
					break
				}
				if f.Match(&page[i]) {
					writeEvent(&buf, &page[i])
				}
				cur = page[i].ID
			}
			if !flush() {
				return
			}
		}
		cur = sub.After
	}
	if !flush() {
		return
	}
	tick := time.NewTicker(cfg.Heartbeat)
	defer tick.Stop()
	expire := time.NewTimer(cfg.MaxAge)
	defer expire.Stop()
	for {
		select {
		case <-expire.C:
			buf.WriteString(": stream expired; reconnect with Last-Event-ID\n\n")
			flush()
			return
		case e, ok := <-sub.C:
			if !ok {
				if sub.Err() != nil {
					buf.WriteString(": disconnected: too slow; reconnect with Last-Event-ID\n\n")
					flush()
				}
				return
			}
			if e.ID > cur {
				writeEvent(&buf, e)
				cur = e.ID
			}
			// Take what else is waiting, then write once.
		more:
			for buf.Len() < 64<<10 {
				select {
				case e, ok := <-sub.C:
					if !ok {
						break more
					}
					if e.ID > cur {
						writeEvent(&buf, e)
						cur = e.ID
					}
				default:
					break more
				}
			}
			if !flush() {
				return
			}
		case <-tick.C:
			buf.WriteString(": ping\n\n")
			if !flush() {
				return
			}
		case <-r.Context().Done():
			return
		}
	}
}

// writeEvent appends e in the SSE format.
func writeEvent(buf *bytes.Buffer, e *Event) {
	raw := e.raw
	if raw == nil {
		raw, _ = json.Marshal(e)
	}
	buf.WriteString("id: ")
	buf.WriteString(strconv.FormatUint(e.ID, 10))
	buf.WriteString("\nevent: ")
	buf.WriteString(e.Type)
	buf.WriteString("\ndata: ")
	buf.Write(raw)
	buf.WriteString("\n\n")
}
