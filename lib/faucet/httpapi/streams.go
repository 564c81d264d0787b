package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/cointoolkit/coin/lib/faucet/api"
)

// The bound on event streams (GET /api/agent/events, docs/security.md): a stream holds one
// of the listener's connections for as long as it lasts, and the API, the page and /mcp
// share that listener, so without a bound a few clients holding streams take every
// connection and nobody else is answered. The server lets one client (the network
// clientNet counts, as the other per-client limits) hold at most MaxStreamsPerClient
// streams and all clients together at most MaxStreams, which coin-faucetd keeps below its
// --max-connections, so the last connections always serve ordinary requests. A refusal is
// 429 (this client) or 503 (all) with Retry-After, and closes the connection, so a refused
// client does not keep the slot as an idle keep-alive connection either.

// Defaults of the stream bounds.
const (
	DefaultMaxStreams          = 384 // three quarters of coin-faucetd's 512 connections
	DefaultMaxStreamsPerClient = 4
)

// Codes of the stream refusals.
const (
	CodeStreamLimit  = "stream_limit"  // 429: this client holds its share of streams
	CodeStreamsFull  = "streams_full"  // 503: every stream slot is taken
	streamRetryAfter = 5 * time.Second // the Retry-After of a refusal
)

// streamSlots counts the open streams, per client and in all.
type streamSlots struct {
	max, perClient int

	mu       sync.Mutex
	open     int
	byClient map[string]int
}

func newStreamSlots(max, perClient int) *streamSlots {
	return &streamSlots{max: max, perClient: perClient, byClient: map[string]int{}}
}

// acquire takes a slot for client; release gives it back (once). A refusal is the *Error to
// answer.
func (s *streamSlots) acquire(client string) (release func(), refusal *Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byClient[client] >= s.perClient {
		e := apiErr(api.KindLimited, CodeStreamLimit,
			"this client holds %d event streams, the most one client may; close one, or retry in %d s", s.perClient, api.RetrySeconds(streamRetryAfter))
		e.RetryAfter = streamRetryAfter
		return nil, e
	}
	if s.open >= s.max {
		e := apiErr(api.KindUnavailable, CodeStreamsFull,
			"the faucet serves %d event streams, as many as it keeps for streams; retry in %d s", s.max, api.RetrySeconds(streamRetryAfter))
		e.RetryAfter = streamRetryAfter
		return nil, e
	}
	s.open++
	s.byClient[client]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.open--
			if s.byClient[client]--; s.byClient[client] <= 0 {
				delete(s.byClient, client)
			}
		})
	}, nil
}

// ErrStreamShare: the streams asked for would take the connections kept for ordinary
// requests.
var ErrStreamShare = errors.New("event streams may take at most three quarters of the connections")

// StreamShare is how many event streams a listener of maxConns connections serves: want
// when it is not 0, else three quarters of maxConns; the last quarter (at least one
// connection) is kept for ordinary requests, so a want that would take it is
// ErrStreamShare. 0 streams (a listener of one connection) refuses every stream.
func StreamShare(maxConns, want int) (int, error) {
	limit := maxConns - max(1, maxConns/4)
	switch {
	case want < 0:
		return 0, fmt.Errorf("%w: %d is negative", ErrStreamShare, want)
	case want == 0:
		return max(limit, 0), nil
	case want > limit:
		return 0, fmt.Errorf("%w: %d of %d would leave fewer than %d for ordinary requests", ErrStreamShare, want, maxConns, maxConns-limit)
	}
	return want, nil
}

// ClientNetwork is the client a request is counted as by the per-client limits: the
// socket's peer, or the address the last trustedProxies X-Forwarded-For hops name, as an
// IPv4 address or IPv6 /64 (clients.go). The event stream's replay limits use it too.
func ClientNetwork(r *http.Request, trustedProxies int) string {
	return clientNet(clientAddr(r, trustedProxies))
}
