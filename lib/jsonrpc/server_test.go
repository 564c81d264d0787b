package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testServer registers methods that exercise the parameter helpers and
// the error paths, including slow ones, and serves them over loopback.
func testServer(t testing.TB, opts Options) (*Server, string) {
	s := fastServer(t, opts)
	s.Register(Method{
		Name: "sleep",
		Handler: func(ctx context.Context, _ Params) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
	})
	s.Register(Method{
		Name: "stubborn", // ignores its context
		Handler: func(context.Context, Params) (any, error) {
			time.Sleep(300 * time.Millisecond)
			return "late", nil
		},
	})
	ts := newTestServer(t, s)
	return s, ts.URL
}

// fastServer is testServer without the slow methods and without HTTP (the
// fuzz target calls ServeHTTP directly).
func fastServer(t testing.TB, opts Options) *Server {
	s := specServer(t, opts)
	s.Register(Method{
		Name: "getblockhash",
		Params: []ParamSpec{
			{Name: "height", Type: "numeric"},
			{Name: "verbose", Type: "boolean", Optional: true},
			{Name: "extra", Type: "numeric", Optional: true},
		},
		Handler: func(_ context.Context, p Params) (any, error) {
			h, err := p.Uint64(0)
			if err != nil {
				return nil, err
			}
			v, err := p.OptBool(1, false)
			if err != nil {
				return nil, err
			}
			x, err := p.OptUint64(2, 7)
			if err != nil {
				return nil, err
			}
			return map[string]any{"height": h, "verbose": v, "extra": x}, nil
		},
	})
	s.Register(Method{
		Name:   "gettx",
		Params: []ParamSpec{{Name: "txid", Type: "string"}},
		Handler: func(_ context.Context, p Params) (any, error) {
			b, err := p.Hex(0)
			if err != nil {
				return nil, err
			}
			return len(b), nil
		},
	})
	s.Register(Method{
		Name:    "null",
		Handler: func(context.Context, Params) (any, error) { return nil, nil },
	})
	s.Register(Method{
		Name: "fail",
		Handler: func(context.Context, Params) (any, error) {
			return nil, errors.New("block not found")
		},
	})
	s.Register(Method{
		Name: "failrpc",
		Handler: func(context.Context, Params) (any, error) {
			return nil, fmt.Errorf("wrapped: %w", &Error{Code: -5, Message: "Invalid address", Data: map[string]int{"pos": 3}})
		},
	})
	s.Register(Method{
		Name:    "panic",
		Handler: func(context.Context, Params) (any, error) { panic("boom") },
	})
	s.Register(Method{
		Name:    "echo",
		Params:  []ParamSpec{{Name: "value"}},
		Handler: func(_ context.Context, p Params) (any, error) { return json.RawMessage(bytes.Clone(p[0])), nil },
	})
	s.Register(Method{
		Name:    "badraw",
		Handler: func(context.Context, Params) (any, error) { return json.RawMessage("{"), nil },
	})
	s.Register(Method{
		Name:    "badmarshal",
		Handler: func(context.Context, Params) (any, error) { return func() {}, nil },
	})
	return s
}

func call(method, params string, id string) string {
	s := `{"jsonrpc":"2.0","method":` + method
	if params != "" {
		s += `,"params":` + params
	}
	if id != "" {
		s += `,"id":` + id
	}
	return s + "}"
}

func TestParamErrors(t *testing.T) {
	_, url := testServer(t, Options{})
	cases := []struct {
		name, method, params string
		code                 int
		msg                  string
	}{
		{"too few", `"subtract"`, `[1]`, CodeInvalidParams, "wrong number of parameters: got 1, want 2"},
		{"too many", `"subtract"`, `[1,2,3]`, CodeInvalidParams, "wrong number of parameters: got 3, want 2"},
		{"none for required", `"subtract"`, ``, CodeInvalidParams, "wrong number of parameters: got 0, want 2"},
		{"null for required", `"subtract"`, `null`, CodeInvalidParams, "wrong number of parameters: got 0, want 2"},
		{"range", `"getblockhash"`, `[1,true,2,3]`, CodeInvalidParams, "wrong number of parameters: got 4, want 1..3"},
		{"range few", `"getblockhash"`, `[]`, CodeInvalidParams, "wrong number of parameters: got 0, want 1..3"},
		{"zero params", `"get_data"`, `[1]`, CodeInvalidParams, "wrong number of parameters: got 1, want 0"},
		{"string for int", `"getblockhash"`, `["5"]`, CodeInvalidParams, "invalid parameter 1 (height): expected non-negative integer, got string"},
		{"negative", `"getblockhash"`, `[-1]`, CodeInvalidParams, "invalid parameter 1 (height): expected non-negative integer, got number"},
		{"fraction", `"getblockhash"`, `[1.5]`, CodeInvalidParams, "invalid parameter 1 (height): expected non-negative integer, got number"},
		{"exponent", `"getblockhash"`, `[1e3]`, CodeInvalidParams, "invalid parameter 1 (height): expected non-negative integer, got number"},
		{"overflow", `"getblockhash"`, `[18446744073709551616]`, CodeInvalidParams, "invalid parameter 1 (height): integer out of range"},
		{"bool type", `"getblockhash"`, `[1, 1]`, CodeInvalidParams, "invalid parameter 2 (verbose): expected boolean, got number"},
		{"opt uint type", `"getblockhash"`, `[1, true, "x"]`, CodeInvalidParams, "invalid parameter 3 (extra): expected non-negative integer, got string"},
		{"hex type", `"gettx"`, `[12]`, CodeInvalidParams, "invalid parameter 1 (txid): expected hex string, got number"},
		{"hex odd", `"gettx"`, `["abc"]`, CodeInvalidParams, "invalid hex in parameter 1 (txid)"},
		{"hex chars", `"gettx"`, `["zz"]`, CodeInvalidParams, "invalid hex in parameter 1 (txid)"},
		{"int fraction", `"subtract"`, `[1.0, 2]`, CodeInvalidParams, "invalid parameter 1 (minuend): expected integer, got number"},
		{"object params unknown", `"subtract"`, `{"minuend":1,"x":2}`, CodeInvalidParams, `unknown parameter name "x"`},
		{"object params missing", `"subtract"`, `{"minuend":1}`, CodeInvalidParams, `missing required parameter "subtrahend"`},
		{"object params dup", `"subtract"`, `{"minuend":1,"minuend":2,"subtrahend":3}`, CodeInvalidParams, `duplicate parameter "minuend"`},
		{"string params", `"subtract"`, `"bar"`, CodeInvalidRequest, "Invalid Request"},
		{"number params", `"subtract"`, `5`, CodeInvalidRequest, "Invalid Request"},
		{"unknown method", `"nope"`, `[]`, CodeMethodNotFound, "Method not found"},
		{"method not string", `5`, `[]`, CodeInvalidRequest, "Invalid Request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := post(t, url, call(c.method, c.params, "1"))
			if status != http.StatusOK {
				t.Fatalf("status %d", status)
			}
			code, msg := errorOf(t, body)
			if code != c.code || msg != c.msg {
				t.Fatalf("got %d %q, want %d %q", code, msg, c.code, c.msg)
			}
		})
	}
}

func TestParamsOK(t *testing.T) {
	_, url := testServer(t, Options{})
	cases := []struct{ method, params, want string }{
		{`"getblockhash"`, `[18446744073709551615]`, `{"height":18446744073709551615,"verbose":false,"extra":7}`},
		{`"getblockhash"`, `[0, true]`, `{"height":0,"verbose":true,"extra":7}`},
		{`"getblockhash"`, `[3, null, 9]`, `{"height":3,"verbose":false,"extra":9}`},
		{`"getblockhash"`, `{"height":3,"extra":9}`, `{"height":3,"verbose":false,"extra":9}`},
		{`"gettx"`, `["00FFab"]`, `3`},
		{`"gettx"`, `[""]`, `0`},
		{`"subtract"`, `[-5, 10]`, `-15`},
		{`"sub\u0074ract"`, `{"minu\u0065nd":1,"subtrahend":2}`, `-1`},
		{`"echo"`, `["a\"b\\c\u2028"]`, `"a\"b\\c\u2028"`},
		{`"null"`, ``, `null`},
		{`"null"`, `{}`, `null`},
	}
	for _, c := range cases {
		status, body := post(t, url, call(c.method, c.params, "1"))
		want := `{"jsonrpc":"2.0","result":` + c.want + `,"id":1}`
		if status != http.StatusOK || !jsonEqual(t, body, []byte(want)) {
			t.Errorf("%s %s: got %d %s, want %s", c.method, c.params, status, body, want)
		}
	}
}

// TestNullResult checks the exact bytes of a nil success result.
func TestNullResult(t *testing.T) {
	_, url := testServer(t, Options{})
	_, body := post(t, url, call(`"null"`, `[]`, `7`))
	if want := `{"jsonrpc":"2.0","result":null,"id":7}`; string(body) != want {
		t.Fatalf("got %s, want %s", body, want)
	}
}

func TestIDEcho(t *testing.T) {
	_, url := testServer(t, Options{})
	ids := []string{
		`"abc"`, `""`, `"\u00e9\n"`, `0`, `-1`, `1.5`, `1.0e+3`, `-0`,
		`123456789012345678901234567890123456789`,
		`18446744073709551616`, `null`,
	}
	for _, id := range ids {
		for _, method := range []string{`"get_data"`, `"nope"`} {
			_, body := post(t, url, call(method, ``, id))
			if !bytes.HasSuffix(body, []byte(`,"id":`+id+`}`)) {
				t.Errorf("id %s: response %s does not echo the id byte for byte", id, body)
			}
		}
	}
	// Ids of other types make the request invalid; the id is then null.
	for _, id := range []string{`true`, `{}`, `[1]`} {
		_, body := post(t, url, call(`"get_data"`, ``, id))
		want := `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":null}`
		if string(body) != want {
			t.Errorf("id %s: got %s", id, body)
		}
	}
	// An invalid request with a valid id echoes it.
	_, body := post(t, url, `{"jsonrpc":"1.0","method":"get_data","id":"x"}`)
	if want := `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":"x"}`; string(body) != want {
		t.Errorf("got %s", body)
	}
}

func TestInvalidEnvelopes(t *testing.T) {
	_, url := testServer(t, Options{})
	for _, body := range []string{
		`{"method":"get_data","id":1}`,                              // no jsonrpc
		`{"jsonrpc":"1.0","method":"get_data","id":1}`,              // wrong version
		`{"jsonrpc":2.0,"method":"get_data","id":1}`,                // version not a string
		`{"jsonrpc":"2.0","id":1}`,                                  // no method
		`{"jsonrpc":"2.0","method":null,"id":1}`,                    // method not a string
		`{"JSONRPC":"2.0","Method":"get_data","id":1}`,              // members are case-sensitive
		`{"jsonrpc":"2.0","method":"get_data","method":"x","id":1}`, // repeated member
		`{}`, `1`, `"x"`, `null`, `true`,
	} {
		status, resp := post(t, url, body)
		code, _ := errorOf(t, resp)
		if status != http.StatusOK || code != CodeInvalidRequest {
			t.Errorf("%s: got %d %s", body, status, resp)
		}
	}
	for _, body := range []string{``, ` `, `{`, `{"jsonrpc":"2.0"`, `[1,]`, "\xff", `{"a":1}x`} {
		_, resp := post(t, url, body)
		if code, msg := errorOf(t, resp); code != CodeParseError || msg != "Parse error" {
			t.Errorf("%q: got %s", body, resp)
		}
	}
	// Escaped version string and unknown members are fine.
	_, resp := post(t, url, `{"jsonrpc":"2\u002e0","method":"get_data","id":1,"extra":{"a":[1,"]"]}}`)
	if !jsonEqual(t, resp, []byte(`{"jsonrpc":"2.0","result":["hello",5],"id":1}`)) {
		t.Errorf("got %s", resp)
	}
}

func TestHandlerErrors(t *testing.T) {
	_, url := testServer(t, Options{})
	_, body := post(t, url, call(`"fail"`, ``, `1`))
	if want := `{"jsonrpc":"2.0","error":{"code":-1,"message":"block not found"},"id":1}`; string(body) != want {
		t.Errorf("domain error: got %s", body)
	}
	_, body = post(t, url, call(`"failrpc"`, ``, `1`))
	if want := `{"jsonrpc":"2.0","error":{"code":-5,"message":"Invalid address","data":{"pos":3}},"id":1}`; string(body) != want {
		t.Errorf("*Error: got %s", body)
	}
	for _, m := range []string{`"badraw"`, `"badmarshal"`} {
		_, body = post(t, url, call(m, ``, `1`))
		if code, _ := errorOf(t, body); code != CodeInternal {
			t.Errorf("%s: got %s", m, body)
		}
	}
}

func TestHandlerPanic(t *testing.T) {
	var logBuf syncBuffer
	logger := slog.New(slog.NewTextHandler(&logBuf, nil))
	_, url := testServer(t, Options{Logger: logger})
	for range 3 {
		status, body := post(t, url, call(`"panic"`, ``, `1`))
		if want := `{"jsonrpc":"2.0","error":{"code":-32603,"message":"internal error"},"id":1}`; status != 200 || string(body) != want {
			t.Fatalf("got %d %s", status, body)
		}
		// The server keeps answering.
		_, body = post(t, url, call(`"get_data"`, ``, `2`))
		if !jsonEqual(t, body, []byte(`{"jsonrpc":"2.0","result":["hello",5],"id":2}`)) {
			t.Fatalf("after panic: %s", body)
		}
	}
	if !strings.Contains(logBuf.String(), "handler panic") || !strings.Contains(logBuf.String(), "boom") {
		t.Errorf("panic not logged: %s", logBuf.String())
	}
}

func TestTimeout(t *testing.T) {
	_, url := testServer(t, Options{Timeout: 100 * time.Millisecond})
	for _, m := range []string{`"sleep"`, `"stubborn"`} {
		start := time.Now()
		_, body := post(t, url, call(m, ``, `1`))
		if code, msg := errorOf(t, body); code != CodeTimeout || msg != "request timed out" {
			t.Errorf("%s: got %s", m, body)
		}
		if d := time.Since(start); d > 250*time.Millisecond {
			t.Errorf("%s: answered after %v", m, d)
		}
	}
	// In a batch, calls after the deadline are not run.
	status, body := post(t, url, `[`+call(`"sleep"`, ``, `1`)+`,`+call(`"get_data"`, ``, `2`)+`]`)
	var resp []struct {
		Error *Error `json:"error"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || status != 200 || len(resp) != 2 {
		t.Fatalf("batch: %d %s", status, body)
	}
	for _, r := range resp {
		if r.Error == nil || r.Error.Code != CodeTimeout {
			t.Errorf("batch: %s", body)
		}
	}
	time.Sleep(300 * time.Millisecond) // let the stubborn handler finish
}

func TestBodyTooLarge(t *testing.T) {
	_, url := testServer(t, Options{MaxBodyBytes: 1024})
	big := call(`"echo"`, `["`+strings.Repeat("a", 2000)+`"]`, `1`)
	// Known Content-Length.
	status, body := post(t, url, big)
	if code, msg := errorOf(t, body); status != http.StatusRequestEntityTooLarge || code != CodeInvalidRequest || msg != "request too large" {
		t.Errorf("got %d %s", status, body)
	}
	// Chunked (unknown length): caught by http.MaxBytesReader.
	resp, err := http.Post(url, "application/json", io.MultiReader(strings.NewReader(big)))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if code, msg := errorOf(t, data); resp.StatusCode != http.StatusRequestEntityTooLarge || code != CodeInvalidRequest || msg != "request too large" {
		t.Errorf("chunked: got %d %s", resp.StatusCode, data)
	}
	// Just under the limit works.
	ok := call(`"echo"`, `["`+strings.Repeat("a", 900)+`"]`, `1`)
	if status, body := post(t, url, ok); status != 200 || bytes.Contains(body, []byte("error")) {
		t.Errorf("under limit: %d %.100s", status, body)
	}
}

func TestBatchLimits(t *testing.T) {
	_, url := testServer(t, Options{MaxBatch: 3})
	req := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = call(`"get_data"`, ``, fmt.Sprint(i))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	status, body := post(t, url, req(4))
	if code, msg := errorOf(t, body); status != 200 || code != CodeInvalidRequest || !strings.Contains(msg, "batch too large") {
		t.Errorf("got %d %s", status, body)
	}
	status, body = post(t, url, req(3))
	var resp []json.RawMessage
	if err := json.Unmarshal(body, &resp); err != nil || status != 200 || len(resp) != 3 {
		t.Errorf("got %d %s", status, body)
	}
	// Responses keep request order; notifications are left out.
	status, body = post(t, url, `[`+call(`"subtract"`, `[5,1]`, `"a"`)+`,`+call(`"null"`, ``, ``)+`,`+call(`"subtract"`, `[9,1]`, `"b"`)+`]`)
	want := `[{"jsonrpc":"2.0","result":4,"id":"a"},{"jsonrpc":"2.0","result":8,"id":"b"}]`
	if status != 200 || string(body) != want {
		t.Errorf("got %d %s", status, body)
	}
	// A nested batch is not a request.
	_, body = post(t, url, `[[`+call(`"null"`, ``, `1`)+`]]`)
	if want := `[{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":null}]`; string(body) != want {
		t.Errorf("nested: %s", body)
	}
}

func TestNotifications(t *testing.T) {
	s := NewServer(Options{})
	var ran atomic.Int32
	s.Register(Method{Name: "n", Handler: func(context.Context, Params) (any, error) {
		ran.Add(1)
		return nil, errors.New("ignored")
	}})
	ts := newTestServer(t, s)
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"n"}`,
		`{"jsonrpc":"2.0","method":"missing","params":[1]}`,
		`[{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","method":"n","params":[]}]`,
	} {
		status, resp := post(t, ts.URL, body)
		if status != http.StatusNoContent || len(resp) != 0 {
			t.Errorf("%s: got %d %q", body, status, resp)
		}
	}
	if got := ran.Load(); got != 3 {
		t.Errorf("handler ran %d times, want 3", got)
	}
	// A null id is not a notification.
	_, resp := post(t, ts.URL, `{"jsonrpc":"2.0","method":"n","id":null}`)
	if want := `{"jsonrpc":"2.0","error":{"code":-1,"message":"ignored"},"id":null}`; string(resp) != want {
		t.Errorf("null id: %s", resp)
	}
}

func TestHTTPMethodAndHeaders(t *testing.T) {
	_, url := testServer(t, Options{})
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		req, _ := http.NewRequest(m, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
			t.Errorf("%s: got %d Allow=%q", m, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
	// Any Content-Type is accepted; responses are application/json.
	for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded"} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(call(`"null"`, ``, `1`)))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || string(body) != `{"jsonrpc":"2.0","result":null,"id":1}` {
			t.Errorf("content type %q: %d %q %s", ct, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
}

func TestMaxConcurrent(t *testing.T) {
	s := NewServer(Options{MaxConcurrent: 2})
	var cur, peak atomic.Int32
	s.Register(Method{Name: "work", Handler: func(context.Context, Params) (any, error) {
		n := cur.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		cur.Add(-1)
		return true, nil
	}})
	ts := newTestServer(t, s)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, body := post(t, ts.URL, call(`"work"`, ``, `1`)); string(body) != `{"jsonrpc":"2.0","result":true,"id":1}` {
				t.Errorf("got %s", body)
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > 2 {
		t.Errorf("peak concurrency %d > 2", p)
	}
}

func TestRegisterAndMethods(t *testing.T) {
	s := NewServer(Options{})
	h := func(context.Context, Params) (any, error) { return nil, nil }
	s.Register(Method{Name: "b", Handler: h, Help: "B"})
	s.Register(Method{Name: "a", Handler: h, Params: []ParamSpec{{Name: "x"}, {Name: "y", Optional: true}}})
	ms := s.Methods()
	if len(ms) != 2 || ms[0].Name != "a" || ms[1].Name != "b" || ms[1].Help != "B" || len(ms[0].Params) != 2 {
		t.Fatalf("Methods() = %+v", ms)
	}
	ms[0].Params[0].Name = "changed"
	if m, ok := s.Lookup("a"); !ok || m.Params[0].Name != "x" {
		t.Fatalf("Methods() result aliases the registry")
	}
	mustPanic := func(name string, m Method) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		s.Register(m)
	}
	mustPanic("duplicate", Method{Name: "a", Handler: h})
	mustPanic("empty name", Method{Handler: h})
	mustPanic("nil handler", Method{Name: "c"})
	mustPanic("required after optional", Method{Name: "d", Handler: h, Params: []ParamSpec{{Name: "x", Optional: true}, {Name: "y"}}})
	mustPanic("duplicate param", Method{Name: "e", Handler: h, Params: []ParamSpec{{Name: "x"}, {Name: "x"}}})
}

// TestLogging checks that calls are logged at Debug level without params.
func TestLogging(t *testing.T) {
	var logBuf syncBuffer
	logger := slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	_, url := testServer(t, Options{Logger: logger})
	post(t, url, call(`"subtract"`, `[4242, 1717]`, `1`))
	post(t, url, call(`"gettx"`, `["secretpassphrase"]`, `2`))
	out := logBuf.String()
	if !strings.Contains(out, "method=subtract") || !strings.Contains(out, "code=0") || !strings.Contains(out, "duration=") {
		t.Errorf("call not logged: %s", out)
	}
	if !strings.Contains(out, "method=gettx") || !strings.Contains(out, "code=-32602") {
		t.Errorf("failed call not logged: %s", out)
	}
	if strings.Contains(out, "4242") || strings.Contains(out, "secretpassphrase") {
		t.Errorf("params leaked into the log: %s", out)
	}
}

func TestParamsHelpersDirect(t *testing.T) {
	p := Params{json.RawMessage(`"a"`), json.RawMessage(`null`), json.RawMessage(`-9223372036854775808`)}
	if _, err := p.String(5); err == nil || err.Error() != "rpc error -32602: missing parameter 6" {
		t.Errorf("missing: %v", err)
	}
	if v, err := p.OptBool(1, true); err != nil || !v {
		t.Errorf("OptBool null: %v %v", v, err)
	}
	if v, err := p.OptUint64(9, 4); err != nil || v != 4 {
		t.Errorf("OptUint64 absent: %v %v", v, err)
	}
	if v, err := p.OptString(1, "d"); err != nil || v != "d" {
		t.Errorf("OptString null: %v %v", v, err)
	}
	if v, err := p.Int(2); err != nil || v != -9223372036854775808 {
		t.Errorf("Int min: %v %v", v, err)
	}
	if _, err := p.Bool(1); err == nil {
		t.Error("Bool(null) accepted")
	}
	var s struct{ A int }
	if err := (Params{json.RawMessage(`{"A":"x"}`)}).Decode(0, &s); err == nil {
		t.Error("Decode accepted a bad value")
	} else if e := (*Error)(nil); !errors.As(err, &e) || e.Code != CodeInvalidParams {
		t.Errorf("Decode error %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writes (the server
// logs from handler goroutines).
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestContentLength checks that small and large responses are both sent
// with a Content-Length rather than chunked.
func TestContentLength(t *testing.T) {
	_, url := testServer(t, Options{})
	for _, n := range []int{1, 2040, 5000, 100000} {
		body := call(`"echo"`, `["`+strings.Repeat("x", n)+`"]`, `1`)
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.ContentLength != int64(len(data)) || len(resp.TransferEncoding) != 0 {
			t.Errorf("n=%d: Content-Length %d, body %d, transfer encoding %v", n, resp.ContentLength, len(data), resp.TransferEncoding)
		}
	}
}
