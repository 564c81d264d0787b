package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cointoolkit/coin/lib/cliutil"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/params"
)

// codeInWarmup is bitcoind's RPC_IN_WARMUP: the server is up but not ready. --rpcwait
// waits through it as it waits through a refused connection.
const codeInWarmup = -28

// rpcwaitInterval is the pause between attempts with --rpcwait.
const rpcwaitInterval = 250 * time.Millisecond

// call sends one request and turns failures into the errors main prints: an RPC error
// becomes an ExitError with bitcoin-cli's text and status, anything else an "error: ..."
// that says what to check. With --rpcwait it retries while the node is starting.
func (o *options) call(ctx context.Context, method string, ps []json.RawMessage) (json.RawMessage, error) {
	cl := jsonrpc.NewClient(o.url, append([]jsonrpc.ClientOption{jsonrpc.WithTimeout(o.timeout)}, o.auth...)...)
	defer cl.Close()
	start := time.Now()
	for {
		res, err := cl.CallRaw(ctx, method, ps)
		if err == nil {
			return res, nil
		}
		waited := time.Since(start)
		if !o.rpcwait || !starting(err) || waited >= o.waitTimeout {
			return nil, o.explain(method, err)
		}
		pause := min(rpcwaitInterval, o.waitTimeout-waited)
		select {
		case <-ctx.Done():
			return nil, o.explain(method, err)
		case <-time.After(pause):
		}
	}
}

// starting reports whether err means the node is not up yet.
func starting(err error) bool {
	var re *jsonrpc.Error
	return jsonrpc.IsConnRefused(err) || (errors.As(err, &re) && re.Code == codeInWarmup)
}

// explain turns a failed call into the error main prints.
func (o *options) explain(method string, err error) error {
	var re *jsonrpc.Error
	if errors.As(err, &re) {
		return rpcError(re)
	}
	if jsonrpc.IsConnRefused(err) {
		return o.refused()
	}
	var he *jsonrpc.HTTPError
	if errors.As(err, &he) && he.StatusCode == http.StatusUnauthorized {
		if o.user == "" {
			return fmt.Errorf("the node at %s wants credentials (HTTP 401): give them in the URL (--rpc http://USER:PASSWORD@HOST:PORT) or with --rpc-user and --rpc-password-file", o.url)
		}
		return fmt.Errorf("the node at %s refused the credentials of user %q (HTTP 401): check the password against its --rpc-auth", o.url, o.user)
	}
	if errors.As(err, &he) && he.StatusCode == http.StatusForbidden {
		msg := he.Body
		if msg == "" {
			msg = "forbidden"
		}
		return fmt.Errorf("the node at %s refused the request (HTTP 403): %s", o.url, msg)
	}
	if errors.As(err, &he) {
		return fmt.Errorf("the server at %s answered HTTP %s instead of a JSON-RPC reply: this is not a JSON-RPC server; is --rpc the node's RPC address (its --rpc-bind)?", o.url, he.Status)
	}
	var ne *jsonrpc.NotJSONRPCError
	if errors.As(err, &ne) {
		what := "HTTP " + ne.Status
		if ne.ContentType != "" {
			what += ", " + ne.ContentType
		}
		return fmt.Errorf("the server at %s is not a JSON-RPC server (it answered %s%s); is --rpc the node's RPC address (its --rpc-bind), not a faucet's or another HTTP service's?",
			o.url, what, quoteBody(ne.Body))
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: no answer from the node at %s within %s (raise --timeout)", method, o.url, o.timeout)
	}
	msg := strings.TrimPrefix(err.Error(), "jsonrpc: "+method+": ")
	return fmt.Errorf("%s at %s: %s", method, o.url, msg)
}

// rpcError is bitcoin-cli's report of an error the node returned.
func rpcError(e *jsonrpc.Error) error {
	return &cliutil.ExitError{
		Code:    exitCode(e.Code),
		Message: fmt.Sprintf("error code: %d\nerror message:\n%s", e.Code, e.Message),
	}
}

// exitCode is the status for RPC error code: |code| as the OS keeps it (the low byte), or
// 1 when that is 0, so that an error never exits 0.
func exitCode(code int) int {
	if code < 0 {
		code = -code
	}
	if n := code & 0xff; n != 0 {
		return n
	}
	return 1
}

// refused explains a refused connection with the two causes the node's documentation
// gives: RPC off (no --rpc-bind) or a port of another network.
func (o *options) refused() error {
	var b strings.Builder
	fmt.Fprintf(&b, "cannot connect to the node at %s: connection refused", o.url)
	if o.rpcwait {
		fmt.Fprintf(&b, " (still refused after waiting %s with --rpcwait)", o.waitTimeout)
	}
	b.WriteString(".\nEither the node is not running with its RPC server on (coin-node serves RPC only when started\n")
	fmt.Fprintf(&b, "with --rpc-bind, for example --rpc-bind 127.0.0.1:%d), or the port does not match the node's\n", o.network.RPCPort)
	b.WriteString("network (RPC ports: ")
	for i, n := range params.Networks {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", n.Name, n.RPCPort)
	}
	b.WriteString(").\n")
	if o.fromFlag {
		b.WriteString("The address came from --rpc (or COIN_RPC): check it, or leave it out and pick the node's\n")
		b.WriteString("network with --network NET (COIN_NETWORK).")
	} else {
		fmt.Fprintf(&b, "The address is the default of --network %s: pick the node's network with --network NET\n", o.network.Name)
		b.WriteString("(COIN_NETWORK) or give its address with --rpc URL (COIN_RPC).")
	}
	return errors.New(b.String())
}

// quoteBody is ": BODY" for a short answer's first line, or nothing.
func quoteBody(body string) string {
	if body == "" {
		return ""
	}
	return fmt.Sprintf(": %q", body)
}
