package httpapi

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// The OpenAPI document is OpenAPI 3.1, describes exactly the routes the server has (path
// and method), every $ref resolves, and the spec's tables are in it: required fields and
// types of each response and request, and the 429 of the faucet.
func TestOpenAPIDocument(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.1.") {
		t.Fatalf("openapi %q", v)
	}
	info := obj(t, doc, "info")
	if info["title"] == nil || info["version"] != "0.1.0" {
		t.Fatalf("info %v", info)
	}
	paths := obj(t, doc, "paths")

	// Routes and paths agree.
	h := regtestHarness(t, 1)
	want := map[string]bool{}
	for _, rt := range h.server.Routes() {
		key := strings.ToLower(rt.Method) + " " + rt.Path
		want[key] = true
		p, ok := paths[rt.Path].(map[string]any)
		if !ok || p[strings.ToLower(rt.Method)] == nil {
			t.Errorf("route %s %s is not in the OpenAPI document", rt.Method, rt.Path)
		}
	}
	for path, p := range paths {
		for method, op := range p.(map[string]any) {
			if !want[method+" "+path] {
				t.Errorf("OpenAPI has %s %s, the server does not", method, path)
			}
			o := op.(map[string]any)
			if o["operationId"] == nil || o["responses"] == nil {
				t.Errorf("%s %s: no operationId or responses", method, path)
			}
		}
	}

	// Every $ref resolves.
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if r, ok := x["$ref"].(string); ok {
				if resolve(doc, r) == nil {
					t.Errorf("unresolved $ref %s", r)
				}
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(doc)

	// The spec's tables: endpoint, 200 schema's required fields with types, other statuses.
	type field = field2
	spec := []struct {
		method, path string
		request      []field
		response     []field
		statuses     []string
	}{
		{"get", "/api/wallet/new", nil, []field{{"mnemonic", "string"}, {"address", "string"}}, nil},
		{"post", "/api/faucet", []field{{"address", "string"}}, []field{{"txid", "string"}, {"amount", "string"}}, []string{"429", "400"}},
		{"get", "/api/status", nil, []field{{"block_height", "integer"}, {"mempool_size", "integer"}, {"faucet_balance", "string"}}, nil},
		{"get", "/api/wallet/balance", nil, []field{{"address", "string"}, {"balance", "string"}, {"utxo_count", "integer"},
			{"spendable", "string"}}, []string{"400"}}, // spendable: decay (protocol §8), beyond the spec
		{"post", "/api/wallet/send", []field{{"mnemonic", "string"}, {"to", "string"}, {"amount", "number"}},
			[]field{{"txid", "string"}, {"from", "string"}, {"to", "string"}, {"amount", "string"}}, []string{"400"}},
		{"post", "/api/wallet/derive", []field{{"mnemonic", "string"}}, []field{{"address", "string"}}, nil},
		{"post", "/api/agent/register", []field{{"mnemonic", "string"}},
			[]field{{"address", "string"}, {"stake_txid", "string"}, {"conduct_score", "integer"}}, []string{"400"}},
		{"get", "/api/agent/profile", nil, []field{{"address", "string"}, {"conduct_score", "integer"}, {"tier", "string"}}, []string{"404"}},
		{"get", "/api/agent/directory", nil,
			[]field{{"agents", "array"}, {"total", "integer"}, {"offset", "integer"}, {"limit", "integer"}}, []string{"400"}},
		{"post", "/api/agent/vouch", []field{{"mnemonic", "string"}, {"target_address", "string"}},
			[]field{{"voucher", "string"}, {"target", "string"}, {"txid", "string"}}, []string{"400"}},
		{"post", "/api/agent/contract/create", []field{{"mnemonic", "string"}, {"counterparty", "string"}, {"value_coin", "number"}},
			[]field{{"contract_id", "string"}, {"initiator", "string"}, {"counterparty", "string"}, {"value_coin", "string"},
				{"status", "string"}}, []string{"400"}},
		{"post", "/api/agent/contract/fulfil", []field{{"mnemonic", "string"}, {"contract_id", "string"}},
			[]field{{"contract_id", "string"}, {"status", "string"}, {"release_txid", "string"}}, []string{"400"}},
		{"post", "/api/agent/contract/refund", []field{{"mnemonic", "string"}, {"contract_id", "string"}},
			[]field{{"contract_id", "string"}, {"status", "string"}, {"refund_txid", "string"}}, []string{"400"}},
		{"get", "/api/agent/contract", nil, []field{{"contract_id", "string"}, {"status", "string"}, {"value_coin", "string"}},
			[]string{"400", "404"}},
		{"post", "/api/agent/review",
			[]field{{"mnemonic", "string"}, {"subject_address", "string"}, {"score", "integer"}, {"contract_id", "string"}},
			[]field{{"reviewer", "string"}, {"subject", "string"}, {"score", "integer"}, {"contract_id", "string"},
				{"new_conduct_score", "integer"}}, []string{"400"}},
	}
	for _, s := range spec {
		op := obj(t, obj(t, paths, s.path), s.method)
		resps := obj(t, op, "responses")
		for _, st := range s.statuses {
			if resps[st] == nil {
				t.Errorf("%s %s: no %s response", s.method, s.path, st)
			}
		}
		ok := obj(t, resps, "200")
		schema := deref(t, doc, obj(t, obj(t, obj(t, deref(t, doc, ok), "content"), "application/json"), "schema"))
		checkFields(t, doc, s.method+" "+s.path+" 200", specForm(t, doc, schema), s.response)
		if s.request != nil {
			rb := obj(t, op, "requestBody")
			if rb["required"] != true {
				t.Errorf("%s %s: request body not required", s.method, s.path)
			}
			rs := deref(t, doc, obj(t, obj(t, obj(t, rb, "content"), "application/json"), "schema"))
			checkFields(t, doc, s.method+" "+s.path+" request", specForm(t, doc, rs), s.request)
		}
	}
	// The balance endpoint's query parameter.
	params, _ := obj(t, obj(t, paths, "/api/wallet/balance"), "get")["parameters"].([]any)
	if len(params) != 1 || params[0].(map[string]any)["name"] != "address" || params[0].(map[string]any)["required"] != true {
		t.Errorf("balance parameters %v", params)
	}
	// The agent profile's optional fields, the tiers, the directory's paging and the agent
	// error codes.
	schemas := obj(t, obj(t, doc, "components"), "schemas")
	profile := obj(t, obj(t, schemas, "AgentProfile"), "properties")
	for _, f := range []string{"contracts_completed", "contracts_failed", "vouches_received", "vouches_given",
		"reviews_received", "average_review_score", "registered_at"} {
		if profile[f] == nil {
			t.Errorf("profile has no %s", f)
		}
	}
	if obj(t, profile, "registered_at")["format"] != "date-time" {
		t.Error("registered_at is not a date-time")
	}
	if tiers, _ := obj(t, schemas, "Tier")["enum"].([]any); len(tiers) != 5 {
		t.Errorf("tiers %v", tiers)
	}
	dirParams, _ := obj(t, obj(t, paths, "/api/agent/directory"), "get")["parameters"].([]any)
	for _, p := range dirParams {
		p := p.(map[string]any)
		sc := obj(t, p, "schema")
		switch p["name"] {
		case "offset":
			if sc["default"] != 0.0 || sc["minimum"] != 0.0 {
				t.Errorf("offset %v", sc)
			}
		case "limit":
			if sc["default"] != 20.0 || sc["maximum"] != 100.0 {
				t.Errorf("limit %v", sc)
			}
		}
	}
	if len(dirParams) != 2 {
		t.Errorf("directory parameters %v", dirParams)
	}
	codes, _ := obj(t, obj(t, obj(t, obj(t, obj(t, schemas, "Error"), "properties"), "error"), "properties"), "code")["examples"].([]any)
	have := map[any]bool{}
	for _, c := range codes {
		have[c] = true
	}
	for _, c := range []string{"not_an_agent", "already_registered", "insufficient_balance", "score_too_low", "already_vouched",
		"agent_not_found", "contract_not_found", "contract_not_open", "contract_expired", "contract_not_expired",
		"contract_not_fulfilled", "not_counterparty", "not_initiator", "not_participant", "already_reviewed", "invalid_score",
		"invalid_expiry", "self_target", "bad_escrow", "invalid_contract_id"} {
		if !have[c] {
			t.Errorf("error code %s is not documented", c)
		}
	}
	// Decay (protocol §8): balance is nominal, spendable and faucet_balance are effective values.
	schemas = obj(t, obj(t, doc, "components"), "schemas")
	for _, c := range []struct{ schema, field, word string }{
		{"Balance", "balance", "nominal"}, {"Balance", "spendable", "effective value"}, {"Status", "faucet_balance", "effective value"},
	} {
		p := obj(t, obj(t, obj(t, schemas, c.schema), "properties"), c.field)
		if d, _ := p["description"].(string); !strings.Contains(d, c.word) {
			t.Errorf("%s.%s: description %q does not say %q", c.schema, c.field, d, c.word)
		}
	}

	// 429 carries Retry-After.
	rl := deref(t, doc, obj(t, obj(t, obj(t, paths, "/api/faucet"), "post"), "responses")["429"].(map[string]any))
	if obj(t, rl, "headers")["Retry-After"] == nil {
		t.Error("429 without Retry-After header")
	}
}

// specForm is the spec's form of a schema that allows the public_key form too (protocol §9.5):
// the first of its oneOf, which is the mnemonic form. A response's oneOf is (the result,
// UnsignedTx); a request's is (required mnemonic, required public_key), merged here into
// its required fields.
func specForm(t *testing.T, doc, schema map[string]any) map[string]any {
	t.Helper()
	one, ok := schema["oneOf"].([]any)
	if !ok {
		return schema
	}
	first := one[0].(map[string]any)
	if _, ok := first["$ref"]; ok {
		return deref(t, doc, first)
	}
	out := map[string]any{}
	for k, v := range schema {
		out[k] = v
	}
	req, _ := schema["required"].([]any)
	out["required"] = append(append([]any(nil), req...), first["required"].([]any)...)
	return out
}

func checkFields(t *testing.T, doc map[string]any, what string, schema map[string]any, fields []field2) {
	t.Helper()
	req := map[string]bool{}
	for _, r := range schema["required"].([]any) {
		req[r.(string)] = true
	}
	props := obj(t, schema, "properties")
	for _, f := range fields {
		if !req[f.name] {
			t.Errorf("%s: %s is not required", what, f.name)
		}
		p, ok := props[f.name].(map[string]any)
		if !ok {
			t.Errorf("%s: no property %s", what, f.name)
			continue
		}
		if typ := deref(t, doc, p)["type"]; typ != f.typ {
			t.Errorf("%s: %s has type %v, want %s", what, f.name, typ, f.typ)
		}
	}
}

type field2 = struct{ name, typ string }

// Live responses match the document's patterns for amounts, txids and addresses.
func TestOpenAPIServedAndPatterns(t *testing.T) {
	h := regtestHarness(t, 3)
	r := h.do(t, http.MethodGet, "/openapi.json", "")
	if r.Status != 200 || r.Body["openapi"] == nil {
		t.Fatalf("GET /openapi.json: %d", r.Status)
	}
	var doc map[string]any
	_ = json.Unmarshal(OpenAPI, &doc)
	schemas := obj(t, obj(t, doc, "components"), "schemas")
	pat := func(name string) *regexp.Regexp {
		return regexp.MustCompile(obj(t, schemas, name)["pattern"].(string))
	}
	w := h.do(t, http.MethodGet, "/api/wallet/new", "")
	if !pat("Address").MatchString(w.Body["address"].(string)) {
		t.Errorf("address %v does not match the document's pattern", w.Body["address"])
	}
	c := h.do(t, http.MethodPost, "/api/faucet", claimBody(w.Body["address"].(string)))
	if c.Status != 200 {
		t.Fatalf("claim: %d %s", c.Status, c.Raw)
	}
	if !pat("TxID").MatchString(c.Body["txid"].(string)) || !pat("Amount").MatchString(c.Body["amount"].(string)) {
		t.Errorf("claim %s does not match the document's patterns", c.Raw)
	}
}

func obj(t *testing.T, m map[string]any, key string) map[string]any {
	t.Helper()
	v, ok := m[key].(map[string]any)
	if !ok {
		t.Fatalf("no object %q in %v", key, keysOf(m))
	}
	return v
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func resolve(doc map[string]any, ref string) map[string]any {
	if !strings.HasPrefix(ref, "#/") {
		return nil
	}
	var cur any = doc
	for _, part := range strings.Split(ref[2:], "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	m, _ := cur.(map[string]any)
	return m
}

func deref(t *testing.T, doc, m map[string]any) map[string]any {
	t.Helper()
	for i := 0; i < 8; i++ {
		r, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		m = resolve(doc, r)
		if m == nil {
			t.Fatalf("unresolved %s", r)
		}
	}
	return m
}
