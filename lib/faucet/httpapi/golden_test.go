package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/wallet"
)

// The golden transcript: every endpoint of the faucet (the HTTP API, its 404 and 405
// answers, the discovery files, MCP tool calls and the Web pages) asked a fixed script of
// requests on a faucet over a regtest node in the process, each answer's status, headers
// and body compared with testdata/golden/transcript.json. It pins the API byte for byte
// across reshapes of the code behind it. The setup is deterministic (fixed wallets, the
// faucet's coinbases mined first), so amounts, heights, scores and transaction ids come
// out the same on every run; what the clock decides is normalised: times, blocks' times
// and nonces, block hashes (with every other 64-hex-digit id, numbered by first
// appearance, so an id that recurs must recur in the same places), retry delays, and the
// random wallet of GET /api/wallet/new. go test -run TestGoldenTranscript -update rewrites
// the file.

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden/transcript.json")

// goldenEntry is one request and its normalised answer.
type goldenEntry struct {
	Request string            `json:"request"`
	Status  int               `json:"status"`
	Header  map[string]string `json:"header"`
	Body    string            `json:"body,omitempty"`
	BodySHA string            `json:"body_sha256,omitempty"`
}

// Fixed wallets (BIP-39 test vectors), so addresses are stable.
const (
	goldenMnemonicA = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
	goldenMnemonicB = "zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo wrong"
	goldenMnemonicC = "letter advice cage absurd amount doctor acoustic avoid letter advice cage above"
)

type goldenRecorder struct {
	t       *testing.T
	h       *harness
	entries []goldenEntry
	ids     map[string]string
	secrets map[string]string // exact strings to replace (random wallets)
}

var (
	hex64RE  = regexp.MustCompile(`[0-9a-f]{64}`)
	timeRE   = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?`)
	retryRE  = regexp.MustCompile(`(retry in |"retry_after_seconds":|\\"retry_after_seconds\\":|try again in )\d+`)
	hex128RE = regexp.MustCompile(`[0-9a-f]{128,}`)
	// hostRE is the httptest server's address, which changes per run.
	hostRE = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	// blockTimeRE is a block's time and the nonce mined for it: the regtest node mines its
	// blocks at the clock's time.
	blockTimeRE = regexp.MustCompile(`((?:\\)?"(?:timestamp|nonce)(?:\\)?":)\d+`)
)

func (g *goldenRecorder) norm(s string) string {
	for k, v := range g.secrets {
		s = strings.ReplaceAll(s, k, v)
	}
	s = hostRE.ReplaceAllString(s, "<host>")
	s = hex128RE.ReplaceAllString(s, "<hexdata>")
	s = hex64RE.ReplaceAllStringFunc(s, func(h string) string {
		if n, ok := g.ids[h]; ok {
			return n
		}
		n := fmt.Sprintf("<id%d>", len(g.ids)+1)
		g.ids[h] = n
		return n
	})
	s = timeRE.ReplaceAllString(s, "<time>")
	s = blockTimeRE.ReplaceAllString(s, "${1}<n>")
	return retryRE.ReplaceAllString(s, "${1}<n>")
}

// do sends a request and records its answer. hashBody records only the SHA-256 of a large,
// non-volatile body.
func (g *goldenRecorder) do(method, path, body string, hdr map[string]string, hashBody bool) []byte {
	g.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, g.h.http.URL+path, rd)
	if err != nil {
		g.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := g.h.http.Client().Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	e := goldenEntry{Request: g.norm(method + " " + path + " " + body), Status: resp.StatusCode, Header: map[string]string{}}
	for k, v := range resp.Header {
		switch k {
		case "Date", "Content-Length", "Last-Modified":
			continue
		}
		if k == "Retry-After" {
			v = []string{"<n>"}
		}
		e.Header[k] = g.norm(strings.Join(v, "; "))
	}
	if hashBody {
		sum := sha256.Sum256(raw)
		e.BodySHA = hex.EncodeToString(sum[:])
	} else {
		e.Body = g.norm(string(raw))
	}
	g.entries = append(g.entries, e)
	return raw
}

func (g *goldenRecorder) json(method, path, body string) map[string]any {
	raw := g.do(method, path, body, nil, false)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

func (g *goldenRecorder) mcp(id int, method, params string) {
	g.do(http.MethodPost, "/mcp", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params),
		map[string]string{"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-06-18"}, false)
}

func (g *goldenRecorder) page(method, path string) {
	g.do(method, path, "", map[string]string{"Accept": "text/html"}, false)
}

func goldenWallet(t *testing.T, m string) agentWallet {
	t.Helper()
	a, err := wallet.AddressFromMnemonic(m, testNet, 0)
	if err != nil {
		t.Fatal(err)
	}
	pkh, _ := wallet.DecodeAddress(a, testNet)
	return agentWallet{m, a, pkh}
}

func TestGoldenTranscript(t *testing.T) {
	h := newHarness(t, 16, noIPLimit)
	g := &goldenRecorder{t: t, h: h, ids: map[string]string{}, secrets: map[string]string{}}
	a, b, c := goldenWallet(t, goldenMnemonicA), goldenWallet(t, goldenMnemonicB), goldenWallet(t, goldenMnemonicC)
	h.settle(t)

	// 1-6: the wallet and faucet endpoints.
	g.json("GET", "/api/status", "")
	nw := g.json("GET", "/api/wallet/new", "")
	if s, _ := nw["mnemonic"].(string); s != "" {
		g.secrets[s] = "<mnemonic>"
		g.secrets[nw["address"].(string)] = "<new address>"
		g.entries[len(g.entries)-1].Body = g.norm(g.entries[len(g.entries)-1].Body)
	}
	g.json("POST", "/api/faucet", claimBody(a.address))
	g.json("POST", "/api/faucet", claimBody(a.address))
	g.json("POST", "/api/faucet", claimBody(b.address))
	g.json("POST", "/api/faucet", claimBody(c.address))
	g.json("POST", "/api/faucet", `{}`)
	g.json("POST", "/api/faucet", `{"address":`)
	g.json("POST", "/api/faucet", `{"address":5}`)
	g.json("POST", "/api/faucet", `{"address":"x"} {}`)
	g.json("POST", "/api/faucet", claimBody("tcoin1notanaddress"))
	g.json("POST", "/api/faucet", claimBody(h.engine.Address()))
	g.json("GET", "/api/faucet", "")
	g.json("DELETE", "/api/status", "")
	g.json("GET", "/api/nothing", "")
	g.json("GET", "/api/wallet/balance?address="+a.address, "")
	g.json("GET", "/api/wallet/balance", "")
	g.json("POST", "/api/wallet/derive", `{"mnemonic":"`+a.mnemonic+`"}`)
	g.json("POST", "/api/wallet/derive", `{"mnemonic":"not a mnemonic"}`)
	g.json("POST", "/api/wallet/derive", `{}`)
	h.mine(1)
	h.settle(t)
	g.json("GET", "/api/status", "")
	g.json("POST", "/api/wallet/send", mnemonicBody(c, field("to", b.address), `"amount":1.5`))
	g.json("POST", "/api/wallet/send", mnemonicBody(c, field("to", b.address), `"amount":0.000001`))
	g.json("POST", "/api/wallet/send", mnemonicBody(c, field("to", b.address), `"amount":"1"`))
	g.json("POST", "/api/wallet/send", mnemonicBody(c, field("to", b.address), `"amount":100000`))
	g.json("POST", "/api/wallet/send", mnemonicBody(c, `"amount":1`))
	g.json("POST", "/api/wallet/send", `{"public_key":"`+hex.EncodeToString(pubKeyOf(t, c.mnemonic))+`","to":"`+b.address+`","amount":1}`)
	g.json("POST", "/api/wallet/send", `{"mnemonic":"`+c.mnemonic+`","public_key":"`+hex.EncodeToString(pubKeyOf(t, c.mnemonic))+`","to":"`+b.address+`","amount":1}`)

	// 7-13 and the contract endpoints.
	g.json("GET", "/api/agent/profile?address="+a.address, "")
	g.json("POST", "/api/agent/vouch", mnemonicBody(a, field("target_address", b.address)))
	g.json("POST", "/api/agent/register", mnemonicBody(a))
	g.json("POST", "/api/agent/register", mnemonicBody(a))
	g.json("POST", "/api/agent/register", mnemonicBody(b))
	g.json("GET", "/api/agent/profile?address="+a.address, "")
	g.json("GET", "/api/agent/profile?address="+c.address, "")
	g.json("GET", "/api/agent/profile?address=nope", "")
	g.json("GET", "/api/agent/directory", "")
	g.json("GET", "/api/agent/directory?offset=1&limit=1", "")
	g.json("GET", "/api/agent/directory?limit=0", "")
	g.json("GET", "/api/agent/directory?offset=x", "")
	g.json("POST", "/api/agent/vouch", mnemonicBody(a, field("target_address", b.address)))
	g.json("POST", "/api/agent/vouch", mnemonicBody(a, field("target_address", c.address)))
	g.json("POST", "/api/agent/vouch", mnemonicBody(c, field("target_address", a.address)))
	h.trust(t, a)
	g.json("POST", "/api/agent/vouch", mnemonicBody(a, field("target_address", b.address)))
	g.json("POST", "/api/agent/vouch", mnemonicBody(a, field("target_address", a.address)))
	g.json("POST", "/api/agent/contract/create", mnemonicBody(a, field("counterparty", c.address), `"value_coin":1`))
	g.json("POST", "/api/agent/contract/create", mnemonicBody(a, field("counterparty", b.address), `"value_coin":1`, `"expiry_blocks":5`))
	g.json("POST", "/api/agent/contract/create", mnemonicBody(a, field("counterparty", b.address), `"value_coin":"1"`))
	g.json("POST", "/api/agent/contract/create", mnemonicBody(a, field("counterparty", b.address), `"value_coin":10000`))
	cr := g.json("POST", "/api/agent/contract/create", mnemonicBody(a, field("counterparty", b.address), `"value_coin":2.5`, `"expiry_blocks":20`))
	id, _ := cr["contract_id"].(string)
	g.json("GET", "/api/agent/contract?contract_id="+id, "")
	g.json("GET", "/api/agent/contract?contract_id="+strings.Repeat("0", 64), "")
	g.json("GET", "/api/agent/contract?contract_id=xyz", "")
	g.json("POST", "/api/agent/contract/refund", mnemonicBody(a, field("contract_id", id)))
	g.json("POST", "/api/agent/contract/refund", mnemonicBody(b, field("contract_id", id)))
	g.json("POST", "/api/agent/contract/fulfil", mnemonicBody(a, field("contract_id", id)))
	g.json("POST", "/api/agent/review", mnemonicBody(a, field("contract_id", id), field("subject_address", b.address), `"score":9`))
	g.json("POST", "/api/agent/contract/fulfil", mnemonicBody(b, field("contract_id", id)))
	g.json("POST", "/api/agent/contract/fulfil", mnemonicBody(b, field("contract_id", id)))
	g.json("POST", "/api/agent/contract/fulfil", mnemonicBody(b, field("contract_id", strings.Repeat("0", 64))))
	g.json("POST", "/api/agent/review", mnemonicBody(a, field("contract_id", id), field("subject_address", b.address), `"score":11`))
	g.json("POST", "/api/agent/review", mnemonicBody(a, field("contract_id", id), field("subject_address", b.address), `"score":1.5`))
	g.json("POST", "/api/agent/review", mnemonicBody(a, field("contract_id", id), field("subject_address", c.address), `"score":9`))
	g.json("POST", "/api/agent/review", mnemonicBody(a, field("contract_id", id), field("subject_address", b.address), `"score":9`))
	g.json("POST", "/api/agent/review", mnemonicBody(a, field("contract_id", id), field("subject_address", b.address), `"score":9`))
	g.json("POST", "/api/agent/review", `{"public_key":"`+hex.EncodeToString(pubKeyOf(t, b.mnemonic))+`",`+
		field("contract_id", id)+","+field("subject_address", a.address)+`,"score":8}`)
	g.json("GET", "/api/agent/contract?contract_id="+id, "")
	g.json("GET", "/api/agent/events", "")
	g.json("POST", "/api/tx/submit", `{}`)
	g.json("POST", "/api/tx/submit", `{"unsigned_tx":"00","public_key":"`+strings.Repeat("ab", 32)+`","signature":"`+strings.Repeat("cd", 64)+`"}`)
	h.mine(1)
	h.settle(t)

	// The chain endpoints.
	g.json("GET", "/api/block?height=1", "")
	g.json("GET", "/api/block?height=99999", "")
	g.json("GET", "/api/block", "")
	g.json("GET", "/api/tx?txid="+id, "")
	g.json("GET", "/api/tx?txid="+strings.Repeat("0", 64), "")
	g.json("GET", "/api/address/decay?address="+a.address, "")
	g.json("GET", "/api/agent/profile?address="+b.address, "")
	g.do("GET", "/openapi.json", "", nil, true)
	g.json("POST", "/openapi.json", "")

	// Discovery files.
	for _, p := range []string{AgentCardPath, AgentCardPathA2A, AIPluginPath, RobotsPath, IndexPath, MCPCardPath, MCPServerCardPath, MCPServerJSONPath, LLMsPath} {
		g.do("GET", p, "", nil, false)
	}
	g.do("POST", RobotsPath, "", nil, false)

	// MCP: the tool list and tool calls (answers and refusals).
	g.mcp(1, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"golden","version":"1"}}`)
	g.mcp(2, "tools/list", `{}`)
	g.mcp(3, "tools/call", `{"name":"network_status","arguments":{}}`)
	g.mcp(4, "tools/call", `{"name":"agent_profile","arguments":{"address":"`+a.address+`"}}`)
	g.mcp(5, "tools/call", `{"name":"agent_profile","arguments":{"address":"`+c.address+`"}}`)
	g.mcp(6, "tools/call", `{"name":"agent_directory","arguments":{"limit":1}}`)
	g.mcp(7, "tools/call", `{"name":"agent_directory","arguments":{"limit":1000}}`)
	g.mcp(8, "tools/call", `{"name":"faucet_claim","arguments":{"address":"`+a.address+`"}}`)
	g.mcp(9, "tools/call", `{"name":"faucet_claim","arguments":{}}`)
	g.mcp(10, "tools/call", `{"name":"contract_get","arguments":{"contract_id":"`+id+`"}}`)
	g.mcp(11, "tools/call", `{"name":"agent_vouch","arguments":{"mnemonic":"`+c.mnemonic+`","target_address":"`+a.address+`"}}`)
	g.mcp(12, "tools/call", `{"name":"wallet_send","arguments":{"mnemonic":"`+c.mnemonic+`","to":"`+a.address+`","amount":"x"}}`)
	g.mcp(13, "tools/call", `{"name":"wallet_send","arguments":{"mnemonic":"`+c.mnemonic+`","to":"`+a.address+`","amount":0.5}}`)
	g.mcp(14, "tools/call", `{"name":"wallet_derive","arguments":{"mnemonic":"`+c.mnemonic+`"}}`)
	g.mcp(15, "tools/call", `{"name":"wallet_balance","arguments":{"address":"`+b.address+`"}}`)
	g.mcp(16, "tools/call", `{"name":"block_get","arguments":{"height":1}}`)
	g.mcp(17, "tools/call", `{"name":"transaction_get","arguments":{"txid":"`+id+`"}}`)
	g.mcp(18, "tools/call", `{"name":"address_decay","arguments":{"address":"`+b.address+`"}}`)
	g.mcp(19, "tools/call", `{"name":"contract_create","arguments":{"mnemonic":"`+a.mnemonic+`","counterparty":"`+b.address+`","value_coin":1,"expiry_blocks":"x"}}`)
	g.mcp(20, "tools/call", `{"name":"agent_review","arguments":{"public_key":"`+hex.EncodeToString(pubKeyOf(t, b.mnemonic))+`","contract_id":"`+id+`","subject_address":"`+a.address+`","score":8}}`)
	g.mcp(21, "tools/call", `{"name":"tx_submit","arguments":{}}`)

	// The Web pages.
	g.page("GET", "/")
	g.page("GET", "/agents")
	g.page("GET", "/agents/"+a.address)
	g.page("GET", "/agents/"+c.address)
	g.page("GET", "/contracts?id="+id)
	g.page("GET", "/contracts/"+id)
	g.page("GET", "/contracts/"+strings.Repeat("0", 64))
	g.page("POST", "/agents")
	g.page("GET", "/claim")
	g.page("GET", "/nothing")
	g.do("POST", "/claim", "address="+c.address, map[string]string{"Content-Type": "application/x-www-form-urlencoded",
		"Accept": "text/html", "Origin": h.http.URL, "Sec-Fetch-Site": "same-origin"}, false)

	// Routing's edge cases: HEAD of a GET endpoint, other methods, unclean and escaped paths.
	for _, rq := range [][2]string{{"HEAD", "/api/status"}, {"HEAD", "/api/agent/events"}, {"OPTIONS", "/api/faucet"},
		{"POST", "/api/wallet/new"}, {"GET", "/api/status/"}, {"GET", "//api/status"}, {"GET", "/api/./status"},
		{"GET", "/api%2Fstatus"}, {"GET", "/API/status"}, {"HEAD", "/.well-known/agent.json"}, {"GET", "/static/style.css"},
		{"POST", "/static/style.css"}, {"GET", "/mcp"}} {
		g.do(rq[0], rq[1], "", nil, rq[1] == "/static/style.css" && rq[0] == "GET")
	}
	g.page("HEAD", "/")

	compareGolden(t, g.entries)
}

// settle waits until the engine's view of the faucet's funds is the node's at its tip:
// the engine reads it again after each block, and what decayed with the block shows in
// the balances only then.
func (h *harness) settle(t *testing.T) {
	t.Helper()
	waitFor(t, func() bool {
		b, err := h.rn.GetAddressBalance(context.Background(), h.key.Address, true)
		return err == nil && h.engine.Status().Spendable == b.Spendable
	})
}

func pubKeyOf(t *testing.T, m string) []byte {
	t.Helper()
	ring, err := wallet.KeyringFromMnemonic(m, "", testNet, 0)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ring.Key(0)
	if err != nil {
		t.Fatal(err)
	}
	return k.Pub
}

func compareGolden(t *testing.T, got []goldenEntry) {
	t.Helper()
	path := filepath.Join("testdata", "golden", "transcript.json")
	if *updateGolden {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to record it)", err)
	}
	var want []goldenEntry
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("%d answers, want %d", len(got), len(want))
	}
	for i := 0; i < len(got) && i < len(want); i++ {
		g, w := got[i], want[i]
		if g.Request != w.Request {
			t.Fatalf("answer %d: request %q, want %q", i, g.Request, w.Request)
		}
		if g.Status != w.Status || g.Body != w.Body || g.BodySHA != w.BodySHA {
			t.Errorf("%s:\n got %d %s%s\nwant %d %s%s", g.Request, g.Status, g.Body, g.BodySHA, w.Status, w.Body, w.BodySHA)
		}
		keys := map[string]bool{}
		for k := range g.Header {
			keys[k] = true
		}
		for k := range w.Header {
			keys[k] = true
		}
		var names []string
		for k := range keys {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if g.Header[k] != w.Header[k] {
				t.Errorf("%s: header %s %q, want %q", g.Request, k, g.Header[k], w.Header[k])
			}
		}
	}
}
