package events

import (
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// The cost of resuming (docs/security.md): a stream that resumes with Last-Event-ID first
// reads and sends every stored event after that id, up to the whole log (100,000 events,
// about 19 MB and 0.18 s of CPU), so unbounded resumptions from one client take the
// faucet's cores from everyone. A resumption is therefore charged by the events it replays,
// from a token bucket of the client's and one of the whole faucet's (golang.org/x/time/rate,
// one token an event), and starts at most MaxReplay events back: the older ones are
// announced by a gap event {"type":"gap","from","to","reason":"replay_limit"} instead of
// sent. A resumption the buckets cannot pay now is refused with 429 replay_rate_limited and
// Retry-After before the stream starts. A connection without Last-Event-ID replays nothing
// and costs nothing here.

// Defaults of ReplayLimits: one client may replay MaxReplay events at once and 1,000 a second
// on average (about 2% of a core); all clients together 10,000 a second with bursts of
// 50,000.
const (
	DefaultMaxReplay       = 10_000
	DefaultReplayRate      = 1_000
	DefaultTotalReplayRate = 10_000
	DefaultTotalReplay     = 50_000
	maxReplayClients       = 100_000 // clients with a bucket; beyond, new ones share one
)

// ReplayLimits bounds the events replayed to resuming streams.
type ReplayLimits struct {
	// Client names the client of a request (the faucet's per-client network, behind its
	// trusted proxies); nil: every request is one client.
	Client func(*http.Request) string
	// MaxReplay is the most events one resumption replays, and the client's burst
	// (default DefaultMaxReplay).
	MaxReplay int
	// Rate is the events per second one client may replay on average (default
	// DefaultReplayRate); TotalRate and TotalBurst those of all clients together (defaults
	// DefaultTotalReplayRate and DefaultTotalReplay, at least MaxReplay).
	Rate       float64
	TotalRate  float64
	TotalBurst int
}

// replayLimiter holds the buckets of ReplayLimits.
type replayLimiter struct {
	cfg       ReplayLimits
	maxReplay uint64
	total     *rate.Limiter

	mu      sync.Mutex
	clients map[string]*rate.Limiter
	swept   time.Time
}

func newReplayLimiter(cfg ReplayLimits) *replayLimiter {
	if cfg.MaxReplay <= 0 {
		cfg.MaxReplay = DefaultMaxReplay
	}
	if cfg.Rate <= 0 {
		cfg.Rate = DefaultReplayRate
	}
	if cfg.TotalRate <= 0 {
		cfg.TotalRate = DefaultTotalReplayRate
	}
	if cfg.TotalBurst <= 0 {
		cfg.TotalBurst = DefaultTotalReplay
	}
	cfg.TotalBurst = max(cfg.TotalBurst, cfg.MaxReplay)
	if cfg.Client == nil {
		cfg.Client = func(*http.Request) string { return "" }
	}
	return &replayLimiter{cfg: cfg, maxReplay: uint64(cfg.MaxReplay), total: rate.NewLimiter(rate.Limit(cfg.TotalRate), cfg.TotalBurst),
		clients: map[string]*rate.Limiter{}}
}

// take charges n events (at most maxReplay) to r's client and to the faucet; when either
// bucket cannot pay them now nothing is taken and wait says when it could.
func (l *replayLimiter) take(r *http.Request, n uint64) (ok bool, wait time.Duration) {
	if n == 0 {
		return true, 0
	}
	now := time.Now()
	c := l.client(l.cfg.Client(r), now)
	cr := c.ReserveN(now, int(n))
	tr := l.total.ReserveN(now, int(n))
	if d := max(cr.DelayFrom(now), tr.DelayFrom(now)); !cr.OK() || !tr.OK() || d > 0 {
		cr.CancelAt(now)
		tr.CancelAt(now)
		return false, max(d, time.Second)
	}
	return true, 0
}

// client is the bucket of key, made full when new. Buckets full again are swept once a
// minute; when there are maxReplayClients, new clients share one.
func (l *replayLimiter) client(key string, now time.Time) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > time.Minute {
		l.swept = now
		for k, b := range l.clients {
			if b.TokensAt(now) >= float64(l.cfg.MaxReplay) {
				delete(l.clients, k)
			}
		}
	}
	b, ok := l.clients[key]
	if !ok {
		if len(l.clients) >= maxReplayClients {
			key = "\x00overflow"
			b = l.clients[key]
		}
		if b == nil {
			b = rate.NewLimiter(rate.Limit(l.cfg.Rate), l.cfg.MaxReplay)
			l.clients[key] = b
		}
	}
	return b
}
