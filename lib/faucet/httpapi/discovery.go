package httpapi

import (
	"encoding/json"
	"strings"

	"github.com/cointoolkit/coin/lib/faucet/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The discovery documents of today's agent tooling (docs/agents.md, "Discovery"): the A2A
// agent card in the current shape (supportedInterfaces, not the 0.3 url and
// preferredTransport; the older card stays at /.well-known/agent.json), the MCP server card
// (/.well-known/mcp.json, the proposed server-card discovery of MCP), the MCP Registry's
// server.json, and /llms.txt. All are built from the tool list and the request's base URL.

// More discovery paths.
const (
	MCPCardPath       = "/.well-known/mcp.json"
	MCPServerCardPath = "/.well-known/mcp/server-card.json"
	MCPServerJSONPath = "/.well-known/mcp/server.json"
	LLMsPath          = "/llms.txt"
)

// MCPProtocolVersions are the MCP revisions /mcp serves: the official Go SDK's, newest
// first. A client asking for an older one gets it (an initialize from a client that asks
// for an unknown one is answered with the newest revision that still has initialize).
var MCPProtocolVersions = sdk.SupportedProtocolVersions()

const (
	// a2aProtocolVersion is the A2A version whose AgentCard shape the card follows.
	a2aProtocolVersion = "1.0"
	// mcpBinding is the card's protocolBinding for the MCP endpoint. A2A's bindings are an
	// open set (JSONRPC, GRPC and HTTP+JSON are the core ones); the service speaks MCP and
	// HTTP/JSON, not A2A's methods, so it names MCP rather than claim an A2A binding.
	mcpBinding = "MCP"
	// registryName is the server's name in the MCP Registry (reverse DNS of the repository).
	registryName = "io.github.cointoolkit/coin-faucet"
	// serverJSONSchema is the server.json schema revision the entry follows.
	serverJSONSchema = "https://static.modelcontextprotocol.io/schemas/2025-10-11/server.schema.json"
	repositoryURL    = "https://github.com/cointoolkit/coin"
	serviceVersion   = "0.1.0"
	// registryDescription is at most 100 characters (the registry's limit).
	registryDescription = "COIN testnet faucet and Proof of Conduct: wallets, transfers, AI-agent reputation"
)

// agentCardA2A is A2A's AgentCard (current shape).
type agentCardA2A struct {
	Name                string           `json:"name"`
	Description         string           `json:"description"`
	SupportedInterfaces []agentInterface `json:"supportedInterfaces"`
	Provider            map[string]any   `json:"provider"`
	Version             string           `json:"version"`
	DocumentationURL    string           `json:"documentationUrl"`
	Capabilities        map[string]any   `json:"capabilities"`
	DefaultInputModes   []string         `json:"defaultInputModes"`
	DefaultOutputModes  []string         `json:"defaultOutputModes"`
	Skills              []agentSkill     `json:"skills"`
}

type agentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}

// AgentCardA2A is the A2A agent card (current shape) of the service at base on netName.
// No securitySchemes: the service takes no credentials (operations are signed by the
// wallet's key, and the per-client limits need no identity).
func AgentCardA2A(base, netName string) any {
	return agentCardA2A{Name: "coin-faucetd (" + netName + ")", Description: serviceDescription,
		SupportedInterfaces: []agentInterface{{URL: base + mcp.Path, ProtocolBinding: mcpBinding, ProtocolVersion: a2aProtocolVersion}},
		Provider:            map[string]any{"organization": "COIN toolkit", "url": base},
		Version:             serviceVersion, DocumentationURL: base + LLMsPath,
		Capabilities:       map[string]any{"streaming": false, "pushNotifications": false, "extendedAgentCard": false},
		DefaultInputModes:  []string{"application/json"},
		DefaultOutputModes: []string{"application/json"},
		Skills:             skills()}
}

// skills are the agent cards' skills (this card and the older one in wellknown.go): one per
// MCP tool, tagged with its API area, "read" and "mnemonic".
func skills() []agentSkill {
	out := make([]agentSkill, 0, len(mcp.Tools()))
	for _, t := range mcp.Tools() {
		tags := []string{strings.Split(strings.TrimPrefix(t.Path, "/api/"), "/")[0]}
		if t.ReadOnly() {
			tags = append(tags, "read")
		}
		if t.TakesMnemonic {
			tags = append(tags, "mnemonic")
		}
		out = append(out, agentSkill{ID: t.Name, Name: t.Title, Description: t.Description, Tags: tags,
			Endpoint: t.Method + " " + t.Path})
	}
	return out
}

// MCPCard is the MCP server card at /.well-known/mcp.json: the server.json fields (name,
// title, description, version, remotes, repository) and what a client wants before
// connecting: serverInfo as initialize answers it, the transport, the protocol revisions,
// capabilities and the tools.
func MCPCard(base, netName string) any {
	type tool struct {
		Name        string `json:"name"`
		Title       string `json:"title"`
		Description string `json:"description"`
		ReadOnly    bool   `json:"readOnly"`
	}
	tools := make([]tool, 0, len(mcp.Tools()))
	for _, t := range mcp.Tools() {
		tools = append(tools, tool{t.Name, t.Title, t.Description, t.ReadOnly()})
	}
	m := ServerJSON(base)
	m["title"] = "COIN faucet and Proof of Conduct (" + netName + ")"
	m["serverInfo"] = map[string]any{"name": "coin-faucetd", "title": "COIN faucet and Proof of Conduct", "version": serviceVersion}
	m["protocolVersion"] = MCPProtocolVersions[0]
	m["supportedProtocolVersions"] = MCPProtocolVersions
	m["transport"] = map[string]any{"type": "streamable-http", "endpoint": mcp.Path, "url": base + mcp.Path}
	m["capabilities"] = map[string]any{"tools": map[string]any{"listChanged": false}}
	m["authentication"] = map[string]any{"required": false}
	m["tools"] = tools
	m["documentation"] = map[string]any{"llms": base + LLMsPath, "openapi": base + "/openapi.json"}
	return m
}

// ServerJSON is the MCP Registry entry (server.json) of the service at base. The copy in the
// repository (lib/faucet/mcp/server.json, what gets published) is this with the public
// faucet's base URL; a test keeps them equal.
func ServerJSON(base string) map[string]any {
	return map[string]any{
		"$schema":     serverJSONSchema,
		"name":        registryName,
		"title":       "COIN faucet and Proof of Conduct",
		"description": registryDescription,
		"version":     serviceVersion,
		"websiteUrl":  base + LLMsPath,
		"repository":  map[string]any{"url": repositoryURL, "source": "github"},
		"remotes":     []any{map[string]any{"type": "streamable-http", "url": base + mcp.Path}},
	}
}

// PublishedServerJSON is lib/faucet/mcp/server.json, the entry to publish to the registry.
var PublishedServerJSON = mcp.PublishedServerJSON

// PublicBase is the base URL the published server.json names.
const PublicBase = "https://faucet.example.org"

// LLMs is /llms.txt (the llms.txt format: a title, a summary, sections of links).
func LLMs(base, netName string) string {
	var b strings.Builder
	b.WriteString("# coin-faucetd (" + netName + ")\n\n")
	b.WriteString("> " + serviceDescription + "\n\n")
	b.WriteString("Amounts are JSON numbers of COIN. Errors are {\"error\":{\"code\",\"message\"}} with stable codes. " +
		"Operations that act for a wallet take its public_key and answer an unsigned transaction to sign and send " +
		"with POST /api/tx/submit (the key never leaves the agent), or take its mnemonic. POST operations accept an " +
		"Idempotency-Key header: a retry with the same key answers the first result.\n\n")
	b.WriteString("## API\n\n")
	b.WriteString("- [OpenAPI 3.1 document](" + base + "/openapi.json): every endpoint, request and answer\n")
	b.WriteString("- [MCP endpoint](" + base + mcp.Path + "): streamable HTTP, one tool per endpoint\n\n")
	b.WriteString("## Discovery\n\n")
	b.WriteString("- [A2A agent card](" + base + AgentCardPathA2A + "): skills, one per MCP tool\n")
	b.WriteString("- [MCP server card](" + base + MCPCardPath + "): server, transport, protocol revisions, tools\n")
	b.WriteString("- [MCP Registry entry](" + base + MCPServerJSONPath + "): server.json\n")
	b.WriteString("- [Index](" + base + IndexPath + "): where everything is\n\n")
	b.WriteString("## Docs\n\n")
	b.WriteString("- [AI agents](" + repositoryURL + "/blob/main/docs/agents.md): MCP, keeping your key, the SDK\n")
	b.WriteString("- [Faucet and API](" + repositoryURL + "/blob/main/docs/faucet.md)\n")
	b.WriteString("- [Proof of Conduct](" + repositoryURL + "/blob/main/docs/conduct.md): how scores are computed\n\n")
	b.WriteString("## Tools\n\n")
	for _, t := range mcp.Tools() {
		b.WriteString("- " + t.Name + " (" + t.Method + " " + t.Path + "): " + firstSentence(t.Description) + "\n")
	}
	return b.String()
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// discoveryDoc is the body and content type of the discovery document at path, or false.
func (s *Server) discoveryDoc(path, base string) ([]byte, string, bool) {
	var v any
	switch path {
	case AgentCardPathA2A:
		v = AgentCardA2A(base, s.cfg.Net.Name)
	case MCPCardPath, MCPServerCardPath:
		v = MCPCard(base, s.cfg.Net.Name)
	case MCPServerJSONPath:
		v = ServerJSON(base)
	case LLMsPath:
		return []byte(LLMs(base, s.cfg.Net.Name)), "text/markdown; charset=utf-8", true
	default:
		return nil, "", false
	}
	body, _ := json.MarshalIndent(v, "", "  ")
	return body, "application/json", true
}
