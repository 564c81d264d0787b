// Package mcp serves coin-faucetd's API over the Model Context Protocol (streamable HTTP,
// the official Go SDK), at /mcp: one tool per HTTP endpoint ([Tools]), whose input and
// output schemas are inferred from the endpoint's lib/faucet/api types.
//
// # Overview
//
// The package is a door of the faucet's service: [NewServer] takes an api.Service
// (lib/faucet's), and a tool call reads its arguments as its endpoint reads a request (a
// POST's JSON body with api.Decode, a GET's query parameters), spends the MCP client's
// budgets (Service.Admit, the client named by [PeerHeader] and Options.Caller) and calls the
// Service method its endpoint calls (calls.go); a refusal's api.Error becomes the tool error,
// with the status its kind has over HTTP. So behaviour, limits and error codes are the
// endpoint's by construction, with no HTTP request or JSON answer in between. The package
// depends on lib/faucet/api, not on the service's internals.
// docs/agents.md describes the tools, client configuration and the discovery files.
//
// # Errors
//
// A refused call is a tool error (isError) whose text and structured content are a
// [ToolError]: the endpoint's {"error": {"code", "message"}}, its HTTP status and, for a
// 429, retry_after_seconds. [ErrorOf] reads it from a result. [NewServer] and [NewHandler]
// fail only when a tool's schema cannot be inferred.
package mcp
