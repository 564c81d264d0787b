// Package jsonrpc implements JSON-RPC 2.0 over HTTP POST: a server
// framework on which a node registers its methods, and a client.
//
// # Overview
//
// A Server is an http.Handler. Methods are registered with Register, each
// with a ParamSpec per positional parameter, and a handler that receives
// the parameters as raw JSON (Params) and decodes them with strict helpers
// (String, Uint64, Int, Bool, Hex, ...):
//
//	s := jsonrpc.NewServer(jsonrpc.Options{})
//	s.Register(jsonrpc.Method{
//		Name:   "getblockhash",
//		Params: []jsonrpc.ParamSpec{{Name: "height", Type: "numeric"}},
//		Result: "hex block hash",
//		Handler: func(ctx context.Context, p jsonrpc.Params) (any, error) {
//			h, err := p.Uint64(0)
//			if err != nil {
//				return nil, err
//			}
//			return hashAt(h)
//		},
//	})
//	http.Handle("/", s)
//
// The server follows the specification: single requests and batches,
// notifications (requests without an "id" member, which run but get no
// response), ids echoed byte for byte (a string, a number of any size or
// null), "jsonrpc" required to be exactly "2.0". The request members are
// matched case-sensitively and a repeated member makes the request
// invalid. Other members are ignored.
//
// Parameters are positional. A request may also pass them by name (a JSON
// object); the server maps names to positions with ParamSpec.Name, fills
// skipped optional positions with null and rejects unknown, repeated or
// missing required names with -32602. Before the handler runs, the number
// of parameters is checked against the ParamSpecs (-32602 "wrong number of
// parameters: got N, want M" or "want M..K"). Absent or null "params"
// means none; any other non-structured value is an invalid request.
//
// HTTP behaviour:
//
//   - Only POST is served. Other methods get 405 with "Allow: POST".
//   - The Content-Type of requests is not checked here: this package is the
//     protocol, and who may call belongs to the layer in front of it. The
//     node puts lib/rpcserver's access checks there (HTTPConfig, Listen):
//     Content-Type application/json only, Origin and Host checks, HTTP basic
//     credentials (protocol §11). Responses are always application/json.
//   - Every JSON-RPC response, including error responses, has status 200.
//     bitcoind answers some errors with 404 or 500, but the JSON-RPC over
//     HTTP convention is 200 with the error in the body, and that is what
//     clients expect (this package's Client also understands bitcoind's
//     statuses). A request that produces no response (a notification or a
//     batch of only notifications) gets 204 with an empty body.
//   - A body larger than Options.MaxBodyBytes gets 413 with a -32600
//     "request too large" error. A batch longer than Options.MaxBatch is
//     rejected as a whole with -32600, before anything runs. A body that
//     cannot be read (the client went away) gets 400.
//
// Batches run sequentially in request order and the response array keeps
// that order. Options.Timeout bounds one HTTP request (a batch shares
// it); handlers receive it as a context deadline. Every call is logged at
// slog Debug level with the method, duration and error code (0 on
// success); parameters are never logged, as they may hold secrets.
//
// The Client sends requests with incrementing numeric ids over a
// keep-alive HTTP connection and returns results decoded into a Go value
// (Call) or raw (CallRaw). Credentials in its URL (http://user:pass@host)
// or from WithBasicAuth go out as HTTP basic authentication; the client
// keeps the URL without them, so no error message shows a password.
//
// # Errors
//
// A handler's error decides the response:
//
//   - an *Error anywhere in its chain (errors.As) is sent as is; NewError
//     and DomainError build them, and the Params helpers return -32602
//     ones that the server completes with the parameter name, for example
//     "invalid parameter 1 (hash): expected string, got number";
//   - any other error is a domain error: code -1 (CodeMisc) with the
//     error's text as message;
//   - a panic is recovered and logged at Error level, and the caller gets
//     -32603 "internal error"; the server keeps running;
//   - a call that does not finish before the deadline gets -32000 (CodeTimeout)
//     "request timed out", even if the handler ignores its context.
//
// Protocol errors use the specification's codes and messages: -32700
// "Parse error" for invalid JSON, -32600 "Invalid Request" (id null unless
// a valid id could be read), -32601 "Method not found".
//
// On the client side, Call returns an *Error when the server answered with
// an error object, so callers can test err with errors.As and look at
// Code. Other failures (network, an HTTP status without a JSON-RPC body,
// a malformed response) are returned wrapped, with the cause reachable
// through errors.Is and errors.As; IsConnRefused reports whether nothing
// was listening, and an *HTTPError carries a bare HTTP error status.
package jsonrpc
