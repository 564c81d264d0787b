// Package mcp serves coin-faucetd's API over the Model Context Protocol (streamable HTTP,
// the official Go SDK), at /mcp: one tool per HTTP endpoint ([Tools]), whose input and
// output schemas are inferred from the endpoint's lib/faucet/api types.
//
// # Overview
//
// A tool call is served in-process by the endpoint it wraps: [NewServer] takes the API's
// http.Handler (lib/faucet's, with its limits), builds the endpoint's request from the
// arguments (a POST's JSON body, a GET's query), with the MCP client's address as its peer
// ([PeerHeader]), serves it through that handler and decodes the answer as the endpoint's
// api type. So behaviour, limits and error codes are the endpoint's by construction. The
// package depends on lib/faucet/api and net/http only, not on the server's internals.
// docs/agents.md describes the tools, client configuration and the discovery files.
//
// # Errors
//
// A refused call is a tool error (isError) whose text and structured content are a
// [ToolError]: the endpoint's {"error": {"code", "message"}}, its HTTP status and, for a
// 429, retry_after_seconds. [ErrorOf] reads it from a result. [NewServer] and [NewHandler]
// fail only when a tool's schema cannot be inferred.
package mcp
