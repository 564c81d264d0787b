package httpapi

import (
	"github.com/cointoolkit/coin/lib/faucet"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/faucet/payout"
)

// withLimits sets protocol §14's limits (0: the default, negative: off).
func withLimits(perClient, budget int, rate float64, burst, proxies int) harnessOpt {
	return func(_ *payout.EngineConfig, c *Config) {
		c.ClaimsPerClient, c.BudgetPerHour, c.RequestRate, c.RequestBurst, c.TrustedProxies = perClient, budget, rate, burst, proxies
	}
}

// doFrom is h.do with an X-Forwarded-For header (read only with trusted proxies).
func (h *harness) doFrom(t testing.TB, xff, method, path, body string) response {
	t.Helper()
	req, err := http.NewRequest(method, h.http.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	resp, err := h.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Raw: b.String()}
}

func (r response) code() string {
	i := strings.Index(r.Raw, `"code":"`)
	if i < 0 {
		return ""
	}
	rest := r.Raw[i+8:]
	return rest[:strings.IndexByte(rest, '"')]
}

func retryAfter(t testing.TB, r response) int {
	t.Helper()
	v, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || v < 1 {
		t.Fatalf("429 without a valid Retry-After: %q", r.Header.Get("Retry-After"))
	}
	return v
}

// The report: 12 fresh addresses from one client were all paid at once. With the
// default limits (5 claims per client network per hour) the 6th and later are refused
// with 429 client_rate_limited and a Retry-After of about an hour, concurrent or not; a
// claim that was refused for its address does not count.
func TestClaimsPerClientDefault(t *testing.T) {
	// testnet's default, given: regtest's (testNet here) is no limit (TestDefaultLimits).
	h := regtestHarness(t, 10, withLimits(faucet.DefaultClaimsPerClient, 0, 0, 0, 0), withAmount(10*amount.Coin))
	paid := h.do(t, http.MethodPost, "/api/faucet", claimBody(mustAddr(t)))
	if paid.Status != 200 {
		t.Fatal(paid.Raw)
	}
	var mu sync.Mutex
	codes := map[string]int{}
	var wg sync.WaitGroup
	for i := 0; i < 11; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := h.doFrom(t, "", http.MethodPost, "/api/faucet", claimBody(mustAddr(t)))
			mu.Lock()
			defer mu.Unlock()
			if r.Status == 429 {
				if ra := retryAfter(t, r); ra < 3500 || ra > 3600 {
					t.Errorf("Retry-After %d", ra)
				}
			}
			codes[strconv.Itoa(r.Status)+" "+r.code()]++
		}()
	}
	wg.Wait()
	if codes["200 "] != 4 || codes["429 client_rate_limited"] != 7 {
		t.Fatalf("12 addresses from one client: %v, want 5 paid in all and 7 client_rate_limited", codes)
	}
}

// --trusted-proxies N: the client is the hop N places left of the socket's peer in
// X-Forwarded-For; without trusted proxies the header is ignored (a client cannot choose its
// own address). Clients of one IPv6 /64 share a count.
func TestClaimsPerClientBehindProxy(t *testing.T) {
	h := regtestHarness(t, 20, withLimits(2, -1, -1, 0, 1))
	claim := func(xff string) response {
		return h.doFrom(t, xff, http.MethodPost, "/api/faucet", claimBody(mustAddr(t)))
	}
	for i := 0; i < 2; i++ {
		if r := claim("203.0.113.7"); r.Status != 200 {
			t.Fatal(r.Raw)
		}
	}
	if r := claim("203.0.113.7"); r.Status != 429 || r.code() != faucet.CodeClientRateLimited {
		t.Fatalf("third claim of one client: %d %s", r.Status, r.Raw)
	}
	// A client that writes its own X-Forwarded-For is still the address the proxy saw.
	if r := claim("198.51.100.1, 203.0.113.7"); r.Status != 429 {
		t.Fatalf("spoofed hop: %d %s", r.Status, r.Raw)
	}
	if r := claim("203.0.113.8"); r.Status != 200 {
		t.Fatalf("another client: %d %s", r.Status, r.Raw)
	}
	for _, a := range []string{"2001:db8:1:2::1", "2001:db8:1:2:ffff::9"} {
		if r := claim(a); r.Status != 200 {
			t.Fatal(r.Raw)
		}
	}
	if r := claim("2001:db8:1:2:aaaa::3"); r.Status != 429 || r.code() != faucet.CodeClientRateLimited {
		t.Fatalf("third claim of one IPv6 /64: %d %s", r.Status, r.Raw)
	}
	if r := claim("2001:db8:1:3::1"); r.Status != 200 {
		t.Fatalf("another /64: %d %s", r.Status, r.Raw)
	}
}

// The global hourly budget: once it is paid every claim is 429 budget_exhausted; claims
// that were not paid (the faucet is empty) do not spend it.
func TestBudgetPerHour(t *testing.T) {
	h := newHarness(t, 1, withLimits(-1, 2, -1, 0, 0), withAmount(20*amount.Coin))
	for i := 0; i < 2; i++ {
		if r := h.do(t, http.MethodPost, "/api/faucet", claimBody(mustAddr(t))); r.Status != 200 {
			t.Fatal(r.Raw)
		}
	}
	r := h.doFrom(t, "", http.MethodPost, "/api/faucet", claimBody(mustAddr(t)))
	if r.Status != 429 || r.code() != faucet.CodeBudgetExhausted || retryAfter(t, r) < 3500 {
		t.Fatalf("claim beyond the budget: %d %s", r.Status, r.Raw)
	}

	h = newHarness(t, 1, withLimits(-1, 2, -1, 0, 0), withAmount(40*amount.Coin))
	if r := h.do(t, http.MethodPost, "/api/faucet", claimBody(mustAddr(t))); r.Status != 200 {
		t.Fatal(r.Raw)
	}
	if r := h.doFrom(t, "", http.MethodPost, "/api/faucet", claimBody(mustAddr(t))); r.Status != 503 {
		t.Fatalf("claim beyond the funds: %d %s", r.Status, r.Raw)
	}
	h.rn.Fund(t, h.key.Address, 1)
	waitFor(t, func() bool { return h.engine.Status().Spendable > 40*amount.Coin })
	if r := h.do(t, http.MethodPost, "/api/faucet", claimBody(mustAddr(t))); r.Status != 200 {
		t.Fatalf("the unpaid claim spent the budget: %s", r.Raw)
	}
}

// Every endpoint, unknown paths included, has a token bucket per client: bursts of
// RequestBurst, then RequestRate per second; refusals are 429 client_rate_limited.
func TestRequestRate(t *testing.T) {
	h := regtestHarness(t, 1, withLimits(-1, -1, 1, 5, 0))
	for i := 0; i < 5; i++ {
		path := []string{"/api/status", "/api/wallet/new", "/nope"}[i%3]
		if r := h.doFrom(t, "", http.MethodGet, path, ""); r.Status == 429 {
			t.Fatalf("request %d within the burst: %s", i, r.Raw)
		}
	}
	r := h.doFrom(t, "", http.MethodGet, "/api/status", "")
	if r.Status != 429 || r.code() != faucet.CodeClientRateLimited || retryAfter(t, r) != 1 {
		t.Fatalf("request beyond the burst: %d %s %v", r.Status, r.Raw, r.Header)
	}
	time.Sleep(1100 * time.Millisecond)
	if r := h.doFrom(t, "", http.MethodGet, "/api/status", ""); r.Status != 200 {
		t.Fatalf("after a second: %d %s", r.Status, r.Raw)
	}
}

func TestClientAddr(t *testing.T) {
	cases := []struct {
		peer, xff string
		proxies   int
		want      string
	}{
		{"192.0.2.1:5000", "203.0.113.5", 0, "192.0.2.1"},
		{"192.0.2.1:5000", "203.0.113.5", 1, "203.0.113.5"},
		{"192.0.2.1:5000", "1.1.1.1, 203.0.113.5", 1, "203.0.113.5"},
		{"192.0.2.1:5000", "1.1.1.1, 203.0.113.5", 2, "1.1.1.1"},
		{"192.0.2.1:5000", "203.0.113.5", 3, "203.0.113.5"},
		{"192.0.2.1:5000", "junk, 203.0.113.5", 2, "203.0.113.5"},
		{"192.0.2.1:5000", "", 1, "192.0.2.1"},
		{"[::ffff:192.0.2.9]:5000", "", 0, "192.0.2.9"},
		{"[2001:db8::1]:5000", "", 0, "2001:db8::1"},
	}
	for _, c := range cases {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = c.peer
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := clientAddr(r, c.proxies).String(); got != c.want {
			t.Errorf("peer %s, X-Forwarded-For %q, %d proxies: %s, want %s", c.peer, c.xff, c.proxies, got, c.want)
		}
	}
	for a, want := range map[string]string{"192.0.2.1": "192.0.2.1", "2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64"} {
		if got := clientNet(netip.MustParseAddr(a)); got != want {
			t.Errorf("clientNet(%s) = %s, want %s", a, got, want)
		}
	}
}

func mustAddr(t testing.TB) string {
	a, _ := newAddress(t)
	return a
}

func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The per-client and budget counts survive a restart: the claim records keep each claim's
// client network, and a server counts the records of the last hour when it starts. Before,
// both counts lived in memory only and every restart gave each client five more claims.
func TestLimitsSurviveRestart(t *testing.T) {
	h := regtestHarness(t, 10, withLimits(2, -1, -1, 0, 0), withAmount(10*amount.Coin))
	for i := 0; i < 2; i++ {
		if r := h.do(t, http.MethodPost, "/api/faucet", claimBody(mustAddr(t))); r.Status != 200 {
			t.Fatal(r.Raw)
		}
	}
	h.stop()
	h.start(t)
	r := h.doFrom(t, "", http.MethodPost, "/api/faucet", claimBody(mustAddr(t)))
	if r.Status != 429 || r.code() != faucet.CodeClientRateLimited || retryAfter(t, r) < 3500 {
		t.Fatalf("third claim of one client after a restart: %d %s", r.Status, r.Raw)
	}

	h = regtestHarness(t, 10, withLimits(-1, 2, -1, 0, 0), withAmount(10*amount.Coin))
	for i := 0; i < 2; i++ {
		if r := h.do(t, http.MethodPost, "/api/faucet", claimBody(mustAddr(t))); r.Status != 200 {
			t.Fatal(r.Raw)
		}
	}
	h.stop()
	h.start(t)
	if r := h.doFrom(t, "", http.MethodPost, "/api/faucet", claimBody(mustAddr(t))); r.Status != 429 || r.code() != faucet.CodeBudgetExhausted {
		t.Fatalf("claim beyond the budget after a restart: %d %s", r.Status, r.Raw)
	}
}
