package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/cointoolkit/coin/lib/faucet/api"
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
	// Caller is the Service's caller of a request (the client network of its peer and
	// forwarding headers), so a page spends its client's request budget as the API's
	// endpoints do; nil: the socket's peer address.
	Caller func(*http.Request) api.Caller
	// Around wraps the pages' handler (not next's paths): the faucet's access log and panic
	// recovery; nil: none.
	Around func(http.Handler) http.Handler
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

// handler serves the pages from svc and passes every other path to next.
type handler struct {
	next      http.Handler
	pages     http.Handler // page, within Options.Around
	svc       api.Service
	opts      Options
	templates map[string]*template.Template
	assets    map[string]*asset
	csrf      *http.CrossOriginProtection
	started   time.Time
}

// New returns the pages, which read from svc (lib/faucet's Service), in front of next (the
// faucet's HTTP API), which serves every other path.
func New(next http.Handler, svc api.Service, opts Options) http.Handler {
	if opts.PayoutsShown <= 0 {
		opts.PayoutsShown = 10
	}
	h := &handler{next: next, svc: svc, opts: opts, assets: map[string]*asset{}, csrf: http.NewCrossOriginProtection(),
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
	h.templates = parseTemplates(h.assetURL)
	h.pages = http.HandlerFunc(h.page)
	if opts.Around != nil {
		h.pages = opts.Around(h.pages)
	}
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

// ServeHTTP routes the pages' paths to the pages (through Options.Around); the rest goes to
// next.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == HomePath && (!wantsHTML(r) || (r.Method != http.MethodGet && r.Method != http.MethodHead)):
		w.Header().Add("Vary", "Accept")
		h.next.ServeHTTP(w, r)
	case p == HomePath, p == ClaimPath, p == AgentsPath, strings.HasPrefix(p, AgentsPath+"/"), p == ContractsPath,
		strings.HasPrefix(p, ContractsPath+"/"), strings.HasPrefix(p, StaticPath):
		h.pages.ServeHTTP(w, r)
	default:
		h.next.ServeHTTP(w, r)
	}
}

// page serves a page's path.
func (h *handler) page(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == HomePath:
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

// call runs an operation of the Service for the client of r: the request budget of r's
// client is spent first (Service.Admit), as the API's endpoints spend it. A refusal is an
// *apiError with the API's status, code, message and Retry-After.
func (h *handler) call(r *http.Request, op func(ctx context.Context, c api.Caller) error) *apiError {
	c := h.caller(r)
	err := h.svc.Admit(c, false)
	if err == nil {
		err = op(r.Context(), c)
	}
	if err == nil {
		return nil
	}
	var e *api.Error
	if !errors.As(err, &e) {
		return &apiError{Status: http.StatusInternalServerError, Code: "internal", Message: "internal error"}
	}
	ae := &apiError{Status: e.Status(), Code: e.Code, Message: e.Message}
	if e.RetryAfter > 0 {
		ae.RetryAfter = strconv.FormatInt(api.RetrySeconds(e.RetryAfter), 10)
	}
	return ae
}

// caller is the Service's caller of r.
func (h *handler) caller(r *http.Request) api.Caller {
	if h.opts.Caller != nil {
		return h.opts.Caller(r)
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return api.Caller{Client: host}
}
