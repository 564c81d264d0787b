package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/cointoolkit/coin/lib/faucet/mcp"
)

// getDoc fetches path from the harness's server: status, content type and body.
func getDoc(t *testing.T, h *harness, path string) (int, string, []byte) {
	t.Helper()
	resp, err := h.http.Client().Get(h.http.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

func TestDiscoveryDocuments(t *testing.T) {
	h := regtestHarness(t, 1)
	base := h.http.URL
	docs := map[string]map[string]any{}
	for _, path := range []string{AgentCardPathA2A, MCPCardPath, MCPServerCardPath, MCPServerJSONPath} {
		code, ct, body := getDoc(t, h, path)
		var m map[string]any
		if code != 200 || ct != "application/json" || json.Unmarshal(body, &m) != nil {
			t.Fatalf("%s: %d %q %s", path, code, ct, body)
		}
		docs[path] = m
	}
	card := docs[AgentCardPathA2A]
	ifs, _ := card["supportedInterfaces"].([]any)
	if len(ifs) != 1 {
		t.Fatalf("agent card interfaces %v", card["supportedInterfaces"])
	}
	if i := ifs[0].(map[string]any); i["url"] != base+mcp.Path || i["protocolBinding"] != "MCP" || i["protocolVersion"] != a2aProtocolVersion {
		t.Errorf("agent card interface %v", i)
	}
	if card["url"] != nil || card["protocolVersion"] != nil {
		t.Errorf("the current card carries 0.3's url/protocolVersion: %v", card)
	}
	if sk := card["skills"].([]any); len(sk) != len(mcp.Tools()) {
		t.Errorf("%d skills, %d tools", len(sk), len(mcp.Tools()))
	}
	mc := docs[MCPCardPath]
	if tr := mc["transport"].(map[string]any); tr["type"] != "streamable-http" || tr["endpoint"] != mcp.Path || tr["url"] != base+mcp.Path {
		t.Errorf("mcp card transport %v", tr)
	}
	if mc["protocolVersion"] != MCPProtocolVersions[0] || len(mc["tools"].([]any)) != len(mcp.Tools()) {
		t.Errorf("mcp card %v %d tools", mc["protocolVersion"], len(mc["tools"].([]any)))
	}
	if fmt.Sprint(docs[MCPServerCardPath]) != fmt.Sprint(mc) {
		t.Error("the two server card paths differ")
	}
	if r := docs[MCPServerJSONPath]["remotes"].([]any)[0].(map[string]any); r["url"] != base+mcp.Path || r["type"] != "streamable-http" {
		t.Errorf("server.json remotes %v", r)
	}
	// /mcp negotiates down to every older revision the card names, and answers a client
	// asking for an unknown one with one of them.
	for _, want := range MCPProtocolVersions[1:] {
		if v := initializeVersion(t, base, want); v != want {
			t.Errorf("/mcp answers an initialize for %s with %s", want, v)
		}
	}
	if v := initializeVersion(t, base, "2099-01-01"); !slices.Contains(MCPProtocolVersions, v) {
		t.Errorf("/mcp negotiates %q, not in the card's %v", v, MCPProtocolVersions)
	}

	// The registry entry in the repository is the served one with the public base URL.
	var published, want any
	if err := json.Unmarshal(PublishedServerJSON, &published); err != nil {
		t.Fatal(err)
	}
	wb, _ := json.Marshal(ServerJSON(PublicBase))
	_ = json.Unmarshal(wb, &want)
	if fmt.Sprint(published) != fmt.Sprint(want) {
		t.Errorf("lib/faucet/mcp/server.json is stale:\n%s\nwant\n%s", PublishedServerJSON, wb)
	}

	// llms.txt: a title, a summary, sections of links, every local link served.
	code, ct, body := getDoc(t, h, LLMsPath)
	if code != 200 || !strings.HasPrefix(ct, "text/markdown") {
		t.Fatalf("llms.txt: %d %q", code, ct)
	}
	lines := strings.Split(string(body), "\n")
	if !strings.HasPrefix(lines[0], "# ") || lines[1] != "" || !strings.HasPrefix(lines[2], "> ") {
		t.Errorf("llms.txt does not open with a title and a summary:\n%s", body)
	}
	for _, sec := range []string{"## API", "## Discovery", "## Docs"} {
		if !bytes.Contains(body, []byte("\n"+sec+"\n")) {
			t.Errorf("llms.txt has no %s", sec)
		}
	}
	links := regexp.MustCompile(`\]\((`+regexp.QuoteMeta(base)+`[^)]*)\)`).FindAllStringSubmatch(string(body), -1)
	sawMCP := false
	for _, l := range links {
		if l[1] == base+mcp.Path {
			sawMCP = true
			continue
		}
		if code, _, _ := getDoc(t, h, strings.TrimPrefix(l[1], base)); code != 200 {
			t.Errorf("llms.txt links %s, which answers %d", l[1], code)
		}
	}
	if len(links) < 5 || !sawMCP || !bytes.Contains(body, []byte(base+"/openapi.json")) {
		t.Errorf("llms.txt links %v", links)
	}
}

// initializeVersion is the protocol revision /mcp answers an initialize asking for v with.
func initializeVersion(t *testing.T, base, v string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", base+mcp.Path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+
		v+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`"protocolVersion":"([^"]+)"`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("initialize: %d %s", resp.StatusCode, b)
	}
	return string(m[1])
}

// TestDiscoverySchemas checks the served documents against the published schemas in
// testdata/schemas (README.md there names their sources).
func TestDiscoverySchemas(t *testing.T) {
	h := regtestHarness(t, 1)
	_, _, body := getDoc(t, h, AgentCardPathA2A)
	var card any
	if err := json.Unmarshal(body, &card); err != nil {
		t.Fatal(err)
	}
	proto, err := os.ReadFile("testdata/schemas/a2a.proto")
	if err != nil {
		t.Fatal(err)
	}
	msgs := parseProto(string(proto))
	if len(msgs["AgentCard"]) < 10 || len(msgs["AgentInterface"]) != 4 {
		t.Fatalf("the proto parses to %d AgentCard fields, %d AgentInterface fields", len(msgs["AgentCard"]), len(msgs["AgentInterface"]))
	}
	for _, e := range checkProto(msgs, "AgentCard", card, "card") {
		t.Error(e)
	}
	// The check catches what it is for.
	var broken map[string]any
	_ = json.Unmarshal(body, &broken)
	delete(broken["supportedInterfaces"].([]any)[0].(map[string]any), "protocolBinding")
	broken["skills"] = "x"
	if errs := checkProto(msgs, "AgentCard", broken, "card"); len(errs) != 2 {
		t.Errorf("a broken card gives %v", errs)
	}

	raw, err := os.ReadFile("testdata/schemas/server.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{MCPServerJSONPath, MCPCardPath} {
		_, _, body := getDoc(t, h, path)
		var doc any
		_ = json.Unmarshal(body, &doc)
		for _, e := range checkSchema(schema, schema, doc, path) {
			t.Error(e)
		}
	}
	var doc any
	_ = json.Unmarshal(PublishedServerJSON, &doc)
	for _, e := range checkSchema(schema, schema, doc, "mcp/server.json") {
		t.Error(e)
	}
	// A package entry (not used by the faucet) goes through oneOf, allOf and const.
	pkg := map[string]any{"name": "io.github.x/y", "description": "d", "version": "1.0.0", "packages": []any{
		map[string]any{"registryType": "npm", "identifier": "y", "version": "1.0.0", "transport": map[string]any{"type": "stdio"}}}}
	if errs := checkSchema(schema, schema, pkg, "pkg"); len(errs) != 0 {
		t.Errorf("a valid npm package: %v", errs)
	}
	delete(pkg["packages"].([]any)[0].(map[string]any), "identifier")
	if errs := checkSchema(schema, schema, pkg, "pkg"); len(errs) == 0 {
		t.Error("a package without an identifier passes")
	}
	bad := map[string]any{"name": "no-slash", "description": strings.Repeat("x", 101), "remotes": []any{map[string]any{"type": "stdio"}}}
	if errs := checkSchema(schema, schema, bad, "bad"); len(errs) < 4 {
		t.Errorf("a bad server.json gives %v", errs)
	}
}

// protoField is a field of a proto message: its JSON name, type, and whether it repeats,
// is a map, or is REQUIRED.
type protoField struct {
	json, typ       string
	repeated, isMap bool
	required        bool
}

var protoFieldRE = regexp.MustCompile(`^\s*(optional\s+|repeated\s+)?(map<[^>]+>|[\w.]+)\s+(\w+)\s*=\s*\d+\s*(\[[^\]]*\])?\s*;`)

// parseProto reads the messages of a proto file (top-level fields only, enough for the
// card's messages).
func parseProto(src string) map[string][]protoField {
	out := map[string][]protoField{}
	cur := ""
	for _, line := range strings.Split(src, "\n") {
		line, _, _ = strings.Cut(line, "//")
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "message "); ok {
			cur = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(name), "{"))
			continue
		}
		if strings.TrimSpace(line) == "}" {
			cur = ""
			continue
		}
		m := protoFieldRE.FindStringSubmatch(line)
		if cur == "" || m == nil {
			continue
		}
		out[cur] = append(out[cur], protoField{json: lowerCamel(m[3]), typ: m[2], repeated: strings.TrimSpace(m[1]) == "repeated",
			isMap: strings.HasPrefix(m[2], "map<"), required: strings.Contains(m[4], "REQUIRED")})
	}
	return out
}

func lowerCamel(s string) string {
	var b strings.Builder
	up := false
	for _, r := range s {
		if r == '_' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
		}
		up = false
		b.WriteRune(r)
	}
	return b.String()
}

// checkProto checks v against message msg: required fields present, each field's JSON type
// that of its proto type, nested messages checked in turn.
func checkProto(msgs map[string][]protoField, msg string, v any, at string) []string {
	obj, ok := v.(map[string]any)
	if !ok {
		return []string{at + ": not an object"}
	}
	var errs []string
	for _, f := range msgs[msg] {
		fv, present := obj[f.json]
		if !present {
			if f.required {
				errs = append(errs, at+": no required field "+f.json)
			}
			continue
		}
		if f.isMap {
			if _, ok := fv.(map[string]any); !ok {
				errs = append(errs, at+"."+f.json+": not an object")
			}
			continue
		}
		items := []any{fv}
		if f.repeated {
			arr, ok := fv.([]any)
			if !ok {
				errs = append(errs, at+"."+f.json+": not an array")
				continue
			}
			items = arr
		}
		for i, it := range items {
			p := at + "." + f.json
			if f.repeated {
				p += fmt.Sprintf("[%d]", i)
			}
			switch f.typ {
			case "string":
				if _, ok := it.(string); !ok {
					errs = append(errs, p+": not a string")
				}
			case "bool":
				if _, ok := it.(bool); !ok {
					errs = append(errs, p+": not a boolean")
				}
			case "int32", "int64", "uint32", "uint64", "double", "float":
				if _, ok := it.(float64); !ok {
					errs = append(errs, p+": not a number")
				}
			default:
				if _, known := msgs[f.typ]; known {
					errs = append(errs, checkProto(msgs, f.typ, it, p)...)
				} else if _, ok := it.(map[string]any); !ok {
					errs = append(errs, p+": not an object")
				}
			}
		}
	}
	return errs
}

// checkSchema checks v against a JSON Schema node: $ref, allOf, anyOf, oneOf, type,
// required, properties, items, enum, minLength, maxLength, pattern, const and format uri
// (the keywords of the registry's schema; not and discriminator are not checked).
func checkSchema(root, node map[string]any, v any, at string) []string {
	if ref, ok := node["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/definitions/")
		def, ok := root["definitions"].(map[string]any)[name].(map[string]any)
		if !ok {
			return []string{at + ": no definition " + ref}
		}
		return checkSchema(root, def, v, at)
	}
	var errs []string
	for _, sub := range asList(node["allOf"]) {
		errs = append(errs, checkSchema(root, sub.(map[string]any), v, at)...)
	}
	if alts, ok := node["oneOf"].([]any); ok {
		n := 0
		for _, a := range alts {
			if len(checkSchema(root, a.(map[string]any), v, at)) == 0 {
				n++
			}
		}
		if n != 1 {
			errs = append(errs, fmt.Sprintf("%s: matches %d of oneOf's %d", at, n, len(alts)))
		}
	}
	if alts, ok := node["anyOf"].([]any); ok {
		var all []string
		for _, a := range alts {
			errs := checkSchema(root, a.(map[string]any), v, at)
			if len(errs) == 0 {
				all = nil
				break
			}
			all = append(all, errs...)
		}
		if all != nil {
			errs = append(errs, at+": matches none of anyOf: "+strings.Join(all, "; "))
		}
	}
	typ, _ := node["type"].(string)
	switch typ {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return []string{at + ": not an object"}
		}
		for _, r := range asList(node["required"]) {
			if _, ok := obj[r.(string)]; !ok {
				errs = append(errs, at+": no required field "+r.(string))
			}
		}
		props, _ := node["properties"].(map[string]any)
		for k, pv := range obj {
			if ps, ok := props[k].(map[string]any); ok {
				errs = append(errs, checkSchema(root, ps, pv, at+"."+k)...)
			}
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return []string{at + ": not an array"}
		}
		if items, ok := node["items"].(map[string]any); ok {
			for i, it := range arr {
				errs = append(errs, checkSchema(root, items, it, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	case "string":
		s, ok := v.(string)
		if !ok {
			return []string{at + ": not a string"}
		}
		n := float64(len([]rune(s)))
		if mx, ok := node["maxLength"].(float64); ok && n > mx {
			errs = append(errs, fmt.Sprintf("%s: longer than %v", at, mx))
		}
		if mn, ok := node["minLength"].(float64); ok && n < mn {
			errs = append(errs, fmt.Sprintf("%s: shorter than %v", at, mn))
		}
		if p, ok := node["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(s) {
			errs = append(errs, at+": does not match "+p)
		}
		if node["format"] == "uri" && !strings.Contains(s, "://") {
			errs = append(errs, at+": not a URI")
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return []string{at + ": not a boolean"}
		}
	}
	if c, ok := node["const"]; ok && c != v {
		errs = append(errs, fmt.Sprintf("%s: %v is not %v", at, v, c))
	}
	if enum := asList(node["enum"]); enum != nil {
		found := false
		for _, e := range enum {
			found = found || e == v
		}
		if !found {
			errs = append(errs, fmt.Sprintf("%s: %v is not one of %v", at, v, enum))
		}
	}
	return errs
}

func asList(v any) []any { l, _ := v.([]any); return l }
