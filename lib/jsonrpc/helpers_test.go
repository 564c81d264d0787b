package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"testing"
)

// post sends body to url and returns the status and the response body.
func post(t testing.TB, url, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	return resp.StatusCode, data
}

func mustJSON(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("invalid JSON %q: %v", b, err)
	}
	return v
}

// jsonEqual compares two JSON texts as values; arrays at the top level
// are compared as unordered sets (for batch responses).
func jsonEqual(t testing.TB, got, want []byte) bool {
	t.Helper()
	g, w := mustJSON(t, got), mustJSON(t, want)
	ga, gok := g.([]any)
	wa, wok := w.([]any)
	if gok && wok {
		return slices.Equal(canonical(t, ga), canonical(t, wa))
	}
	return reflect.DeepEqual(g, w)
}

func canonical(t testing.TB, vs []any) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	slices.Sort(out)
	return out
}

// errorOf decodes a single error response and returns code and message.
func errorOf(t testing.TB, body []byte) (int, string) {
	t.Helper()
	var r struct {
		JSONRPC string          `json:"jsonrpc"`
		Error   *Error          `json:"error"`
		ID      json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("bad response %q: %v", body, err)
	}
	if r.JSONRPC != "2.0" || r.Error == nil {
		t.Fatalf("not an error response: %s", body)
	}
	return r.Error.Code, r.Error.Message
}

func specServer(t testing.TB, opts Options) *Server {
	s := NewServer(opts)
	s.Register(Method{
		Name:   "subtract",
		Params: []ParamSpec{{Name: "minuend", Type: "numeric"}, {Name: "subtrahend", Type: "numeric"}},
		Handler: func(_ context.Context, p Params) (any, error) {
			a, err := p.Int(0)
			if err != nil {
				return nil, err
			}
			b, err := p.Int(1)
			if err != nil {
				return nil, err
			}
			return a - b, nil
		},
	})
	s.Register(Method{
		Name:   "sum",
		Params: []ParamSpec{{Name: "a", Optional: true}, {Name: "b", Optional: true}, {Name: "c", Optional: true}},
		Handler: func(_ context.Context, p Params) (any, error) {
			total := 0
			for i := range p {
				n, err := p.Int(i)
				if err != nil {
					return nil, err
				}
				total += n
			}
			return total, nil
		},
	})
	s.Register(Method{
		Name:    "update",
		Params:  []ParamSpec{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}, {Name: "e"}},
		Handler: func(context.Context, Params) (any, error) { return nil, nil },
	})
	s.Register(Method{
		Name:    "notify_hello",
		Params:  []ParamSpec{{Name: "n"}},
		Handler: func(context.Context, Params) (any, error) { return nil, nil },
	})
	s.Register(Method{
		Name:    "get_data",
		Handler: func(context.Context, Params) (any, error) { return []any{"hello", 5}, nil },
	})
	return s
}

func newTestServer(t testing.TB, s *Server) *httptest.Server {
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}
