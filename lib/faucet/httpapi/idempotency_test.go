package httpapi

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// postKey posts body to path with an Idempotency-Key: status, replay header, body.
func postKey(t *testing.T, h *harness, path, key, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.http.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set(IdempotencyHeader, key)
	}
	resp, err := h.http.Client().Do(req)
	if err != nil {
		t.Error(err)
		return 0, "", ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q", path, ct)
	}
	return resp.StatusCode, resp.Header.Get(idemReplayHeader), string(b)
}

// A retried send or agent operation with the same Idempotency-Key answers the first result
// and builds no second transaction; the same key on another body is refused.
func TestIdempotencyKey(t *testing.T) {
	h := regtestHarness(t, 6, noIPLimit)
	a := h.funded(t)
	h.mine(1)
	to, _ := newAddress(t)
	send := mnemonicBody(a, field("to", to), field("amount", 1))

	n := h.sends()
	st, replayed, first := postKey(t, h, "/api/wallet/send", "retry-1", send)
	if st != 200 || replayed != "" || h.sends() != n+1 {
		t.Fatalf("first send: %d %q %s, %d sent", st, replayed, first, h.sends()-n)
	}
	st, replayed, again := postKey(t, h, "/api/wallet/send", "retry-1", send)
	if st != 200 || replayed != "true" || again != first || h.sends() != n+1 {
		t.Fatalf("retry: %d %q %s (first %s), %d sent", st, replayed, again, first, h.sends()-n)
	}
	st, _, body := postKey(t, h, "/api/wallet/send", "retry-1", mnemonicBody(a, field("to", to), field("amount", 2)))
	if st != 422 || !strings.Contains(body, `"idempotency_key_reused"`) || h.sends() != n+1 {
		t.Fatalf("same key, other body: %d %s", st, body)
	}
	// The same key on another endpoint is another request too.
	if st, _, body := postKey(t, h, "/api/agent/register", "retry-1", mnemonicBody(a)); st != 422 {
		t.Fatalf("same key, other endpoint: %d %s", st, body)
	}
	// Without a key, or with a new one, the same body is a new transaction.
	if st, _, other := postKey(t, h, "/api/wallet/send", "", send); st != 200 || other == first || h.sends() != n+2 {
		t.Fatalf("no key: %d %s", st, other)
	}
	if st, _, body := postKey(t, h, "/api/wallet/send", strings.Repeat("k", 256), send); st != 400 || !strings.Contains(body, "invalid_idempotency_key") {
		t.Fatalf("a bad key: %d %s", st, body)
	}

	// Concurrent retries of an agent operation: one transaction, one answer for all.
	b := h.funded(t)
	h.mine(1)
	n = h.sends()
	var wg sync.WaitGroup
	answers := make([]string, 6)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, _, body := postKey(t, h, "/api/agent/register", "reg-b", mnemonicBody(b))
			if st != 200 {
				t.Errorf("register %d: %d %s", i, st, body)
			}
			answers[i] = body
		}()
	}
	wg.Wait()
	for _, ans := range answers[1:] {
		if ans != answers[0] {
			t.Errorf("answers differ: %s / %s", ans, answers[0])
		}
	}
	if got := h.sends() - n; got != 1 {
		t.Errorf("%d concurrent retries sent %d transactions", len(answers), got)
	}
}

// The store keeps at most max keys and each for ttl, oldest out first.
func TestIdempotencyStoreBounds(t *testing.T) {
	st := newIdemStore(3, 100, time.Hour)
	now := time.Unix(1e9, 0)
	st.now = func() time.Time { return now }
	var d [32]byte
	for _, k := range []string{"a", "b", "c"} {
		e, owner := st.begin(k, d)
		if !owner {
			t.Fatalf("%s: not new", k)
		}
		st.finish(e, 200, "application/json", []byte("{}"), true)
	}
	if _, owner := st.begin("a", d); owner {
		t.Fatal("a was forgotten early")
	}
	e, _ := st.begin("d", d) // the fourth key pushes out the oldest
	st.finish(e, 200, "", nil, true)
	if _, owner := st.begin("a", d); !owner || st.len() > 3 {
		t.Fatalf("a kept past the bound, %d keys", st.len())
	}
	now = now.Add(time.Hour)
	eb, owner := st.begin("b", d)
	if !owner || st.len() != 1 {
		t.Fatalf("b kept past its time, %d keys", st.len())
	}
	st.finish(eb, 200, "", make([]byte, 60), true)
	// The answers' bytes are bounded too: a large one pushes the older out.
	e, _ = st.begin("big", d)
	st.finish(e, 200, "", make([]byte, 60), true)
	if _, owner := st.begin("big", d); owner {
		t.Fatal("the newest answer was dropped")
	}
	if _, owner := st.begin("b", d); !owner || st.len() != 2 {
		t.Fatalf("b kept over the byte bound: %d keys", st.len())
	}
	// An answer not kept (5xx) forgets the key: the retry runs.
	e, _ = st.begin("x", d)
	st.finish(e, 503, "", nil, false)
	if _, owner := st.begin("x", d); !owner {
		t.Fatal("a 503 answer was kept")
	}
}
