package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestClientCall(t *testing.T) {
	_, url := testServer(t, Options{})
	c := NewClient(url)
	defer c.Close()
	ctx := context.Background()

	var diff int
	if err := c.Call(ctx, "subtract", []any{42, 23}, &diff); err != nil || diff != 19 {
		t.Fatalf("subtract: %v %v", diff, err)
	}
	var data []any
	if err := c.Call(ctx, "get_data", nil, &data); err != nil || len(data) != 2 || data[0] != "hello" {
		t.Fatalf("get_data: %v %v", data, err)
	}
	var m map[string]any
	if err := c.Call(ctx, "getblockhash", []any{uint64(1 << 63), true}, &m); err != nil || m["verbose"] != true {
		t.Fatalf("getblockhash: %v %v", m, err)
	}
	if err := c.Call(ctx, "null", nil, nil); err != nil {
		t.Fatalf("null: %v", err)
	}
	raw, err := c.CallRaw(ctx, "echo", []json.RawMessage{json.RawMessage(`{"a": [1, 2]}`)})
	if err != nil || !jsonEqual(t, raw, []byte(`{"a":[1,2]}`)) {
		t.Fatalf("CallRaw: %s %v", raw, err)
	}

	// Concurrent calls share the client.
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			var got int
			if err := c.Call(ctx, "subtract", []any{i, 1}, &got); err != nil || got != i-1 {
				t.Errorf("concurrent subtract(%d): %d %v", i, got, err)
			}
		})
	}
	wg.Wait()
}

func TestClientRPCError(t *testing.T) {
	_, url := testServer(t, Options{})
	c := NewClient(url)
	ctx := context.Background()
	cases := []struct {
		method string
		params []any
		code   int
		msg    string
	}{
		{"nope", nil, CodeMethodNotFound, "Method not found"},
		{"subtract", []any{1}, CodeInvalidParams, "wrong number of parameters: got 1, want 2"},
		{"gettx", []any{"xyz"}, CodeInvalidParams, "invalid hex in parameter 1 (txid)"},
		{"fail", nil, CodeMisc, "block not found"},
		{"failrpc", nil, -5, "Invalid address"},
		{"panic", nil, CodeInternal, "internal error"},
	}
	for _, tc := range cases {
		err := c.Call(ctx, tc.method, tc.params, nil)
		var e *Error
		if !errors.As(err, &e) || e.Code != tc.code || e.Message != tc.msg {
			t.Errorf("%s: got %v", tc.method, err)
		}
		if IsConnRefused(err) {
			t.Errorf("%s: RPC error reported as connection refused", tc.method)
		}
	}
	err := c.Call(ctx, "failrpc", nil, nil)
	var e *Error
	if errors.As(err, &e) {
		if d, ok := e.Data.(map[string]any); !ok || d["pos"] != float64(3) {
			t.Errorf("data not decoded: %#v", e.Data)
		}
	}
	// A result that does not fit the target is a decoding error, not *Error.
	var n int
	err = c.Call(ctx, "get_data", nil, &n)
	if err == nil || errors.As(err, &e) {
		t.Errorf("decode mismatch: %v", err)
	}
}

func TestClientTransportErrors(t *testing.T) {
	// A port that was listening and is now closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := NewClient("http://" + addr + "/")
	err = c.Call(context.Background(), "getblockcount", nil, nil)
	if err == nil || !IsConnRefused(err) {
		t.Fatalf("closed port: IsConnRefused(%v) = false", err)
	}
	var e *Error
	if errors.As(err, &e) {
		t.Fatalf("transport error reported as *Error: %v", err)
	}
	if IsConnRefused(nil) || IsConnRefused(errors.New("connection refused")) {
		t.Error("IsConnRefused matches unrelated errors")
	}

	// HTTP errors without a JSON-RPC body.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/auth":
			w.WriteHeader(http.StatusUnauthorized)
		case "/garbage":
			w.Write([]byte("<html>"))
		case "/wrongid":
			w.Write([]byte(`{"jsonrpc":"2.0","result":1,"id":999999}`))
		case "/slow":
			time.Sleep(200 * time.Millisecond)
		case "/bitcoind":
			// bitcoind reports some errors with HTTP 500 and a JSON body.
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"result":null,"error":{"code":-8,"message":"Block height out of range"},"id":1}`))
		}
	}))
	defer ts.Close()
	err = NewClient(ts.URL+"/auth").Call(context.Background(), "x", nil, nil)
	var he *HTTPError
	if !errors.As(err, &he) || he.StatusCode != http.StatusUnauthorized {
		t.Errorf("401: %v", err)
	}
	if err := NewClient(ts.URL+"/garbage").Call(context.Background(), "x", nil, nil); err == nil {
		t.Error("garbage accepted")
	}
	if err := NewClient(ts.URL+"/wrongid").Call(context.Background(), "x", nil, nil); err == nil {
		t.Error("wrong id accepted")
	}
	err = NewClient(ts.URL+"/bitcoind").Call(context.Background(), "x", nil, nil)
	if !errors.As(err, &e) || e.Code != -8 {
		t.Errorf("500 with JSON error: %v", err)
	}
	err = NewClient(ts.URL+"/slow", WithTimeout(50*time.Millisecond)).Call(context.Background(), "x", nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout: %v", err)
	}
}

func TestClientOptions(t *testing.T) {
	var gotUser, gotPass string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotUser, gotPass, _ = r.BasicAuth()
		w.Write([]byte(`{"jsonrpc":"2.0","result":"ok","id":1}`))
	}))
	defer ts.Close()
	hc := &http.Client{Timeout: time.Second}
	c := NewClient(ts.URL, WithHTTPClient(hc), WithBasicAuth("user", "pw"))
	var s string
	if err := c.Call(context.Background(), "x", nil, &s); err != nil || s != "ok" {
		t.Fatalf("call: %q %v", s, err)
	}
	if gotUser != "user" || gotPass != "pw" {
		t.Errorf("basic auth %q %q", gotUser, gotPass)
	}
	small := NewClient(ts.URL, WithMaxResponseBytes(10))
	if err := small.Call(context.Background(), "x", nil, nil); err == nil {
		t.Error("oversized response accepted")
	}
}

// TestClientServerTooLarge checks that the client surfaces the server's
// 413 JSON-RPC error as an *Error.
func TestClientServerTooLarge(t *testing.T) {
	_, url := testServer(t, Options{MaxBodyBytes: 100})
	err := NewClient(url).Call(context.Background(), "echo", []any{string(make([]byte, 200))}, nil)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalidRequest || e.Message != "request too large" {
		t.Fatalf("got %v", err)
	}
}

// TestClientURLCredentials: credentials in the URL are sent as basic authentication and
// appear in no error; a 401 or 403 without a JSON-RPC body is an *HTTPError with the text.
func TestClientURLCredentials(t *testing.T) {
	var gotUser, gotPass string
	var gotOK bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotUser, gotPass, gotOK = r.BasicAuth()
		if gotPass != "s3cret:pw" {
			w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
			http.Error(w, "unauthorized: wrong\nsecond line", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","result":7,"id":1}`))
	}))
	defer srv.Close()
	withCreds := "http://alice:s3cret%3Apw@" + srv.Listener.Addr().String()
	c := NewClient(withCreds)
	defer c.Close()
	var n int
	if err := c.Call(context.Background(), "x", nil, &n); err != nil || n != 7 {
		t.Fatalf("with URL credentials: %d %v", n, err)
	}
	if !gotOK || gotUser != "alice" || gotPass != "s3cret:pw" {
		t.Fatalf("server saw %q %q %v", gotUser, gotPass, gotOK)
	}
	if strings.Contains(c.url, "s3cret") {
		t.Fatalf("client keeps the password in its URL: %s", c.url)
	}
	// WithBasicAuth wins over the URL's.
	wrong := NewClient(withCreds, WithBasicAuth("alice", "nope"))
	err := wrong.Call(context.Background(), "x", nil, nil)
	var he *HTTPError
	if !errors.As(err, &he) || he.StatusCode != 401 || he.Body != "unauthorized: wrong" {
		t.Fatalf("wrong password: %#v", err)
	}
	// A refused connection's error does not show the password either.
	dead := NewClient("http://alice:s3cret@127.0.0.1:1")
	if err := dead.Call(context.Background(), "x", nil, nil); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("error shows the password: %v", err)
	}
}
