package jsonrpc

import (
	"encoding/json"
	"net/http"
	"os"
	"testing"
)

type specVector struct {
	Name     string  `json:"name"`
	Request  string  `json:"request_raw"`
	Response *string `json:"response_raw_or_null"`
}

func loadSpecVectors(t testing.TB) []specVector {
	data, err := os.ReadFile("../../testdata/vectors/jsonrpc2_spec_examples.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []specVector
	if err := json.Unmarshal(data, &vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) != 15 {
		t.Fatalf("got %d vectors, want 15", len(vs))
	}
	return vs
}

// TestSpecExamples runs every example of section 7 of the JSON-RPC 2.0
// specification. "foobar" is deliberately not registered: the spec sends
// it once as a notification (no response either way) and once as a call
// that must fail with "Method not found".
func TestSpecExamples(t *testing.T) {
	ts := newTestServer(t, specServer(t, Options{}))
	for _, v := range loadSpecVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			status, body := post(t, ts.URL, v.Request)
			if v.Response == nil {
				if status != http.StatusNoContent || len(body) != 0 {
					t.Fatalf("want 204 with no body, got %d %q", status, body)
				}
				return
			}
			if status != http.StatusOK {
				t.Fatalf("status %d, want 200 (body %s)", status, body)
			}
			if !jsonEqual(t, body, []byte(*v.Response)) {
				t.Fatalf("response\n got  %s\n want %s", body, *v.Response)
			}
		})
	}
}
