package faucet

import (
	"sync"
	"time"
)

// ipLimiter is a token bucket per client IP: burst requests at once, then rate per minute.
// Buckets idle long enough to be full again are dropped, and the map is bounded: when it
// is full, new clients share one overflow bucket rather than growing memory.
type ipLimiter struct {
	mu      sync.Mutex
	perSec  float64
	burst   float64
	buckets map[string]*bucket
	max     int
	now     func() time.Time
	swept   time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

const maxIPBuckets = 100_000

func newIPLimiter(perMinute float64, burst int) *ipLimiter {
	if burst < 1 {
		burst = 1
	}
	return &ipLimiter{perSec: perMinute / 60, burst: float64(burst), buckets: map[string]*bucket{},
		max: maxIPBuckets, now: time.Now}
}

// allow takes a token for ip; when there is none it returns how long until there is.
func (l *ipLimiter) allow(ip string) (bool, time.Duration) {
	if l == nil || l.perSec <= 0 {
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
			b = &bucket{tokens: l.burst, last: now}
			l.buckets[ip] = b
		}
	}
	b.tokens = min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.perSec)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.perSec * float64(time.Second))
}

// sweep drops the buckets that have refilled completely.
func (l *ipLimiter) sweep(now time.Time) {
	l.swept = now
	full := time.Duration(l.burst / l.perSec * float64(time.Second))
	for ip, b := range l.buckets {
		if now.Sub(b.last) > full {
			delete(l.buckets, ip)
		}
	}
}
