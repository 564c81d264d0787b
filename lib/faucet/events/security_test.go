package events

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The probes of docs/security.md against the stream itself.

// Last-Event-ID 18446744073709551615 (the largest id) must not wrap to a gap "from 0 to 0".
func TestStreamLastEventIDMaxNoBogusGap(t *testing.T) {
	h := newTestHub(t, 0, 0)
	publish(t, h, Event{Type: TypeVouched}, Event{Type: TypeVouched})
	srv := httptest.NewServer(h.Handler(HandlerConfig{Heartbeat: 50 * time.Millisecond}))
	t.Cleanup(srv.Close)
	ch, _ := openStream(t, srv.URL, "18446744073709551615")
	waitSubs(t, h, 1)
	publish(t, h, Event{Type: TypeReviewed})
	for {
		m := nextEvent(t, ch)
		if m.event == "gap" && strings.Contains(m.data, `"from":0,`) {
			t.Fatalf("bogus gap: %s", m.data)
		}
		if m.event == TypeReviewed {
			if m.id != "3" {
				t.Fatalf("live event %+v, want id 3", m)
			}
			return
		}
	}
}

// A subscriber costs a few KiB, not a preallocated queue of 1,024 copies of Event (328 KiB).
func TestSubscriberAllocatesLittle(t *testing.T) {
	h := newTestHub(t, 0, 0)
	const n = 200
	subs := make([]*Subscription, 0, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < n; i++ {
		subs = append(subs, h.SubscribeLive(Filter{}))
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / n
	for _, s := range subs {
		s.Cancel()
	}
	if per > 16<<10 {
		t.Fatalf("a subscription allocates %d bytes, want at most 16 KiB", per)
	}
}

// A resumption is charged by the events it replays: it starts at most MaxReplay events
// back (a gap with reason replay_limit before), and one that the client's bucket cannot
// pay is refused with 429 and Retry-After.
func TestReplayChargedByCost(t *testing.T) {
	h := newTestHub(t, 0, 0)
	evs := make([]Event, 100)
	for i := range evs {
		evs[i] = Event{Type: TypeVouched}
	}
	publish(t, h, evs...)
	srv := httptest.NewServer(h.Handler(HandlerConfig{Heartbeat: time.Second,
		Replay: ReplayLimits{MaxReplay: 50, Rate: 1, TotalRate: 1000, TotalBurst: 1000}}))
	t.Cleanup(srv.Close)
	ch, cancel := openStream(t, srv.URL, "0")
	if m := nextEvent(t, ch); m.event != "gap" || !strings.Contains(m.data, `"from":1,"to":50,"reason":"replay_limit"`) {
		t.Fatalf("first message %+v, want the replay_limit gap 1..50", m)
	}
	if m := nextEvent(t, ch); m.id != "51" {
		t.Fatalf("after the gap: %+v, want id 51", m)
	}
	cancel()
	// The bucket is empty: the same replay again is refused before the stream starts.
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Last-Event-ID", "0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("second replay: %d Retry-After %q, want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// A connection without Last-Event-ID replays nothing and is served.
	live, _ := openStream(t, srv.URL, "")
	waitSubs(t, h, 1)
	publish(t, h, Event{Type: TypeReviewed})
	if m := nextEvent(t, live); m.id != "101" {
		t.Fatalf("live: %+v", m)
	}
}

// A reader that never reads is disconnected: the stream ends after MaxAge even while the
// kernel's buffers still take its pings.
func TestStreamNonReaderDropped(t *testing.T) {
	h := newTestHub(t, 0, 0)
	srv := httptest.NewServer(h.Handler(HandlerConfig{Heartbeat: 20 * time.Millisecond, MaxAge: 300 * time.Millisecond}))
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n") // and never read
	waitSubs(t, h, 1)
	for deadline := time.Now().Add(5 * time.Second); h.Subscribers() > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a reader that never reads still holds its stream after 5 s")
		}
	}
	// What it would have read ends with the expiry comment.
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	var all strings.Builder
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		all.WriteString(sc.Text() + "\n")
	}
	if !strings.Contains(all.String(), ": stream expired") {
		t.Fatalf("the stream did not end with the expiry comment:\n%s", all.String())
	}
}
