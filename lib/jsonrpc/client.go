package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"
)

// Client defaults.
const (
	DefaultClientTimeout    = 2 * time.Minute
	DefaultMaxResponseBytes = 256 << 20
)

// Client calls a JSON-RPC 2.0 server over HTTP POST. It is safe for
// concurrent use and keeps connections alive between calls.
type Client struct {
	url      string
	hc       *http.Client
	timeout  time.Duration
	maxResp  int64
	user     string
	pass     string
	hasAuth  bool
	lastID   atomic.Uint64
	userHTTP bool
}

// ClientOption configures a Client.
type ClientOption func(*Client)

// WithTimeout bounds each call (connecting, sending and reading the whole
// response). Zero or less disables the bound. The default is
// DefaultClientTimeout; a deadline on the call's context applies as well.
func WithTimeout(d time.Duration) ClientOption {
	return func(c *Client) { c.timeout = d }
}

// WithHTTPClient makes the client use hc instead of its own keep-alive
// http.Client.
func WithHTTPClient(hc *http.Client) ClientOption {
	return func(c *Client) {
		if hc != nil {
			c.hc = hc
			c.userHTTP = true
		}
	}
}

// WithBasicAuth sends HTTP basic authentication with every call, as
// bitcoind-style servers expect. Credentials in the URL work too (NewClient);
// these take precedence over them.
func WithBasicAuth(user, pass string) ClientOption {
	return func(c *Client) { c.user, c.pass, c.hasAuth = user, pass, true }
}

// WithMaxResponseBytes bounds the size of a response body (default
// DefaultMaxResponseBytes).
func WithMaxResponseBytes(n int64) ClientOption {
	return func(c *Client) {
		if n > 0 {
			c.maxResp = n
		}
	}
}

// NewClient returns a client for the server at rawURL. Credentials in the URL
// (http://user:password@host:port) are sent as HTTP basic authentication and
// kept out of the URL the client holds, so that no message shows them.
func NewClient(rawURL string, opts ...ClientOption) *Client {
	c := &Client{url: rawURL, timeout: DefaultClientTimeout, maxResp: DefaultMaxResponseBytes}
	if u, err := url.Parse(rawURL); err == nil && u.User != nil {
		pass, _ := u.User.Password()
		c.user, c.pass, c.hasAuth = u.User.Username(), pass, true
		u.User = nil
		c.url = u.String()
	}
	for _, o := range opts {
		o(c)
	}
	if c.hc == nil {
		dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
		c.hc = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           dialer.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          100,
			MaxIdleConnsPerHost:   32,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
		}}
	}
	return c
}

// Close releases the idle connections of the client's own transport. It
// does nothing to an http.Client given with WithHTTPClient.
func (c *Client) Close() {
	if !c.userHTTP {
		c.hc.CloseIdleConnections()
	}
}

type clientRequest struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
	ID      uint64 `json:"id"`
}

type clientResponse struct {
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	ID     json.RawMessage `json:"id"`
}

// Call calls method with positional params and decodes the result into
// result (which may be nil to discard it). An error response from the
// server is returned as an *Error (see errors.As); any other failure
// (network, HTTP status, malformed response) is returned wrapped, so that
// errors.Is and IsConnRefused see the cause.
func (c *Client) Call(ctx context.Context, method string, params []any, result any) error {
	if params == nil {
		params = []any{}
	}
	raw, err := c.call(ctx, method, params)
	if err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("jsonrpc: %s: decoding result: %w", method, err)
	}
	return nil
}

// CallRaw is Call with raw JSON parameters (a nil element is sent as null)
// that returns the raw result.
func (c *Client) CallRaw(ctx context.Context, method string, params []json.RawMessage) (json.RawMessage, error) {
	if params == nil {
		params = []json.RawMessage{}
	}
	return c.call(ctx, method, params)
}

func (c *Client) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := c.lastID.Add(1)
	body, err := json.Marshal(clientRequest{JSONRPC: "2.0", Method: method, Params: params, ID: id})
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: %s: encoding request: %w", method, err)
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: %s: %w", method, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.hasAuth {
		req.SetBasicAuth(c.user, c.pass)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: %s: %w", method, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.maxResp+1))
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: %s: reading response: %w", method, err)
	}
	if int64(len(data)) > c.maxResp {
		return nil, fmt.Errorf("jsonrpc: %s: response larger than %d bytes", method, c.maxResp)
	}

	var r clientResponse
	if err := json.Unmarshal(data, &r); err != nil || !isObject(data) {
		// Not a JSON-RPC response: report the HTTP status if it explains it.
		if resp.StatusCode != http.StatusOK {
			return nil, &HTTPError{StatusCode: resp.StatusCode, Status: resp.Status, Body: httpErrorBody(data)}
		}
		return nil, notJSONRPC(method, resp, data)
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		var e Error
		if err := json.Unmarshal(r.Error, &e); err != nil {
			// Some other JSON API's error, such as a faucet's {"error":{"code":"not_found"}}.
			return nil, notJSONRPC(method, resp, data)
		}
		return nil, &e
	}
	if r.Result == nil {
		return nil, notJSONRPC(method, resp, data)
	}
	if string(r.ID) != strconv.FormatUint(id, 10) {
		return nil, fmt.Errorf("jsonrpc: %s: response id %s does not match request id %d", method, r.ID, id)
	}
	return r.Result, nil
}

// ErrNotJSONRPC matches (errors.Is) the error of a call answered by a server that does not
// speak JSON-RPC: an HTTP server of another kind, such as a faucet's API.
var ErrNotJSONRPC = errors.New("not a JSON-RPC server")

// NotJSONRPCError is the error of a call whose answer is not a JSON-RPC response: a 200 that
// is not a JSON object, or a JSON object with neither a result nor a JSON-RPC error object.
type NotJSONRPCError struct {
	Method      string
	StatusCode  int
	Status      string
	ContentType string
	Body        string // the first line of the answer, at most maxErrorBody bytes
}

func notJSONRPC(method string, resp *http.Response, data []byte) error {
	return &NotJSONRPCError{Method: method, StatusCode: resp.StatusCode, Status: resp.Status,
		ContentType: resp.Header.Get("Content-Type"), Body: httpErrorBody(data)}
}

func (e *NotJSONRPCError) Error() string {
	return fmt.Sprintf("jsonrpc: %s: the answer (HTTP %s) is not a JSON-RPC response: this is not a JSON-RPC server", e.Method, e.Status)
}

// Is makes errors.Is(err, ErrNotJSONRPC) true.
func (e *NotJSONRPCError) Is(target error) bool { return target == ErrNotJSONRPC }

func isObject(b []byte) bool {
	i := skipWS(b, 0)
	return i < len(b) && b[i] == '{'
}

// HTTPError is returned by the client when the server answered with an
// HTTP error status and no JSON-RPC response (for example 401 from a
// server that requires authentication).
type HTTPError struct {
	StatusCode int
	Status     string
	// Body is the start of a plain-text answer (at most maxErrorBody bytes, one
	// line), such as the reason of a 403; empty otherwise.
	Body string
}

// maxErrorBody bounds HTTPError.Body.
const maxErrorBody = 200

// httpErrorBody is the first line of a short text body, for HTTPError.
func httpErrorBody(data []byte) string {
	s := string(data)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	if len(s) > maxErrorBody {
		s = s[:maxErrorBody]
	}
	if !utf8.ValidString(s) {
		return ""
	}
	return strings.TrimSpace(s)
}

func (e *HTTPError) Error() string {
	return "jsonrpc: HTTP status " + e.Status
}

// IsConnRefused reports whether err (from Call or CallRaw) means that
// nothing listens at the server's address, for example because the node
// is not running.
func IsConnRefused(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	var errno syscall.Errno
	return errors.As(err, &errno) && isConnRefusedErrno(errno)
}

// Get sends a GET for path (with query q) on the server's host, with the client's
// credentials and transport but without its timeout: for a streamed answer, such as a
// node's notification stream, which the caller reads and closes. ctx bounds it.
func (c *Client) Get(ctx context.Context, path string, q url.Values) (*http.Response, error) {
	u, err := url.Parse(c.url)
	if err != nil {
		return nil, err
	}
	u.Path, u.RawQuery = path, q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if c.hasAuth {
		req.SetBasicAuth(c.user, c.pass)
	}
	return c.hc.Do(req)
}
