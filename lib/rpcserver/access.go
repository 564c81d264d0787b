package rpcserver

import (
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cointoolkit/coin/lib/rpcauth"
)

// Who may call the node (protocol §11): the checks every HTTP request passes before the
// JSON-RPC server sees it. A refusal does nothing: the body is not read.

// DefaultAuthFailureDelay is how long a request with missing or wrong credentials waits
// before its 401, as bitcoind's 250 ms, to slow down guessing.
const DefaultAuthFailureDelay = 250 * time.Millisecond

// authRealm is the realm of the WWW-Authenticate header.
const authRealm = `Basic realm="coin-node"`

// access is the http.Handler that refuses requests a browser or a stranger could send and
// passes the others to next.
type access struct {
	next http.Handler
	log  *slog.Logger
	// hosts are the Host names (without port, lower case, IPv6 without brackets) accepted;
	// anyIP also accepts every IP literal (the bind address is a wildcard: a rebinding
	// attack needs a DNS name).
	hosts   map[string]bool
	anyIP   bool
	origins map[string]bool
	auth    rpcauth.Entries
	delay   time.Duration
}

// ParseOrigin checks an --rpc-allow-origin value, "scheme://host[:port]" as browsers send
// it in the Origin header, and returns it in the form requests are compared with.
func ParseOrigin(s string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") ||
		u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", fmt.Errorf("origin %q: want scheme://host[:port], as a browser sends it (for example https://wallet.example)", s)
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// newAccess builds the checks for a server whose listener is bound to bind (as configured)
// and listens on addr.
func newAccess(cfg HTTPConfig, addr net.Addr) (*access, error) {
	a := &access{log: cfg.Logger, hosts: map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true},
		origins: map[string]bool{}, auth: cfg.Auth, delay: cfg.AuthFailureDelay}
	if a.delay == 0 {
		a.delay = DefaultAuthFailureDelay
	}
	for _, o := range cfg.AllowOrigins {
		n, err := ParseOrigin(o)
		if err != nil {
			return nil, err
		}
		a.origins[n] = true
	}
	if err := a.allowHosts(cfg.AllowHosts); err != nil {
		return nil, err
	}
	if h, _, err := net.SplitHostPort(cfg.Bind); err == nil {
		h = normHost(h)
		if ip := net.ParseIP(h); h == "" || (ip != nil && ip.IsUnspecified()) {
			a.anyIP = true
		} else {
			a.hosts[h] = true
		}
	}
	if ta, ok := addr.(*net.TCPAddr); ok && !ta.IP.IsUnspecified() {
		a.hosts[normHost(ta.IP.String())] = true
	}
	return a, nil
}

func normHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")), ".")
}

// hostAllowed checks the Host header against DNS rebinding: a page of evil.example whose name
// now resolves to 127.0.0.1 still sends Host: evil.example.
func (a *access) hostAllowed(hostport string) bool {
	if hostport == "" {
		return true // HTTP/1.0 without Host: no browser sends that
	}
	h := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		h = hh
	}
	h = normHost(h)
	return a.hosts[h] || (a.anyIP && net.ParseIP(h) != nil)
}

func (a *access) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !a.hostAllowed(r.Host) {
		a.forbid(w, r, "host not allowed", "Host "+r.Host+" is not this node's address (DNS rebinding?)")
		return
	}
	if origin, has := r.Header["Origin"]; has {
		o := ""
		if len(origin) == 1 {
			o = strings.ToLower(strings.TrimSuffix(origin[0], "/"))
		}
		if !a.origins[o] {
			a.forbid(w, r, "origin not allowed", "Origin "+strings.Join(origin, ",")+" is not allowed (see --rpc-allow-origin)")
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", o)
		h.Add("Vary", "Origin")
		if r.Method == http.MethodOptions { // a CORS preflight: carries no credentials, does nothing
			h.Set("Access-Control-Allow-Methods", http.MethodPost)
			h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	if len(a.auth) > 0 {
		user, pass, ok := r.BasicAuth()
		if !ok || !a.auth.Verify(user, pass) {
			a.log.Warn("rpc: refused credentials", "remote", r.RemoteAddr, "given", ok)
			t := time.NewTimer(a.delay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
			}
			w.Header().Set("WWW-Authenticate", authRealm)
			http.Error(w, "unauthorized: this node wants HTTP Basic credentials (--rpc-auth)", http.StatusUnauthorized)
			return
		}
	}
	if r.Method == http.MethodPost {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			a.forbid(w, r, "content type not allowed", "Content-Type must be application/json")
			return
		}
	}
	a.next.ServeHTTP(w, r)
}

func (a *access) forbid(w http.ResponseWriter, r *http.Request, what, msg string) {
	a.log.Info("rpc: request refused", "reason", what, "remote", r.RemoteAddr, "host", r.Host,
		"origin", r.Header.Get("Origin"), "content_type", r.Header.Get("Content-Type"))
	w.Header().Set("Connection", "close") // the body is left unread
	http.Error(w, "forbidden: "+msg, http.StatusForbidden)
}

// ErrNoAuth is returned by Listen for a listener that is not on a loopback address when no
// credentials are configured.
var ErrNoAuth = errors.New("not a loopback address and no RPC credentials configured")
