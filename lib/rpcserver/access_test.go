package rpcserver_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/rpcauth"
	"github.com/cointoolkit/coin/lib/rpcserver"
)

// guarded serves a handler that counts the requests reaching it behind Listen's checks.
func guarded(t *testing.T, cfg rpcserver.HTTPConfig) (*rpcserver.HTTPServer, *atomic.Int64) {
	t.Helper()
	if cfg.Bind == "" {
		cfg.Bind = "127.0.0.1:0"
	}
	cfg.Logger = quietLogger()
	s, err := rpcserver.Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var reached atomic.Int64
	go s.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","result":"coin-node stopping","id":1}`)
	}))
	t.Cleanup(func() { s.Close() })
	return s, &reached
}

type req struct {
	method, ctype, host, origin string
	user, pass                  string
}

func do(t *testing.T, s *rpcserver.HTTPServer, r req) *http.Response {
	t.Helper()
	if r.method == "" {
		r.method = http.MethodPost
	}
	hr, err := http.NewRequest(r.method, "http://"+s.Addr().String(), strings.NewReader(`{"jsonrpc":"2.0","method":"stop","id":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.ctype != "-" {
		hr.Header.Set("Content-Type", r.ctype)
	}
	if r.host != "" {
		hr.Host = r.host
	}
	if r.origin != "" {
		hr.Header.Set("Origin", r.origin)
	}
	if r.user != "" {
		hr.SetBasicAuth(r.user, r.pass)
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestAccessRefusesBrowsers: protocol §11's who may call, on a loopback listener without
// credentials. Every refused request is 403 and never reaches the JSON-RPC handler.
func TestAccessRefusesBrowsers(t *testing.T) {
	s, reached := guarded(t, rpcserver.HTTPConfig{AllowOrigins: []string{"https://wallet.example", "http://localhost:8080/"}})
	port := s.Addr().(*net.TCPAddr).Port
	for _, c := range []struct {
		name   string
		r      req
		status int
	}{
		{"spec client", req{ctype: "application/json"}, 200},
		{"charset parameter", req{ctype: "application/json; charset=utf-8"}, 200},
		{"text/plain, a browser's simple request", req{ctype: "text/plain"}, 403},
		{"form post", req{ctype: "application/x-www-form-urlencoded"}, 403},
		{"no content type", req{ctype: "-"}, 403},
		{"foreign origin", req{ctype: "application/json", origin: "https://evil.example"}, 403},
		{"null origin", req{ctype: "application/json", origin: "null"}, 403},
		{"allowed origin", req{ctype: "application/json", origin: "https://wallet.example"}, 200},
		{"allowed origin, other case", req{ctype: "application/json", origin: "HTTPS://Wallet.Example"}, 200},
		{"allowed origin with port", req{ctype: "application/json", origin: "http://localhost:8080"}, 200},
		{"same host, other port", req{ctype: "application/json", origin: "https://wallet.example:8443"}, 403},
		{"rebinding host", req{ctype: "application/json", host: fmt.Sprintf("evil.example:%d", port)}, 403},
		{"rebinding host, no port", req{ctype: "application/json", host: "evil.example"}, 403},
		{"localhost", req{ctype: "application/json", host: fmt.Sprintf("localhost:%d", port)}, 200},
		{"LOCALHOST.", req{ctype: "application/json", host: "LOCALHOST."}, 200},
		{"[::1]", req{ctype: "application/json", host: fmt.Sprintf("[::1]:%d", port)}, 200},
		{"other IP literal", req{ctype: "application/json", host: "10.1.2.3"}, 403},
	} {
		before := reached.Load()
		resp := do(t, s, c.r)
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d", c.name, resp.StatusCode, c.status)
		}
		if got := reached.Load() - before; (c.status == 200) != (got == 1) {
			t.Errorf("%s: reached the handler %d times", c.name, got)
		}
		if c.r.origin != "" && c.status == 200 && resp.Header.Get("Access-Control-Allow-Origin") == "" {
			t.Errorf("%s: no Access-Control-Allow-Origin", c.name)
		}
	}
	// A CORS preflight of an allowed origin is answered without reaching the handler; a
	// foreign origin's is refused.
	before := reached.Load()
	resp := do(t, s, req{method: http.MethodOptions, ctype: "-", origin: "https://wallet.example"})
	if resp.StatusCode != http.StatusNoContent || !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Content-Type") {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	if resp := do(t, s, req{method: http.MethodOptions, ctype: "-", origin: "https://evil.example"}); resp.StatusCode != 403 {
		t.Errorf("foreign preflight: %d", resp.StatusCode)
	}
	if reached.Load() != before {
		t.Error("a preflight reached the handler")
	}
}

func TestAccessCredentials(t *testing.T) {
	line, pass, err := rpcauth.Generate("alice")
	if err != nil {
		t.Fatal(err)
	}
	es, _ := rpcauth.ParseAll([]string{line})
	const delay = 100 * time.Millisecond
	s, reached := guarded(t, rpcserver.HTTPConfig{Auth: es, AuthFailureDelay: delay})
	if resp := do(t, s, req{ctype: "application/json", user: "alice", pass: pass}); resp.StatusCode != 200 {
		t.Fatalf("right credentials: %d", resp.StatusCode)
	}
	for name, r := range map[string]req{
		"missing":           {ctype: "application/json"},
		"wrong pass":        {ctype: "application/json", user: "alice", pass: pass + "x"},
		"wrong user":        {ctype: "application/json", user: "bob", pass: pass},
		"empty":             {ctype: "application/json", user: "alice"},
		"wrong, text/plain": {ctype: "text/plain", user: "alice", pass: "x"},
	} {
		start := time.Now()
		resp := do(t, s, r)
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic") {
			t.Errorf("%s: %d %v", name, resp.StatusCode, resp.Header)
		}
		if d := time.Since(start); d < delay {
			t.Errorf("%s: refused after %s, want the failure delay %s", name, d, delay)
		}
	}
	if reached.Load() != 1 {
		t.Fatalf("handler reached %d times, want 1", reached.Load())
	}
	// Right credentials do not excuse a browser's content type.
	if resp := do(t, s, req{ctype: "text/plain", user: "alice", pass: pass}); resp.StatusCode != 403 {
		t.Fatalf("text/plain with credentials: %d", resp.StatusCode)
	}
}

func TestListenNonLoopbackNeedsAuth(t *testing.T) {
	_, err := rpcserver.Listen(rpcserver.HTTPConfig{Bind: "0.0.0.0:0", Logger: quietLogger()})
	if !errors.Is(err, rpcserver.ErrNoAuth) {
		t.Fatalf("0.0.0.0 without credentials: %v", err)
	}
	if _, err := rpcserver.Listen(rpcserver.HTTPConfig{Bind: "127.0.0.1:0", AllowOrigins: []string{"wallet.example"}}); err == nil {
		t.Fatal("an origin without scheme accepted")
	}
	line, pass, _ := rpcauth.Generate("alice")
	es, _ := rpcauth.ParseAll([]string{line})
	s, _ := guarded(t, rpcserver.HTTPConfig{Bind: "0.0.0.0:0", Auth: es, AuthFailureDelay: -1})
	// A wildcard bind accepts IP literals as Host (rebinding needs a name), never a name.
	for host, want := range map[string]int{"10.1.2.3:1": 200, "[fe80::1]:1": 200, "evil.example:1": 403, "localhost": 200} {
		if resp := do(t, s, req{ctype: "application/json", host: host, user: "alice", pass: pass}); resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// TestMaxConnectionsQueues: with every slot of the listener taken by a connection that sends
// nothing, a fresh client waits in the accept queue (it is not served at once, as it would be
// without the cap) and is answered once the idle ones time out.
func TestMaxConnectionsQueues(t *testing.T) {
	const maxConns, idle = 3, 9
	const headerTimeout = 300 * time.Millisecond
	s, _ := guarded(t, rpcserver.HTTPConfig{MaxConnections: maxConns, ReadHeaderTimeout: headerTimeout})
	// The listener is up.
	if resp := do(t, s, req{ctype: "application/json"}); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	http.DefaultClient.CloseIdleConnections()
	time.Sleep(50 * time.Millisecond)
	for i := 0; i < idle; i++ {
		c, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hr, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.Addr().String(), strings.NewReader("{}"))
	hr.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Transport: &http.Transport{}}).Do(hr)
	if err != nil {
		t.Fatalf("fresh client not answered: %v", err)
	}
	resp.Body.Close()
	waited := time.Since(start)
	// Queued behind the idle connections: at least one header timeout, at most one per
	// round of maxConns idle connections, and some slack.
	if waited < headerTimeout*2/3 || waited > (idle/maxConns+1)*headerTimeout+2*time.Second {
		t.Fatalf("fresh client answered after %s; want between %s and %s", waited, headerTimeout*2/3,
			(idle/maxConns+1)*headerTimeout+2*time.Second)
	}
}
