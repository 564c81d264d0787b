package events

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func newTestHub(t testing.TB, retention, buffer int) *Hub {
	t.Helper()
	s, err := OpenStore(filepath.Join(t.TempDir(), "events"), retention)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return NewHub(s, buffer)
}

// sseMsg is one message of a stream: an event, or a comment.
type sseMsg struct {
	id, event, data, comment string
}

// openStream connects to url with lastID (when not empty) and returns the messages as
// they come; the stream ends with the test or when cancel is called.
func openStream(t testing.TB, url, lastID string) (<-chan sseMsg, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		t.Fatalf("%s: %d %s", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ch := make(chan sseMsg, 1000)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var m sseMsg
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if m != (sseMsg{}) {
					ch <- m
				}
				m = sseMsg{}
			case strings.HasPrefix(line, ":"):
				m.comment = strings.TrimSpace(line[1:])
			case strings.HasPrefix(line, "id: "):
				m.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				m.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				m.data = line[6:]
			}
		}
	}()
	t.Cleanup(cancel)
	return ch, cancel
}

// nextEvent waits for the next message with an event (comments skipped).
func nextEvent(t testing.TB, ch <-chan sseMsg) sseMsg {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case m, ok := <-ch:
			if !ok {
				t.Fatal("the stream ended")
			}
			if m.event != "" {
				return m
			}
		case <-timeout:
			t.Fatal("no event within 5 s")
		}
	}
}

func publish(t testing.TB, h *Hub, evs ...Event) []Event {
	t.Helper()
	out, err := h.Publish(evs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The stream sends matching events live, resumes after Last-Event-ID with the stored ones
// and then the live ones (no gap, no repeat), says "gap" when the id is older than the
// store keeps, and refuses bad filters.
func TestHandlerStreamAndResume(t *testing.T) {
	h := newTestHub(t, 10, 0)
	srv := httptest.NewServer(h.Handler(HandlerConfig{Heartbeat: 50 * time.Millisecond}))
	t.Cleanup(srv.Close) // after the streams' cancels, registered later
	a, b := "tcoin1a", "tcoin1b"

	all, _ := openStream(t, srv.URL, "")
	forB, _ := openStream(t, srv.URL+"?address="+b, "")
	created, _ := openStream(t, srv.URL+"?types=contract_created,agent_registered", "")
	waitSubs(t, h, 3)
	publish(t, h, Event{Type: TypeAgentRegistered, Actor: a}, Event{Type: TypeContractCreated, Actor: a, Initiator: a, Counterparty: b, Status: StatusPending})
	for _, want := range []string{"1 agent_registered", "2 contract_created"} {
		if m := nextEvent(t, all); m.id+" "+m.event != want {
			t.Fatalf("all: %+v, want %s", m, want)
		}
	}
	m := nextEvent(t, forB)
	var e Event
	if err := json.Unmarshal([]byte(m.data), &e); err != nil || m.id != "2" || e.ID != 2 || e.Counterparty != b || e.Status != StatusPending {
		t.Fatalf("for B: %+v %v", m, err)
	}
	if m := nextEvent(t, created); m.id != "1" {
		t.Fatalf("types: %+v", m)
	}
	// Heartbeats.
	deadline := time.After(2 * time.Second)
	for got := false; !got; {
		select {
		case m := <-forB:
			got = m.comment == "ping"
		case <-deadline:
			t.Fatal("no heartbeat")
		}
	}

	// Resume after 1 with B's filter: 2 from the store, then 3 and 4 live; 5 is not B's.
	resumed, _ := openStream(t, srv.URL+"?address="+b, "1")
	waitSubs(t, h, 4)
	publish(t, h, Event{Type: TypeContractFulfilled, Actor: b, Initiator: a, Counterparty: b},
		Event{Type: TypeRetracted, Retracts: 2, RetractedType: TypeContractCreated, Counterparty: b},
		Event{Type: TypeAgentRegistered, Actor: "tcoin1c"})
	for _, want := range []string{"2", "3", "4"} {
		if m := nextEvent(t, resumed); m.id != want {
			t.Fatalf("resumed: %+v, want id %s", m, want)
		}
	}
	// ?last_event_id= does the same for a first connection.
	q, _ := openStream(t, srv.URL+"?last_event_id=4", "")
	if m := nextEvent(t, q); m.id != "5" {
		t.Fatalf("?last_event_id: %+v", m)
	}

	// Past the retention (10): a gap, then what is kept.
	for i := 0; i < 12; i++ {
		publish(t, h, Event{Type: TypeReviewed, Actor: a})
	}
	first, _ := h.Store().Bounds()
	old, _ := openStream(t, srv.URL, "2")
	if m := nextEvent(t, old); m.event != "gap" || !strings.Contains(m.data, `"from":3,"to":`+strconv.FormatUint(first-1, 10)) {
		t.Fatalf("gap: %+v", m)
	}
	if m := nextEvent(t, old); m.id != strconv.FormatUint(first, 10) {
		t.Fatalf("after the gap: %+v, want %d", m, first)
	}

	for _, q := range []string{"?address=nope&x", "?types=bogus"} {
		hs := HandlerConfig{HRP: "tcoin"}
		rec := httptest.NewRecorder()
		h.Handler(hs).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/agent/events"+q, nil))
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), `"code":"invalid_`) {
			t.Errorf("%s: %d %s", q, rec.Code, rec.Body.String())
		}
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/api/agent/events", nil)
	req.Header.Set("Last-Event-ID", "x")
	h.Handler(HandlerConfig{}).ServeHTTP(rec, req)
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "invalid_last_event_id") {
		t.Errorf("bad Last-Event-ID: %d %s", rec.Code, rec.Body.String())
	}
}

func waitSubs(t testing.TB, h *Hub, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); h.Subscribers() < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d subscribers, want %d", h.Subscribers(), n)
		}
	}
}

// A subscriber that does not read is dropped when its buffer is full; the others get
// every event and publishing never waits.
func TestSlowSubscriberDropped(t *testing.T) {
	h := newTestHub(t, 0, 4)
	slow, cancelSlow := h.Subscribe(Filter{})
	defer cancelSlow()
	fast := h.SubscribeLive(Filter{})
	defer fast.Cancel()
	for i := 0; i < 10; i++ {
		publish(t, h, Event{Type: TypeVouched})
		if e := <-fast.C; e.ID != uint64(i+1) {
			t.Fatalf("fast subscriber: event %d, want %d", e.ID, i+1)
		}
	}
	n := 0
	for range slow {
		n++
	}
	if n != 4 {
		t.Fatalf("the slow subscriber got %d events before being dropped, want its buffer's 4", n)
	}
	if h.Subscribers() != 1 {
		t.Fatalf("%d subscribers, want 1", h.Subscribers())
	}
}
