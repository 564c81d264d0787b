// Package inproc serves a request with an http.Handler in the same process and keeps the
// answer: how the Web pages (lib/faucet/web) and the MCP tools (lib/faucet/mcp) call the
// faucet's API, so that the API's limits, behaviour and error codes are theirs.
package inproc

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/cointoolkit/coin/lib/faucet/api"
)

// Response is the answer of an in-process request (an http.ResponseWriter that keeps it).
type Response struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

// Serve serves req with h and returns the answer.
func Serve(h http.Handler, req *http.Request) *Response {
	w := &Response{header: http.Header{}}
	h.ServeHTTP(w, req)
	return w
}

func (w *Response) Header() http.Header { return w.header }

func (w *Response) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *Response) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.body.Write(b)
}

// Status is the answer's status (200 when the handler wrote none).
func (w *Response) Status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

// Body is the answer's body.
func (w *Response) Body() []byte { return w.body.Bytes() }

// APIError is the API's error object of the answer; false when the body is not an
// api.ErrorBody with a code.
func (w *Response) APIError() (api.ErrorObject, bool) {
	var eb api.ErrorBody
	if json.Unmarshal(w.body.Bytes(), &eb) != nil || eb.Error.Code == "" {
		return api.ErrorObject{}, false
	}
	return eb.Error, true
}
