package rpcapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// The node's notification stream (docs/operations.md, "Notifications"), modelled on Bitcoin
// Core's ZMQ "sequence" topic: GET StreamPath on the RPC listener answers one JSON object a
// line (Content-Type application/x-ndjson), first a hello, then every event as it happens,
// each with the next sequence number, and a ping when nothing happened for a while. A client
// that reconnects asks for the events from the sequence after the last it saw (?from=N) and
// gets those the node still holds (the backlog) before the new ones; one that finds a number
// skipped, or a new stream id (the node restarted), knows it missed events.

// StreamPath is the stream's path on the RPC listener.
const StreamPath = "/stream"

// The event types.
const (
	// EventHello opens a stream: Stream is the node run's id, Sequence the last event's number,
	// Oldest the oldest event the backlog still holds (Sequence+1 when it holds none).
	EventHello = "hello"
	// EventBlockConnected and EventBlockDisconnected: a block joined or left the main chain
	// (Hash, Height); a reorganisation disconnects the old branch tip first, then connects.
	EventBlockConnected    = "block_connected"
	EventBlockDisconnected = "block_disconnected"
	// EventTxAdded and EventTxRemoved: a transaction entered or left the mempool (TxID;
	// Reason of a removal: block, conflict, evicted or invalid).
	EventTxAdded   = "tx_added"
	EventTxRemoved = "tx_removed"
	// EventPing: nothing happened for a while (Sequence: the last event's number).
	EventPing = "ping"
	// EventDropped: the node ends the stream because the client read too slowly; Sequence is
	// the last event sent. Reconnect with from = Sequence+1.
	EventDropped = "dropped"
	// EventGap is never sent by the node: Follow delivers it when events were missed (From
	// the first missing number, Sequence the next one delivered; Stream changed when the node
	// restarted).
	EventGap = "gap"
)

// Event is one line of the stream.
type Event struct {
	Sequence uint64 `json:"sequence"`
	Type     string `json:"type"`
	Hash     string `json:"hash,omitempty"`
	Height   uint64 `json:"height,omitempty"`
	TxID     string `json:"txid,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Hello's.
	Stream string `json:"stream,omitempty"`
	Oldest uint64 `json:"oldest,omitempty"`
	// Gap's (Follow only).
	From uint64 `json:"from,omitempty"`
}

// ErrStreamRefused is the error of a stream request the node refused with a client error
// (HTTP 4xx: unauthorised, forbidden, not a node): reconnecting will not help until that
// changes. A 5xx (too many streams open, the node stopping) is retried.
var ErrStreamRefused = errors.New("stream refused")

// FollowOptions tune Follow.
type FollowOptions struct {
	// From is the first sequence number wanted (0: only events after the connection).
	From uint64
	// MinBackoff and MaxBackoff bound the wait before a reconnection, doubled after each
	// failure (defaults 100 ms and 5 s).
	MinBackoff, MaxBackoff time.Duration
	// OnError, when set, is told of each connection failure before the wait.
	OnError func(error)
}

// Follow reads the node's stream and calls fn with each event (hello and ping included) until
// ctx ends (it returns ctx's error), fn fails (its error), or the node refuses the stream
// (ErrStreamRefused, for a 4xx; a 5xx is retried). On a broken connection or a dropped stream it reconnects and resumes
// from the sequence after the last it delivered; when events were missed it first delivers an
// EventGap, so the caller can resynchronise (getrawmempool, getbestblockhash).
func (c *Client) Follow(ctx context.Context, o FollowOptions, fn func(Event) error) error {
	if o.MinBackoff <= 0 {
		o.MinBackoff = 100 * time.Millisecond
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(5*time.Second, o.MinBackoff)
	}
	f := follower{next: o.From, fn: fn}
	backoff := o.MinBackoff
	for {
		delivered, err := f.once(ctx, c)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var fe fnError
		if errors.As(err, &fe) {
			return fe.err
		}
		if errors.Is(err, ErrStreamRefused) {
			return err
		}
		if o.OnError != nil && err != nil {
			o.OnError(err)
		}
		if delivered {
			backoff = o.MinBackoff
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		backoff = min(2*backoff, o.MaxBackoff)
	}
}

// fnError carries the callback's error out of follower.once.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

// follower is Follow's state across connections.
type follower struct {
	next   uint64 // the next sequence number wanted (0: none seen, no From)
	stream string // the node run's id of the last hello
	fn     func(Event) error
}

// once reads one connection to its end; delivered tells whether an event came through.
func (f *follower) once(ctx context.Context, c *Client) (delivered bool, err error) {
	resp, err := c.Client.Get(ctx, StreamPath, streamQuery(f.next))
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		if resp.StatusCode >= 500 { // too many streams, a node stopping: worth another try
			return false, fmt.Errorf("stream: %s: %s", resp.Status, bytesLine(body))
		}
		return false, fmt.Errorf("%w: %s: %s", ErrStreamRefused, resp.Status, bytesLine(body))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return delivered, fmt.Errorf("stream: bad line %q: %w", bytesLine(sc.Bytes()), err)
		}
		if err := f.handle(ev); err != nil {
			return delivered, fnError{err}
		}
		delivered = true
		if ev.Type == EventDropped {
			return delivered, errors.New("stream: the node dropped this client for reading too slowly")
		}
	}
	if err := sc.Err(); err != nil {
		return delivered, err
	}
	return delivered, io.ErrUnexpectedEOF
}

// handle checks ev's place in the sequence, delivers a gap first when one is missing, then ev.
func (f *follower) handle(ev Event) error {
	switch ev.Type {
	case EventHello:
		restarted := f.stream != "" && ev.Stream != f.stream
		f.stream = ev.Stream
		switch {
		case restarted && f.next > 0:
			// A new run numbers its events afresh: whatever it sends before the hello's
			// sequence belongs to the new numbering, so everything up to it counts as missed.
			if err := f.fn(Event{Type: EventGap, From: f.next, Sequence: ev.Sequence + 1, Stream: ev.Stream}); err != nil {
				return err
			}
			f.next = ev.Sequence + 1
		case f.next > 0 && ev.Oldest > f.next:
			if err := f.fn(Event{Type: EventGap, From: f.next, Sequence: ev.Oldest, Stream: ev.Stream}); err != nil {
				return err
			}
			f.next = ev.Oldest
		case f.next == 0:
			f.next = ev.Sequence + 1
		}
		return f.fn(ev)
	case EventPing, EventDropped:
		return f.fn(ev)
	}
	if f.next > 0 && ev.Sequence > f.next {
		if err := f.fn(Event{Type: EventGap, From: f.next, Sequence: ev.Sequence, Stream: f.stream}); err != nil {
			return err
		}
	}
	if f.next > 0 && ev.Sequence < f.next {
		return nil // already delivered
	}
	f.next = ev.Sequence + 1
	return f.fn(ev)
}

func streamQuery(from uint64) url.Values {
	q := url.Values{}
	if from > 0 {
		q.Set("from", strconv.FormatUint(from, 10))
	}
	return q
}

func bytesLine(b []byte) string {
	for i, c := range b {
		if c == '\n' {
			return string(b[:i])
		}
	}
	return string(b)
}
