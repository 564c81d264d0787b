package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/cointoolkit/coin/lib/faucet/internal/inproc"
)

// Options configures the pages.
type Options struct {
	// Network is the faucet's network name (testnet, regtest), shown in titles.
	Network string
	// Payouts lists the faucet's latest payouts, newest first, at most n. Nil: the home page
	// says it cannot list them.
	Payouts func(n int) ([]Payout, error)
	// PayoutsShown is how many payouts the home page lists (default 10).
	PayoutsShown int
}

// Payout is one transaction of the faucet's that paid claims.
type Payout struct {
	TxID   string
	Time   time.Time // when its claims were accepted
	Claims []PaidClaim
}

// PaidClaim is one claim a payout paid: the address and the amount in COIN (8 decimals).
type PaidClaim struct {
	Address string
	Amount  string
}

// Paths of the pages and of what they read.
const (
	HomePath      = "/"
	ClaimPath     = "/claim"
	AgentsPath    = "/agents"
	ContractsPath = "/contracts"
	StaticPath    = "/static/"
	// EventsPath is the API's event stream (Server-Sent Events) the script listens to.
	EventsPath = "/api/agent/events"
)

// ContentSecurityPolicy is the policy of every page and static file: only this origin's
// files, no inline script or style, no framing, forms only to this origin.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// asset is an embedded static file with its content hash.
type asset struct {
	body  []byte
	ctype string
	hash  string // first 16 hex digits of its SHA-256
	mod   time.Time
}

// handler serves the pages and passes everything else to api.
type handler struct {
	api     http.Handler
	opts    Options
	pages   map[string]*template.Template
	assets  map[string]*asset
	csrf    *http.CrossOriginProtection
	started time.Time
}

// New returns the pages in front of apiHandler, the faucet's HTTP handler, which they read
// through (in-process) and which serves every other path.
func New(apiHandler http.Handler, opts Options) http.Handler {
	if opts.PayoutsShown <= 0 {
		opts.PayoutsShown = 10
	}
	h := &handler{api: apiHandler, opts: opts, assets: map[string]*asset{}, csrf: http.NewCrossOriginProtection(),
		started: time.Now().UTC().Truncate(time.Second)}
	entries, err := fs.ReadDir(staticFS, "static")
	if err != nil {
		panic(err) // embedded: cannot fail
	}
	for _, e := range entries {
		b, err := staticFS.ReadFile("static/" + e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(b)
		h.assets[e.Name()] = &asset{body: b, ctype: contentType(e.Name()), hash: hex.EncodeToString(sum[:8]), mod: h.started}
	}
	h.pages = parseTemplates(h.assetURL)
	return h
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".css":
		return "text/css; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	}
	return "application/octet-stream"
}

// assetURL is a static file's URL with its content hash, cached for good.
func (h *handler) assetURL(name string) string {
	a := h.assets[name]
	if a == nil {
		return StaticPath + name
	}
	return StaticPath + name + "?v=" + a.hash
}

// ServeHTTP routes the pages' paths; the rest goes to the API.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == HomePath:
		if !wantsHTML(r) || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			w.Header().Add("Vary", "Accept")
			h.api.ServeHTTP(w, r)
			return
		}
		h.home(w, r, nil)
	case p == ClaimPath:
		h.claim(w, r)
	case p == AgentsPath:
		if h.getOnly(w, r) {
			h.directory(w, r)
		}
	case strings.HasPrefix(p, AgentsPath+"/"):
		if h.getOnly(w, r) {
			h.profile(w, r, strings.TrimPrefix(p, AgentsPath+"/"))
		}
	case p == ContractsPath:
		if h.getOnly(w, r) {
			h.contractLookup(w, r)
		}
	case strings.HasPrefix(p, ContractsPath+"/"):
		if h.getOnly(w, r) {
			h.contract(w, r, strings.TrimPrefix(p, ContractsPath+"/"))
		}
	case strings.HasPrefix(p, StaticPath):
		if h.getOnly(w, r) {
			h.static(w, r, strings.TrimPrefix(p, StaticPath))
		}
	default:
		h.api.ServeHTTP(w, r)
	}
}

// wantsHTML reports whether the client asked for HTML (a browser) rather than JSON.
func wantsHTML(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		if strings.Contains(v, "text/html") || strings.Contains(v, "application/xhtml+xml") {
			return true
		}
	}
	return false
}

// getOnly answers 405 to anything but GET and HEAD.
func (h *handler) getOnly(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	h.render(w, r, http.StatusMethodNotAllowed, "error", "Method not allowed", "", errorPage{Status: http.StatusMethodNotAllowed,
		Code: "method_not_allowed", Message: fmt.Sprintf("%s %s is not supported; use GET", r.Method, r.URL.Path)})
	return false
}

// static serves an embedded file: for a year when the URL names its current hash, else
// for five minutes.
func (h *handler) static(w http.ResponseWriter, r *http.Request, name string) {
	a := h.assets[name]
	if a == nil {
		h.notFound(w, r)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", a.ctype)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Content-Security-Policy", ContentSecurityPolicy)
	hd.Set("ETag", `"`+a.hash+`"`)
	if r.URL.Query().Get("v") == a.hash {
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		hd.Set("Cache-Control", "public, max-age=300")
	}
	http.ServeContent(w, r, name, a.mod, bytes.NewReader(a.body))
}

func (h *handler) notFound(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusNotFound, "error", "Not found", "", errorPage{Status: http.StatusNotFound, Code: "not_found",
		Message: "There is no page at " + r.URL.Path + "."})
}

// apiError is an error answer of the API: its status, code, message and Retry-After.
type apiError struct {
	Status     int
	Code       string
	Message    string
	RetryAfter string
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

// call makes an in-process request to the API for the client of r: the same peer address,
// X-Forwarded-For and host, so the API's per-client limits and its view of the client are
// the page's. A 200 is decoded into out; anything else is an *apiError.
func (h *handler) call(r *http.Request, method, apiPath string, query url.Values, body, out any) *apiError {
	target := apiPath
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return &apiError{Status: http.StatusInternalServerError, Code: "internal", Message: "encoding a request failed"}
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(r.Context(), method, target, rd)
	if err != nil {
		return &apiError{Status: http.StatusInternalServerError, Code: "internal", Message: "building a request failed"}
	}
	if req.Body == nil {
		req.Body = http.NoBody // as a server's request
	}
	req.RemoteAddr, req.Host, req.TLS, req.Proto = r.RemoteAddr, r.Host, r.TLS, r.Proto
	for _, k := range []string{"X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host", "User-Agent"} {
		if v := r.Header.Values(k); len(v) > 0 {
			req.Header[k] = append([]string(nil), v...)
		}
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := inproc.Serve(h.api, req)
	if status := rec.Status(); status != http.StatusOK {
		e := &apiError{Status: status, RetryAfter: rec.Header().Get("Retry-After")}
		if eo, ok := rec.APIError(); ok {
			e.Code, e.Message = eo.Code, eo.Message
		} else {
			e.Code, e.Message = "http_"+strconv.Itoa(status), http.StatusText(status)
		}
		return e
	}
	if err := json.Unmarshal(rec.Body(), out); err != nil {
		return &apiError{Status: http.StatusInternalServerError, Code: "internal", Message: "the API's answer could not be read"}
	}
	return nil
}
