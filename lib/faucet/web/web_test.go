package web

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/faucet/api"
)

const (
	addrA   = "tcoin1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqaaaa"
	addrB   = "tcoin1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqbbbb"
	txid    = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	hostile = `<img src=x onerror=alert(1)>"'&`
)

// fakeAPI answers the API paths the pages read, and records what it was asked.
type fakeAPI struct {
	mu       sync.Mutex
	reqs     []*http.Request
	bodies   []string
	claimErr *api.ErrorBody // the answer to POST /api/faucet, else paid
	total    uint64
	score    uint32 // addrA's score (default 612) and tier (default contributor)
	tier     string
	caller   api.Caller // of the last call (service_test.go)
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.reqs = append(f.reqs, r)
	f.bodies = append(f.bodies, string(b))
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	send := func(status int, v any) {
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	q := r.URL.Query()
	switch r.Method + " " + r.URL.Path {
	case "GET /api/status":
		send(200, api.StatusResult{BlockHeight: 321, MempoolSize: 4, FaucetBalance: "12345.60000000", FaucetAddress: addrA,
			FaucetImmature: "50.00000000", Network: "regtest", ClaimAmount: "100.00000000", CooldownSeconds: 3600, ClaimsPaid: 7})
	case "POST /api/faucet":
		if f.claimErr != nil {
			w.Header().Set("Retry-After", "1800")
			send(429, f.claimErr)
			return
		}
		send(200, api.ClaimResult{TxID: txid, Amount: "100.00000000"})
	case "GET /api/agent/directory":
		off, lim := uint64(0), uint64(20)
		if v := q.Get("offset"); v != "" {
			off = mustUint(v)
		}
		if v := q.Get("limit"); v != "" {
			lim = mustUint(v)
		}
		d := api.Directory{Total: f.total, Offset: off, Limit: lim, Agents: []api.DirectoryEntry{}}
		for i := off; i < min(off+lim, f.total); i++ {
			d.Agents = append(d.Agents, api.DirectoryEntry{Address: addrA, ConductScore: 700, Tier: "trusted", ContractsCompleted: i})
		}
		send(200, d)
	case "GET /api/agent/profile":
		switch q.Get("address") {
		case addrA:
			avg := 8.5
			f.mu.Lock()
			score, tier := f.score, f.tier
			f.mu.Unlock()
			if score == 0 {
				score, tier = 612, "contributor"
			}
			send(200, api.AgentProfile{Address: addrA, ConductScore: score, Tier: tier, ContractsCompleted: 3, ReviewsReceived: 2,
				AverageReviewScore: &avg, RegisteredAt: "2026-11-02T10:00:00Z", StakeTxID: txid})
		case hostile:
			send(200, api.AgentProfile{Address: hostile, ConductScore: 500, Tier: hostile})
		default:
			send(404, api.ErrorBody{Error: api.ErrorObject{Code: "agent_not_found", Message: "no agent " + q.Get("address")}})
		}
	case "GET /api/agent/contract":
		send(200, api.Contract{ContractID: q.Get("contract_id"), Initiator: addrA, Counterparty: addrB, ValueCoin: "2.50000000",
			Status: "open", CreatedHeight: 300, ExpiresAt: 330, Confirmed: true})
	case "GET /":
		send(200, map[string]string{"index": "json"})
	default:
		send(404, api.ErrorBody{Error: api.ErrorObject{Code: "not_found", Message: "no endpoint " + r.URL.Path}})
	}
}

func mustUint(s string) uint64 {
	var n uint64
	for _, c := range s {
		n = n*10 + uint64(c-'0')
	}
	return n
}

func (f *fakeAPI) last() (*http.Request, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		return nil, ""
	}
	return f.reqs[len(f.reqs)-1], f.bodies[len(f.bodies)-1]
}

func newTest(t *testing.T, payouts func(int) ([]Payout, error)) (*fakeAPI, http.Handler) {
	t.Helper()
	f := &fakeAPI{total: 45}
	return f, New(f, f, Options{Network: "regtest", Payouts: payouts, Caller: testCaller})
}

type answer struct {
	status int
	header http.Header
	body   string
}

func do(h http.Handler, method, target string, hdr map[string]string, body string) answer {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := httptest.NewRequest(method, target, rd)
	r.RemoteAddr = "198.51.100.7:4242"
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	b, _ := io.ReadAll(w.Result().Body)
	return answer{w.Code, w.Result().Header, string(b)}
}

var browser = map[string]string{"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}

func TestHomePage(t *testing.T) {
	when := time.Date(2026, 11, 2, 9, 8, 7, 0, time.UTC)
	f, h := newTest(t, func(n int) ([]Payout, error) {
		return []Payout{{TxID: txid, Time: when, Claims: []PaidClaim{{Address: addrB, Amount: "100.00000000"}}}}, nil
	})
	a := do(h, "GET", "/", browser, "")
	if a.status != 200 || !strings.HasPrefix(a.header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %d %s", a.status, a.header.Get("Content-Type"))
	}
	for _, want := range []string{`<html lang="en">`, `<main id="main"`, `name="viewport"`, "12345.6", "321", "Claims paid since start",
		addrA, "tcoin1qqqqqqqq", "09:08:07", `action="/claim"`, `<label for="address">`} {
		if !strings.Contains(a.body, want) {
			t.Errorf("home page lacks %q", want)
		}
	}
	checkHeaders(t, a)
	r, _ := f.last()
	if r.URL.Path != "/api/status" || r.RemoteAddr != "198.51.100.7:4242" {
		t.Fatalf("the page read %s for %s", r.URL.Path, r.RemoteAddr)
	}

	// A client that does not ask for HTML gets the API's answer at /.
	for _, hdr := range []map[string]string{nil, {"Accept": "application/json"}, {"Accept": "*/*"}} {
		a := do(h, "GET", "/", hdr, "")
		if a.status != 200 || !strings.Contains(a.body, `"index"`) || a.header.Get("Vary") != "Accept" {
			t.Fatalf("GET / with %v: %d %q Vary=%q", hdr, a.status, a.body, a.header.Get("Vary"))
		}
	}
	// Unknown paths and the API's paths go to the API.
	for _, p := range []string{"/api/status", "/openapi.json", "/nowhere", "/agentsx"} {
		do(h, "GET", p, browser, "")
		if r, _ := f.last(); r.URL.Path != p {
			t.Fatalf("GET %s reached the API as %s", p, r.URL.Path)
		}
	}
}

// checkHeaders checks a page's security and caching headers, and that every input has a
// label.
func checkHeaders(t *testing.T, a answer) {
	t.Helper()
	if csp := a.header.Get("Content-Security-Policy"); csp != ContentSecurityPolicy || strings.Contains(csp, "unsafe") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	if a.header.Get("Cache-Control") != "no-store" || a.header.Get("X-Content-Type-Options") != "nosniff" ||
		a.header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("headers %v", a.header)
	}
	if strings.Contains(a.body, "<script>") || strings.Contains(a.body, " style=") || strings.Contains(a.body, "<style") {
		t.Errorf("inline script or style in the page")
	}
	for _, m := range regexp.MustCompile(`<input[^>]*\bid="([^"]+)"`).FindAllStringSubmatch(a.body, -1) {
		if !strings.Contains(a.body, `<label for="`+m[1]+`"`) {
			t.Errorf("input %s has no label", m[1])
		}
	}
	if n, m := strings.Count(a.body, "<input"), len(regexp.MustCompile(`<input[^>]*\bid="`).FindAllString(a.body, -1)); n != m {
		t.Errorf("%d inputs, %d with an id", n, m)
	}
}

func TestClaimForm(t *testing.T) {
	f, h := newTest(t, nil)
	form := url.Values{"address": {"  " + addrB + " "}}.Encode()
	hdr := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin",
		"X-Forwarded-For": "203.0.113.9", "Accept": browser["Accept"]}
	a := do(h, "POST", "/claim", hdr, form)
	if a.status != 200 || !strings.Contains(a.body, txid) || !strings.Contains(a.body, `id="claim-result"`) {
		t.Fatalf("claim: %d\n%s", a.status, a.body)
	}
	checkHeaders(t, a)
	if !strings.Contains(a.body, "This server does not list its payouts") {
		t.Error("no payouts source, yet the page does not say so")
	}
	// The claim reached the API as its JSON body, for the browser's client.
	f.mu.Lock()
	var claim *http.Request
	var body string
	for i, r := range f.reqs {
		if r.URL.Path == "/api/faucet" {
			claim, body = r, f.bodies[i]
		}
	}
	f.mu.Unlock()
	if claim == nil || claim.Method != "POST" || body != `{"address":"`+addrB+`"}` || claim.RemoteAddr != "198.51.100.7:4242" ||
		claim.Header.Get("X-Forwarded-For") != "203.0.113.9" || claim.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("claim request %v %q", claim, body)
	}

	// A refusal shows the API's message with its status and Retry-After.
	f.claimErr = &api.ErrorBody{Error: api.ErrorObject{Code: "address_rate_limited", Message: "this address was paid <recently>"}}
	a = do(h, "POST", "/claim", hdr, form)
	if a.status != 429 || a.header.Get("Retry-After") != "1800" || !strings.Contains(a.body, "address_rate_limited") ||
		!strings.Contains(a.body, "this address was paid &lt;recently&gt;") || !strings.Contains(a.body, `value="`+addrB+`"`) {
		t.Fatalf("refused claim: %d %v\n%s", a.status, a.header, a.body)
	}

	// Another site's form cannot claim with the visitor's limits.
	n := len(f.reqs)
	for _, x := range []map[string]string{{"Sec-Fetch-Site": "cross-site"}, {"Origin": "https://evil.example"}} {
		x["Content-Type"] = "application/x-www-form-urlencoded"
		if a := do(h, "POST", "/claim", x, form); a.status != 403 {
			t.Fatalf("cross-origin claim %v: %d", x, a.status)
		}
	}
	if len(f.reqs) != n {
		t.Fatal("a cross-origin claim reached the API")
	}
	if a := do(h, "GET", "/claim", browser, ""); a.status != 303 || a.header.Get("Location") != "/" {
		t.Fatalf("GET /claim: %d %v", a.status, a.header)
	}
	if a := do(h, "PUT", "/claim", browser, ""); a.status != 405 || a.header.Get("Allow") != "GET, HEAD, POST" {
		t.Fatalf("PUT /claim: %d %v", a.status, a.header)
	}
}

func TestDirectoryPages(t *testing.T) {
	_, h := newTest(t, nil)
	a := do(h, "GET", "/agents?offset=20", browser, "")
	checkHeaders(t, a)
	for _, want := range []string{"Agents 21–40 of 45", "Page 2 of 3", `href="/agents"`, `href="/agents?offset=40"`,
		`href="/agents/` + addrA + `"`, `class="tier tier-trusted">trusted<`, "exemplary", "900–1000", "×0.5"} {
		if !strings.Contains(a.body, want) {
			t.Errorf("directory page 2 lacks %q", want)
		}
	}
	a = do(h, "GET", "/agents?offset=40&limit=20", browser, "")
	if !strings.Contains(a.body, `href="/agents?limit=20&amp;offset=20"`) || strings.Contains(a.body, `rel="next"`) {
		t.Errorf("last page's links:\n%s", a.body)
	}
	if a := do(h, "GET", "/agents?address=+"+addrA, browser, ""); a.status != 303 || a.header.Get("Location") != "/agents/"+addrA {
		t.Fatalf("lookup: %d %v", a.status, a.header)
	}
	if a := do(h, "POST", "/agents", browser, ""); a.status != 405 {
		t.Fatalf("POST /agents: %d", a.status)
	}
}

func TestProfileAndContractPages(t *testing.T) {
	_, h := newTest(t, nil)
	a := do(h, "GET", "/agents/"+addrA, browser, "")
	checkHeaders(t, a)
	for _, want := range []string{"612", "contributor", "8.5 of 10", "2026-11-02 10:00:00 UTC", txid, "Score history", `<label for="contract-id">`} {
		if !strings.Contains(a.body, want) {
			t.Errorf("profile lacks %q", want)
		}
	}
	// What the API returns is text, never markup.
	a = do(h, "GET", "/agents/"+url.PathEscape(hostile), browser, "")
	if a.status != 200 || strings.Contains(a.body, "<img src=x") || !strings.Contains(a.body, "&lt;img src=x onerror=alert(1)&gt;") {
		t.Fatalf("hostile profile: %d\n%s", a.status, a.body)
	}
	a = do(h, "GET", "/agents/"+addrB, browser, "")
	if a.status != 404 || !strings.Contains(a.body, "agent_not_found") || !strings.Contains(a.body, "no agent "+addrB) {
		t.Fatalf("unknown agent: %d\n%s", a.status, a.body)
	}

	a = do(h, "GET", "/contracts/"+txid, browser, "")
	checkHeaders(t, a)
	// Height 321: the next block, 322, is below the expiry (330): 8 blocks left.
	for _, want := range []string{"2.5 COIN", `href="/agents/` + addrA + `"`, `href="/agents/` + addrB + `"`, "next 8 blocks",
		`class="status status-open"`, "(confirmed)"} {
		if !strings.Contains(a.body, want) {
			t.Errorf("contract page lacks %q", want)
		}
	}
	if a := do(h, "GET", "/contracts?id=ABC", browser, ""); a.status != 303 || a.header.Get("Location") != "/contracts/abc" {
		t.Fatalf("contract lookup: %d %v", a.status, a.header)
	}
	if a := do(h, "GET", "/contracts", browser, ""); a.status != 200 || !strings.Contains(a.body, `<label for="contract-id">`) {
		t.Fatalf("contracts: %d", a.status)
	}
}

func TestStaticFiles(t *testing.T) {
	_, h := newTest(t, nil)
	page := do(h, "GET", "/", browser, "").body
	urls := regexp.MustCompile(`(?:href|src)="(/static/[^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(urls) < 3 {
		t.Fatalf("the page links %d static files", len(urls))
	}
	for _, m := range urls {
		u := strings.ReplaceAll(m[1], "&amp;", "&")
		a := do(h, "GET", u, nil, "")
		if a.status != 200 || a.header.Get("Cache-Control") != "public, max-age=31536000, immutable" ||
			a.header.Get("Content-Security-Policy") == "" || a.header.Get("ETag") == "" {
			t.Errorf("%s: %d %v", u, a.status, a.header)
		}
		if strings.HasSuffix(strings.Split(u, "?")[0], ".js") && a.header.Get("Content-Type") != "text/javascript; charset=utf-8" {
			t.Errorf("%s: %s", u, a.header.Get("Content-Type"))
		}
		again := do(h, "GET", u, map[string]string{"If-None-Match": a.header.Get("ETag")}, "")
		if again.status != 304 {
			t.Errorf("%s with If-None-Match: %d", u, again.status)
		}
	}
	if a := do(h, "GET", "/static/style.css", nil, ""); a.header.Get("Cache-Control") != "public, max-age=300" {
		t.Errorf("unversioned: %v", a.header)
	}
	if a := do(h, "GET", "/static/nothing.js", browser, ""); a.status != 404 || !strings.Contains(a.body, "<main") {
		t.Errorf("missing static file: %d", a.status)
	}
}

func TestTiersFromConsensus(t *testing.T) {
	want := []tierInfo{{"observer", 0, 349, "3"}, {"participant", 350, 549, "1.5"}, {"contributor", 550, 699, "1"},
		{"trusted", 700, 899, "0.75"}, {"exemplary", 900, 1000, "0.5"}}
	if len(tiers) != len(want) {
		t.Fatalf("tiers %v", tiers)
	}
	for i := range want {
		if tiers[i] != want[i] {
			t.Errorf("tier %d: %+v, want %+v", i, tiers[i], want[i])
		}
	}
	if coin("100.00000000") != "100" || coin("2.50000000") != "2.5" || coin("0.00000001") != "0.00000001" {
		t.Error("coin")
	}
	if formatDuration(time.Hour) != "1 hour" || formatDuration(90*time.Minute) != "90 minutes" || formatDuration(30*time.Second) != "30 seconds" {
		t.Error("formatDuration")
	}
}
