// Package httpapi is the faucet's HTTP door (docs/faucet.md#api): the JSON API over
// lib/faucet's Service, with the discovery files (/.well-known/..., /llms.txt), /mcp
// (lib/faucet/mcp) and the Web pages (lib/faucet/web) mounted in front of it.
//
// [Server] routes requests with net/http's ServeMux ("POST /api/faucet"), from its route
// table ([Route]); each route decodes its request, calls one Service method and writes the
// result as JSON, or the refusal as {"error": {"code", "message"}} with the HTTP status of
// its kind: 400 for a bad request (malformed JSON, address, mnemonic or amount, a rule's
// refusal), 413 for a body over the limit, 404 for an unknown path, 405 with Allow for a
// wrong method, 429 with Retry-After for rate limits, 5xx for the faucet's or the node's
// failures. A refusal's message gets the advice of its code appended ([Hint]), on /mcp too.
//
// What only HTTP has is configured here ([Options]), not in the Service's faucet.Config:
// bounded bodies; who the client is (the socket's peer, or the address the last
// Options.TrustedProxies X-Forwarded-For hops name; [ClientNetwork]), which the Service's
// per-client limits count; Idempotency-Key on the endpoints that build a transaction
// (idempotency.go); the event stream GET /api/agent/events (Options.Events, lib/faucet/events'
// handler) within per-client and global stream slots (streams.go); the access log, one
// record per request under the subsystem "http" with the method, path (no query string),
// status, size and duration, never a body; and Prometheus metrics ([NewMetrics]).
// Mnemonics are never logged, stored or echoed in errors. The OpenAPI 3.1 document
// ([OpenAPI], openapi.json) is served at GET /openapi.json.
//
// testdata/golden/transcript.json pins every endpoint's answers byte for byte
// (golden_test.go).
package httpapi
