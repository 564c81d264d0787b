package web

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/faucet/api"
)

// The pages: what each reads from the API and hands its template.

// layout is what every page's frame shows; Content is the page's own data.
type layout struct {
	Title   string
	Network string
	Nav     string // the navigation entry of the page: faucet, agents, contracts
	Page    string // the page's kind, for the script (data-page)
	Source  string // the API URL whose answer the page shows, for the script (data-source)
	Events  string
	CSS     string
	JS      string
	Icon    string
	Content any
}

// render writes a page with security headers; pages are never cached.
func (h *handler) render(w http.ResponseWriter, r *http.Request, status int, name, title, source string, content any) {
	t := h.templates[name]
	l := layout{Title: title, Network: h.opts.Network, Page: name, Source: source, Events: EventsPath,
		CSS: h.assetURL("style.css"), JS: h.assetURL("live.js"), Icon: h.assetURL("icon.svg"), Content: content}
	// An agent's page and a contract's listen to the events of their agent only.
	switch c := content.(type) {
	case agentPage:
		l.Events += "?" + url.Values{"address": {c.P.Address}}.Encode()
	case contractPage:
		l.Events += "?" + url.Values{"address": {c.C.Initiator}}.Encode()
	}
	switch name {
	case "home":
		l.Nav = "faucet"
	case "directory", "agent":
		l.Nav = "agents"
	case "contract", "contracts":
		l.Nav = "contracts"
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", l); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString("<!doctype html><html lang=\"en\"><title>Error</title><main><h1>Internal error</h1><p>The page could not be rendered.</p></main></html>\n")
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", ContentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("Cache-Control", "no-store")
	hd.Add("Vary", "Accept")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// errorPage is the content of a page that shows an error.
type errorPage struct {
	Status     int
	Code       string
	Message    string
	RetryAfter string
}

// apiErrorPage shows an API error with the API's status (and Retry-After).
func (h *handler) apiErrorPage(w http.ResponseWriter, r *http.Request, e *apiError) {
	if e.RetryAfter != "" {
		w.Header().Set("Retry-After", e.RetryAfter)
	}
	title := http.StatusText(e.Status)
	if title == "" {
		title = "Error"
	}
	h.render(w, r, e.Status, "error", title, "", errorPage{Status: e.Status, Code: e.Code, Message: e.Message, RetryAfter: e.RetryAfter})
}

// homePage is the content of GET / and of the claim form's answer.
type homePage struct {
	Status      *api.StatusResult
	StatusError *apiError
	Address     string // the address typed in the form
	Claim       *claimOutcome
	Payouts     []payoutRow
	PayoutsErr  string
	NoPayouts   bool // Options.Payouts is nil
	Cooldown    string
}

// claimOutcome is the answer to a claim made through the form.
type claimOutcome struct {
	Address string
	Result  *api.ClaimResult
	Error   *apiError
}

// payoutRow is one paid claim of the recent payouts' table.
type payoutRow struct {
	Time    time.Time
	TxID    string
	Address string
	Amount  string
}

// home is GET / (and the form's answer, with outcome set).
func (h *handler) home(w http.ResponseWriter, r *http.Request, outcome *claimOutcome) {
	var pg homePage
	var st api.StatusResult
	if e := h.call(r, func(ctx context.Context, _ api.Caller) (err error) { st, err = h.svc.Status(ctx); return err }); e != nil {
		if e.Status == http.StatusTooManyRequests && outcome == nil {
			h.apiErrorPage(w, r, e)
			return
		}
		pg.StatusError = e
	} else {
		pg.Status = &st
		pg.Cooldown = formatDuration(time.Duration(st.CooldownSeconds) * time.Second)
	}
	status := http.StatusOK
	if outcome != nil {
		pg.Claim = outcome
		if outcome.Error != nil {
			pg.Address = outcome.Address // to correct it
			status = outcome.Error.Status
			if outcome.Error.RetryAfter != "" {
				w.Header().Set("Retry-After", outcome.Error.RetryAfter)
			}
		}
	}
	if h.opts.Payouts == nil {
		pg.NoPayouts = true
	} else if ps, err := h.opts.Payouts(h.opts.PayoutsShown); err != nil {
		pg.PayoutsErr = err.Error()
	} else {
		for _, p := range ps {
			for _, c := range p.Claims {
				if len(pg.Payouts) < h.opts.PayoutsShown {
					pg.Payouts = append(pg.Payouts, payoutRow{Time: p.Time, TxID: p.TxID, Address: c.Address, Amount: c.Amount})
				}
			}
		}
	}
	h.render(w, r, status, "home", "Faucet", "/api/status", pg)
}

// claim is POST /claim: the form's claim, made as POST /api/faucet for the same client.
func (h *handler) claim(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
	case http.MethodGet, http.MethodHead:
		http.Redirect(w, r, HomePath, http.StatusSeeOther)
		return
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		h.render(w, r, http.StatusMethodNotAllowed, "error", "Method not allowed", "", errorPage{Status: http.StatusMethodNotAllowed,
			Code: "method_not_allowed", Message: r.Method + " " + ClaimPath + " is not supported; use POST"})
		return
	}
	if err := h.csrf.Check(r); err != nil {
		h.render(w, r, http.StatusForbidden, "error", "Forbidden", "", errorPage{Status: http.StatusForbidden, Code: "cross_origin",
			Message: "A claim from another site's page is refused: use the form on this page."})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err != nil {
		h.render(w, r, http.StatusBadRequest, "error", "Bad request", "", errorPage{Status: http.StatusBadRequest, Code: "bad_request",
			Message: "The form could not be read."})
		return
	}
	addr := strings.TrimSpace(r.PostForm.Get("address"))
	out := &claimOutcome{Address: addr}
	var res api.ClaimResult
	if e := h.call(r, func(ctx context.Context, c api.Caller) (err error) {
		res, err = h.svc.Claim(ctx, c, api.ClaimRequest{Address: addr})
		return err
	}); e != nil {
		out.Error = e
	} else {
		out.Result = &res
	}
	h.home(w, r, out)
}

// tierInfo is one tier of the legend: its name, score range and decay multiplier.
type tierInfo struct {
	Name       string
	Min, Max   uint32
	DecayTimes string
}

// tiers is the legend, read off lib/consensus (protocol §9's ranges, §8's multipliers).
var tiers = func() []tierInfo {
	var out []tierInfo
	for s := uint32(0); s <= 1000; s++ {
		t := consensus.TierOf(s)
		if len(out) == 0 || out[len(out)-1].Name != t.String() {
			m := t.DecayMultiplier()
			out = append(out, tierInfo{Name: t.String(), Min: s, DecayTimes: strings.TrimSuffix(strings.TrimRight(
				fmt.Sprintf("%d.%04d", m/10000, m%10000), "0"), ".")})
		}
		out[len(out)-1].Max = s
	}
	return out
}()

// directoryPage is the content of GET /agents.
type directoryPage struct {
	Dir       api.Directory
	First     uint64 // 1-based rank of the first row
	Last      uint64
	Prev      string // URL of the previous page; "" on the first
	Next      string
	Tiers     []tierInfo
	PageNo    uint64
	PageCount uint64
}

// directoryRow is one agent of the directory with its rank.
type directoryRow struct {
	Rank uint64
	api.DirectoryEntry
}

// Rows are the agents with their rank.
func (d directoryPage) Rows() []directoryRow {
	out := make([]directoryRow, len(d.Dir.Agents))
	for i, a := range d.Dir.Agents {
		out[i] = directoryRow{Rank: d.Dir.Offset + uint64(i) + 1, DirectoryEntry: a}
	}
	return out
}

// directory is GET /agents: the API's directory page (offset and limit as the API takes
// them); ?address= goes to that agent's profile.
func (h *handler) directory(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if a := strings.TrimSpace(q.Get("address")); a != "" {
		http.Redirect(w, r, AgentsPath+"/"+url.PathEscape(a), http.StatusSeeOther)
		return
	}
	aq := url.Values{}
	for _, k := range []string{"offset", "limit"} {
		if v := q.Get(k); v != "" {
			aq.Set(k, v)
		}
	}
	var d api.Directory
	if e := h.call(r, func(ctx context.Context, _ api.Caller) (err error) { d, err = h.svc.Directory(ctx, aq); return err }); e != nil {
		h.apiErrorPage(w, r, e)
		return
	}
	pg := directoryPage{Dir: d, Tiers: tiers}
	if n := uint64(len(d.Agents)); n > 0 {
		pg.First, pg.Last = d.Offset+1, d.Offset+n
	}
	page := func(off uint64) string {
		v := url.Values{}
		if off > 0 {
			v.Set("offset", strconv.FormatUint(off, 10))
		}
		if q.Get("limit") != "" {
			v.Set("limit", strconv.FormatUint(d.Limit, 10))
		}
		if len(v) == 0 {
			return AgentsPath
		}
		return AgentsPath + "?" + v.Encode()
	}
	if d.Offset > 0 {
		pg.Prev = page(d.Offset - min(d.Offset, d.Limit))
	}
	if d.Limit > 0 && d.Offset+d.Limit < d.Total {
		pg.Next = page(d.Offset + d.Limit)
	}
	if d.Limit > 0 {
		pg.PageNo = d.Offset/d.Limit + 1
		pg.PageCount = max((d.Total+d.Limit-1)/d.Limit, 1)
	}
	source := "/api/agent/directory"
	if len(aq) > 0 {
		source += "?" + aq.Encode()
	}
	h.render(w, r, http.StatusOK, "directory", "Agent directory", source, pg)
}

// agentPage is the content of GET /agents/{address}.
type agentPage struct {
	P          api.AgentProfile
	Registered time.Time // zero while unconfirmed
	Tiers      []tierInfo
}

// profile is GET /agents/{address}: the API's profile of the agent.
func (h *handler) profile(w http.ResponseWriter, r *http.Request, addr string) {
	if addr == "" || strings.Contains(addr, "/") {
		h.notFound(w, r)
		return
	}
	var p api.AgentProfile
	q := url.Values{"address": {addr}}
	if e := h.call(r, func(ctx context.Context, _ api.Caller) (err error) { p, err = h.svc.Profile(ctx, addr); return err }); e != nil {
		h.apiErrorPage(w, r, e)
		return
	}
	pg := agentPage{P: p, Tiers: tiers}
	if t, err := time.Parse(time.RFC3339, p.RegisteredAt); err == nil {
		pg.Registered = t.UTC()
	}
	h.render(w, r, http.StatusOK, "agent", "Agent "+abbr(p.Address), "/api/agent/profile?"+q.Encode(), pg)
}

// contractLookup is GET /contracts: a form to look a contract up; ?id= goes to it.
func (h *handler) contractLookup(w http.ResponseWriter, r *http.Request) {
	if id := strings.TrimSpace(r.URL.Query().Get("id")); id != "" {
		http.Redirect(w, r, ContractsPath+"/"+url.PathEscape(strings.ToLower(id)), http.StatusSeeOther)
		return
	}
	h.render(w, r, http.StatusOK, "contracts", "Contracts", "", nil)
}

// contractPage is the content of GET /contracts/{id}.
type contractPage struct {
	C      api.Contract
	Height *uint64 // the chain's height, for the blocks left before expiry
}

// BlocksLeft is how many blocks the open contract can still be fulfilled in (0: expired, it
// can be refunded), or -1 when the height is unknown.
func (c contractPage) BlocksLeft() int64 {
	if c.Height == nil {
		return -1
	}
	// The next block is at height+1; fulfil needs that height < expires_at.
	next := *c.Height + 1
	if next >= c.C.ExpiresAt {
		return 0
	}
	return int64(c.C.ExpiresAt - next)
}

// contract is GET /contracts/{id}: the API's contract record.
func (h *handler) contract(w http.ResponseWriter, r *http.Request, id string) {
	if id == "" || strings.Contains(id, "/") {
		h.notFound(w, r)
		return
	}
	var c api.Contract
	q := url.Values{"contract_id": {id}}
	if e := h.call(r, func(ctx context.Context, _ api.Caller) (err error) { c, err = h.svc.Contract(ctx, id); return err }); e != nil {
		h.apiErrorPage(w, r, e)
		return
	}
	pg := contractPage{C: c}
	var st api.StatusResult
	if h.call(r, func(ctx context.Context, _ api.Caller) (err error) { st, err = h.svc.Status(ctx); return err }) == nil {
		pg.Height = &st.BlockHeight
	}
	h.render(w, r, http.StatusOK, "contract", "Contract "+abbr(c.ContractID), "/api/agent/contract?"+q.Encode(), pg)
}

// abbr shortens a long address or id for a table cell or a title: its start and its end.
func abbr(s string) string {
	if len(s) <= 24 {
		return s
	}
	return s[:14] + "…" + s[len(s)-6:]
}

// coin writes an amount of the API (8 decimals) without its trailing zeros.
func coin(s string) string {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	return s
}

// formatDuration writes a cooldown the way people say it: 1 hour, 90 minutes, 30 seconds.
func formatDuration(d time.Duration) string {
	plural := func(n int64, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return strconv.FormatInt(n, 10) + " " + unit + "s"
	}
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return plural(int64(d/time.Hour), "hour")
	case d >= time.Minute && d%time.Minute == 0:
		return plural(int64(d/time.Minute), "minute")
	}
	return plural(int64(d/time.Second), "second")
}

// parseTemplates parses each page with the layout.
func parseTemplates(asset func(string) string) map[string]*template.Template {
	funcs := template.FuncMap{
		"abbr": abbr,
		"coin": coin,
		"time": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
		"iso":  func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"pct": func(part, whole uint32) uint32 {
			if whole == 0 {
				return 0
			}
			return part * 100 / whole
		},
		"avg":   func(f *float64) string { return strconv.FormatFloat(*f, 'f', 1, 64) },
		"asset": asset,
	}
	base := template.Must(template.New("layout").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html"))
	pages := map[string]*template.Template{}
	for _, name := range []string{"home", "directory", "agent", "contracts", "contract", "error"} {
		t := template.Must(base.Clone())
		pages[name] = template.Must(t.ParseFS(templateFS, "templates/"+name+".html"))
	}
	return pages
}
