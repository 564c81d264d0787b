package httpapi

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	"github.com/cointoolkit/coin/lib/faucet"
	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/faucet/mcp"
	"github.com/cointoolkit/coin/lib/logging"
)

// What an AI agent finds besides the HTTP API (docs/agents.md): the MCP endpoint (POST
// /mcp, lib/faucet/mcp: one tool per endpoint, each calling the Service method of its
// endpoint, so a tool's limits and error codes are its endpoint's), and the discovery files
// /.well-known/agent.json (the A2A 0.3 agent card, for older clients; the current shape is
// /.well-known/agent-card.json, discovery.go, with the MCP cards and /llms.txt),
// /.well-known/ai-plugin.json (an AI-plugin manifest pointing to /openapi.json and /mcp) and
// /robots.txt. They are generated from the route table and the tool list. They are not API
// endpoints (not in openapi.json); the per-client token bucket applies to them too (a
// bucket of their own, so that an MCP tool call costs its endpoint's tokens exactly as an
// HTTP call does), and the access log records them.

// Discovery paths.
const (
	AgentCardPath        = "/.well-known/agent.json"
	AgentCardPathA2A     = "/.well-known/agent-card.json"
	AIPluginPath         = "/.well-known/ai-plugin.json"
	RobotsPath           = "/robots.txt"
	IndexPath            = "/"
	discoveryCacheMaxAge = "max-age=300"
)

// withDiscovery serves /mcp and the discovery files, and everything else through apiH (the
// API's handler chain).
func (s *Server) withDiscovery(apiH http.Handler) http.Handler {
	mcpH, err := mcp.NewHandler(s.Service, &mcp.Options{AllowAnyHost: s.opts.TrustedProxies > 0,
		MaxBodyBytes: s.opts.MaxBodyBytes + 4<<10, Logger: s.log.With(logging.SubsystemKey, "mcp"), Caller: s.caller,
		MaxArgumentBytes: s.opts.MaxBodyBytes, Hint: Hint})
	if err != nil {
		s.log.Error("the MCP server cannot start", "err", err)
	}
	// The envelope's bucket is twice the API's: a tool call takes one token here and one
	// from the API's bucket, shared with HTTP, which binds; MCP's own messages (initialize,
	// tools/list) fit in the rest.
	var reqs *faucet.ClientLimiter
	if s.cfg.RequestRate > 0 {
		reqs = faucet.NewClientLimiter(2*s.cfg.RequestRate*60, 2*s.cfg.RequestBurst+10)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case mcp.Path, AgentCardPath, AgentCardPathA2A, AIPluginPath, RobotsPath, IndexPath,
			MCPCardPath, MCPServerCardPath, MCPServerJSONPath, LLMsPath:
		default:
			apiH.ServeHTTP(w, r)
			return
		}
		rw, done := s.serving(w, r)
		defer done()
		if ok, wait := reqs.Allow(clientNet(clientAddr(r, s.opts.TrustedProxies))); !ok {
			s.writeError(rw, faucet.ClientLimited(wait, "too many requests from this client"))
			return
		}
		if r.URL.Path == mcp.Path {
			if mcpH == nil {
				s.writeError(rw, apiErr(api.KindInternal, "internal", "the MCP server is not available"))
				return
			}
			mcpH.ServeHTTP(rw, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			rw.Header().Set("Allow", "GET, HEAD")
			s.writeError(rw, apiErr(api.KindNotAllowed, "method_not_allowed", "%s %s is not supported; use GET", r.Method, r.URL.Path))
			return
		}
		base := publicBase(r, s.opts.TrustedProxies)
		var body []byte
		ctype := "application/json"
		if b, ct, ok := s.discoveryDoc(r.URL.Path, base); ok {
			body, ctype = b, ct
		}
		switch r.URL.Path {
		case AgentCardPath:
			body, _ = json.MarshalIndent(AgentCard(base, s.cfg.Net.Name), "", "  ")
		case AIPluginPath:
			body, _ = json.MarshalIndent(AIPlugin(base, s.cfg.Net.Name), "", "  ")
		case IndexPath:
			body, _ = json.MarshalIndent(Index(base, s.cfg.Net.Name), "", "  ")
		case RobotsPath:
			body, ctype = []byte(s.Robots()), "text/plain; charset=utf-8"
		}
		rw.Header().Set("Content-Type", ctype)
		rw.Header().Set("Cache-Control", discoveryCacheMaxAge)
		rw.Header().Set("Access-Control-Allow-Origin", "*")
		rw.Header().Set("X-Content-Type-Options", "nosniff")
		rw.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = rw.Write(append(body, '\n'))
		}
	})
}

// publicBase is the URL the client reached the service at: scheme and host of the request,
// or, behind trusted proxies, as the outermost proxy says (X-Forwarded-Proto and -Host).
func publicBase(r *http.Request, trustedProxies int) string {
	scheme, host := "http", r.Host
	if r.TLS != nil {
		scheme = "https"
	}
	if trustedProxies > 0 {
		if p := firstForwarded(r.Header.Get("X-Forwarded-Proto")); p == "https" || p == "http" {
			scheme = p
		}
		if h := firstForwarded(r.Header.Get("X-Forwarded-Host")); h != "" {
			host = h
		}
	}
	if host == "" || strings.ContainsAny(host, "/\\ \"<>") {
		host = "localhost"
	}
	return scheme + "://" + host
}

func firstForwarded(v string) string {
	v, _, _ = strings.Cut(v, ",")
	return strings.TrimSpace(v)
}

// The agent card: A2A's AgentCard fields (name, description, url, version, capabilities,
// input and output modes, skills: one per MCP tool), with the MCP endpoint and the OpenAPI
// document. The service speaks MCP and HTTP/JSON, not A2A's JSON-RPC: url is the API's base.
type agentCard struct {
	ProtocolVersion    string         `json:"protocolVersion"`
	Name               string         `json:"name"`
	Description        string         `json:"description"`
	URL                string         `json:"url"`
	Version            string         `json:"version"`
	DocumentationURL   string         `json:"documentationUrl"`
	Provider           map[string]any `json:"provider"`
	Capabilities       map[string]any `json:"capabilities"`
	DefaultInputModes  []string       `json:"defaultInputModes"`
	DefaultOutputModes []string       `json:"defaultOutputModes"`
	Skills             []agentSkill   `json:"skills"`
	// Not A2A: where the interfaces are.
	MCP     map[string]string `json:"mcp"`
	OpenAPI string            `json:"openapi"`
}

type agentSkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	// Not A2A: the HTTP endpoint the skill is.
	Endpoint string `json:"endpoint"`
}

const serviceDescription = "COIN testnet faucet and Proof of Conduct: free testnet COIN, wallets, transfers, and the on-chain " +
	"reputation of AI agents (stake 50 COIN to register, escrowed contracts, vouches, reviews; a conduct score from 0 to 1000)."

// AgentCard is the agent card of the service at base (scheme://host) on network netName.
func AgentCard(base, netName string) any {
	return agentCard{ProtocolVersion: "0.3.0", Name: "coin-faucetd (" + netName + ")", Description: serviceDescription,
		URL: base, Version: "0.1.0", DocumentationURL: base + "/openapi.json",
		Provider:          map[string]any{"organization": "COIN toolkit", "url": base},
		Capabilities:      map[string]any{"streaming": false, "pushNotifications": false, "stateTransitionHistory": false},
		DefaultInputModes: []string{"application/json"}, DefaultOutputModes: []string{"application/json"}, Skills: skills(),
		MCP:     map[string]string{"url": base + mcp.Path, "transport": "streamable-http"},
		OpenAPI: base + "/openapi.json"}
}

// Index is the answer at the service's base URL: where everything is.
func Index(base, netName string) any {
	return map[string]any{
		"name":            "coin-faucetd (" + netName + ")",
		"description":     serviceDescription,
		"openapi":         base + "/openapi.json",
		"mcp":             base + mcp.Path,
		"agent_card":      base + AgentCardPath,
		"ai_plugin":       base + AIPluginPath,
		"robots":          base + RobotsPath,
		"agent_card_a2a":  base + AgentCardPathA2A,
		"mcp_card":        base + MCPCardPath,
		"mcp_server_json": base + MCPServerJSONPath,
		"llms":            base + LLMsPath,
	}
}

// AIPlugin is the AI-plugin manifest (schema v1) of the service at base.
func AIPlugin(base, netName string) any {
	return map[string]any{
		"schema_version":        "v1",
		"name_for_human":        "COIN faucet (" + netName + ")",
		"name_for_model":        "coin_faucet",
		"description_for_human": "Free testnet COIN and the Proof of Conduct reputation of AI agents.",
		"description_for_model": serviceDescription + " Amounts in requests are JSON numbers of COIN; errors are " +
			`{"error":{"code","message"}} with stable codes. Operations that act for a wallet take its mnemonic in the body; ` +
			"prefer keeping keys in coin-wallet ('coin-wallet agent ...'). The same operations are MCP tools at " + base + mcp.Path + ".",
		"auth": map[string]any{"type": "none"},
		"api":  map[string]any{"type": "openapi", "url": base + "/openapi.json"},
		"mcp":  map[string]any{"url": base + mcp.Path, "transport": "streamable-http"},
	}
}

// Robots is robots.txt: crawlers may read the documents (the discovery files and
// openapi.json) and nothing else; the API and /mcp (every route's first path segment) are
// for agents that mean to call them.
func (s *Server) Robots() string {
	var b strings.Builder
	b.WriteString("# coin-faucetd: a testnet faucet and Proof of Conduct API for AI agents.\n")
	b.WriteString("# Agents: " + AgentCardPathA2A + " (A2A agent card), " + MCPCardPath + " (MCP server card),\n")
	b.WriteString("# " + LLMsPath + ", " + AIPluginPath + " (AI plugin manifest), /openapi.json (OpenAPI 3.1)\n")
	b.WriteString("# and the MCP endpoint " + mcp.Path + " (streamable HTTP).\n")
	b.WriteString("User-agent: *\n")
	allow := []string{"/.well-known/", "/openapi.json", RobotsPath, LLMsPath}
	seen := map[string]bool{}
	var disallow []string
	for _, rt := range s.routes {
		p := rt.Path
		if p == "/openapi.json" {
			continue
		}
		if i := strings.IndexByte(p[1:], '/'); i >= 0 {
			p = p[:i+2]
		}
		if !seen[p] {
			seen[p] = true
			disallow = append(disallow, p)
		}
	}
	disallow = append(disallow, mcp.Path)
	sort.Strings(disallow)
	for _, a := range allow {
		b.WriteString("Allow: " + a + "\n")
	}
	for _, d := range disallow {
		b.WriteString("Disallow: " + d + "\n")
	}
	return b.String()
}
