package jsonrpc

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"
)

// FuzzServeRequest feeds arbitrary bodies to ServeHTTP. The server must
// never panic and must always answer 204 with no body, or a valid
// JSON-RPC response object or array of them.
func FuzzServeRequest(f *testing.F) {
	if data, err := os.ReadFile("../../testdata/vectors/jsonrpc2_spec_examples.json"); err == nil {
		var vs []specVector
		if json.Unmarshal(data, &vs) == nil {
			for _, v := range vs {
				f.Add([]byte(v.Request))
			}
		}
	}
	for _, seed := range []string{
		``, `[]`, `{}`, `null`, `[[]]`, `[{}]`, "\x00", `{"jsonrpc":"2.0","method":"subtract","params":{"minuend":1,"minuend":2},"id":1}`,
		`{"jsonrpc":"2.0","method":"getblockhash","params":[1,null,3],"id":"x"}`,
		`{"jsonrpc":"2.0","method":"gettx","params":["00ff"],"id":1e400}`,
		`{"jsonrpc":"2.0","method":"echo","params":["\ud800"],"id":-0}`,
		`{"jsonrpc":"2\u002e0","m\u0065thod":"panic","id":[]}`,
	} {
		f.Add([]byte(seed))
	}
	s := fastServer(f, Options{
		MaxBatch: 50, MaxBodyBytes: 1 << 16, Timeout: time.Second,
		Logger: slog.New(slog.DiscardHandler), // "panic" is a registered method
	})
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		out := rec.Body.Bytes()
		switch rec.Code {
		case http.StatusNoContent:
			if len(out) != 0 {
				t.Fatalf("204 with body %q", out)
			}
			return
		case http.StatusOK, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d", rec.Code)
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON response %q for %q", out, body)
		}
		if rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("content type %q", rec.Header().Get("Content-Type"))
		}
		var batch []json.RawMessage
		if out[0] == '[' {
			if err := json.Unmarshal(out, &batch); err != nil || len(batch) == 0 {
				t.Fatalf("bad batch response %q", out)
			}
		} else {
			batch = []json.RawMessage{out}
		}
		for _, r := range batch {
			checkResponseObject(t, r)
		}
	})
}

func checkResponseObject(t *testing.T, r []byte) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r, &m); err != nil {
		t.Fatalf("response element %q is not an object", r)
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		t.Fatalf("bad jsonrpc member in %s", r)
	}
	if _, ok := m["id"]; !ok {
		t.Fatalf("no id in %s", r)
	}
	_, hasResult := m["result"]
	e, hasError := m["error"]
	if hasResult == hasError || len(m) != 3 {
		t.Fatalf("need exactly one of result and error: %s", r)
	}
	if hasError {
		var eo struct {
			Code    *int    `json:"code"`
			Message *string `json:"message"`
		}
		if err := json.Unmarshal(e, &eo); err != nil || eo.Code == nil || eo.Message == nil {
			t.Fatalf("bad error object %s", e)
		}
	}
}
