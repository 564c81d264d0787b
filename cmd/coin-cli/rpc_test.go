package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/cliutil"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/params"
)

func TestExitCode(t *testing.T) {
	for code, want := range map[int]int{
		-1:     1,
		-5:     5,
		-8:     8,
		-28:    28,
		-32600: 32600 & 0xff, // 88
		-32601: 89,
		-32602: 90,
		-32603: 91,
		-32700: 188,
		-32000: 1, // 0x7d00: the low byte is 0, and an error never exits 0
		-256:   1,
		0:      1,
		7:      7,
		300:    44,
	} {
		if got := exitCode(code); got != want {
			t.Errorf("exitCode(%d) = %d, want %d", code, got, want)
		}
	}
}

func TestRPCErrorReport(t *testing.T) {
	o := &options{url: "http://x", network: params.Mainnet}
	err := o.explain("getblock", fmt.Errorf("wrapped: %w", jsonrpc.DomainError("block not found")))
	code, stderr := exitStatus(err)
	if code != 1 || stderr != "error code: -1\nerror message:\nblock not found\n" {
		t.Errorf("got %d %q", code, stderr)
	}
	err = o.explain("nosuch", &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found"})
	code, stderr = exitStatus(err)
	if code != 89 || stderr != "error code: -32601\nerror message:\nMethod not found\n" {
		t.Errorf("got %d %q", code, stderr)
	}
	var ee *cliutil.ExitError
	if !errors.As(err, &ee) {
		t.Error("RPC error is not an ExitError")
	}
}

func TestRefusedMessage(t *testing.T) {
	def := &options{url: "http://127.0.0.1:38332", network: params.Regtest}
	code, msg := exitStatus(def.explain("getblockcount", refusedErr()))
	want := `error: cannot connect to the node at http://127.0.0.1:38332: connection refused.
Either the node is not running with its RPC server on (coin-node serves RPC only when started
with --rpc-bind, for example --rpc-bind 127.0.0.1:38332), or the port does not match the node's
network (RPC ports: mainnet 18332, testnet 28332, regtest 38332).
The address is the default of --network regtest: pick the node's network with --network NET
(COIN_NETWORK) or give its address with --rpc URL (COIN_RPC).
`
	if code != 1 || msg != want {
		t.Errorf("default URL: %d\n%s\nwant\n%s", code, msg, want)
	}

	given := &options{url: "http://10.1.2.3:9999", network: params.Mainnet, fromFlag: true, rpcwait: true, waitTimeout: 30 * time.Second}
	_, msg = exitStatus(given.explain("getblockcount", refusedErr()))
	for _, part := range []string{
		"error: cannot connect to the node at http://10.1.2.3:9999: connection refused (still refused after waiting 30s with --rpcwait).",
		"--rpc-bind",
		"the port does not match the node's\nnetwork",
		"The address came from --rpc (or COIN_RPC)",
		"--network NET (COIN_NETWORK)",
	} {
		if !strings.Contains(msg, part) {
			t.Errorf("--rpc URL: message lacks %q:\n%s", part, msg)
		}
	}
}

// refusedErr is a real refused connection, as the client reports it.
func refusedErr() error {
	u := closedURL()
	cl := jsonrpc.NewClient(u)
	defer cl.Close()
	_, err := cl.CallRaw(context.Background(), "getblockcount", nil)
	return err
}

func TestExplainOthers(t *testing.T) {
	o := &options{url: "http://h:1", network: params.Mainnet, timeout: 2 * time.Second}
	_, msg := exitStatus(o.explain("getinfo", &jsonrpc.HTTPError{StatusCode: 404, Status: "404 Not Found"}))
	if msg != "error: the server at http://h:1 answered HTTP 404 Not Found instead of a JSON-RPC reply: this is not a JSON-RPC server; is --rpc the node's RPC address (its --rpc-bind)?\n" {
		t.Errorf("HTTP error: %q", msg)
	}
	_, msg = exitStatus(o.explain("getinfo", fmt.Errorf("jsonrpc: getinfo: %w", context.DeadlineExceeded)))
	if msg != "error: getinfo: no answer from the node at http://h:1 within 2s (raise --timeout)\n" {
		t.Errorf("timeout: %q", msg)
	}
	_, msg = exitStatus(o.explain("getinfo", errors.New("jsonrpc: getinfo: malformed response")))
	if msg != "error: getinfo at http://h:1: malformed response\n" {
		t.Errorf("other: %q", msg)
	}
}

func TestStarting(t *testing.T) {
	if !starting(refusedErr()) || !starting(jsonrpc.NewError(codeInWarmup, "warming up")) {
		t.Error("refused or warming up is not 'starting'")
	}
	if starting(jsonrpc.DomainError("block not found")) || starting(errors.New("other")) {
		t.Error("other errors are 'starting'")
	}
}

// TestNotJSONRPCServer: pointed at an HTTP server that is not a JSON-RPC server (a faucet's
// API, a web page), coin-cli says so instead of printing a decoding error.
func TestNotJSONRPCServer(t *testing.T) {
	for _, c := range []struct {
		name, ctype string
		status      int
		body        string
	}{
		{"faucet API", "application/json", http.StatusMethodNotAllowed, `{"error":{"code":"method_not_allowed","message":"POST / is not supported; use GET"}}`},
		{"JSON without result", "application/json", http.StatusOK, `{"network":"regtest","block_height":5}`},
		{"web page", "text/html", http.StatusOK, "<html><body>hello</body></html>"},
		{"JSON array", "application/json", http.StatusOK, `[1,2]`},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", c.ctype)
			w.WriteHeader(c.status)
			io.WriteString(w, c.body)
		}))
		r := runApp(t, "", "--rpc", srv.URL, "getblockcount")
		srv.Close()
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "is not a JSON-RPC server") ||
			strings.Contains(r.stderr, "unmarshal") || !strings.HasPrefix(r.stderr, "error: ") || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%s: %+v", c.name, r)
		}
	}
}
