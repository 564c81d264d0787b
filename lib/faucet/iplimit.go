package faucet

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// ClientLimiter is a token bucket (golang.org/x/time/rate) per client: burst requests at once,
// then rate per minute. Buckets idle long enough to be full again are dropped, and the map
// is bounded: when it is full, new clients share one overflow bucket rather than growing
// memory.
type ClientLimiter struct {
	mu      sync.Mutex
	limit   rate.Limit
	burst   int
	buckets map[string]*rate.Limiter
	max     int
	now     func() time.Time
	swept   time.Time
}

const maxIPBuckets = 100_000

// NewClientLimiter is a ClientLimiter of perMinute requests per client, in bursts of burst.
func NewClientLimiter(perMinute float64, burst int) *ClientLimiter {
	if burst < 1 {
		burst = 1
	}
	return &ClientLimiter{limit: rate.Limit(perMinute / 60), burst: burst, buckets: map[string]*rate.Limiter{},
		max: maxIPBuckets, now: time.Now}
}

// Allow takes a token for client ip; when there is none it returns how long until there is.
func (l *ClientLimiter) Allow(ip string) (bool, time.Duration) {
	if l == nil || l.limit <= 0 {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.Sub(l.swept) > time.Minute {
		l.sweep(now)
	}
	b, ok := l.buckets[ip]
	if !ok {
		if len(l.buckets) >= l.max {
			ip = "overflow"
			b = l.buckets[ip]
		}
		if b == nil {
			b = rate.NewLimiter(l.limit, l.burst)
			l.buckets[ip] = b
		}
	}
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// sweep drops the buckets that have refilled completely.
func (l *ClientLimiter) sweep(now time.Time) {
	l.swept = now
	for ip, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.burst) {
			delete(l.buckets, ip)
		}
	}
}
