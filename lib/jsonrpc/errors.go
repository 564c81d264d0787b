package jsonrpc

import (
	"fmt"
	"strconv"
)

// Error codes. The -32xxx codes are defined by the JSON-RPC 2.0
// specification; CodeMisc is the generic application ("domain") error used
// by bitcoind (RPC_MISC_ERROR).
const (
	CodeParseError     = -32700 // invalid JSON was received
	CodeInvalidRequest = -32600 // the JSON is not a valid Request object
	CodeMethodNotFound = -32601 // the method does not exist
	CodeInvalidParams  = -32602 // invalid method parameter(s)
	CodeInternal       = -32603 // internal JSON-RPC error (for example a handler panic)
	// CodeTimeout is returned when a call does not finish within
	// Options.Timeout. It lies in the range the specification reserves for
	// implementation-defined server errors (-32000 to -32099).
	CodeTimeout = -32000
	CodeMisc    = -1 // domain error: the call was understood but failed
)

// Error is a JSON-RPC error object. *Error implements the error interface.
//
// A handler that returns an *Error (anywhere in its error chain, see
// errors.As) sends exactly that code, message and data to the caller.
// Client.Call returns an *Error when the server answered with an error.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`

	// Set by the Params helpers: the 1-based parameter number the error is
	// about and the text around the parameter label, so that the server
	// can add the parameter name from the method's ParamSpecs.
	param     int
	paramPre  string
	paramPost string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return "rpc error " + strconv.Itoa(e.Code) + ": " + e.Message
}

// NewError returns an *Error with the given code. The message is
// fmt.Sprintf(format, args...), or format unchanged when there are no args.
func NewError(code int, format string, args ...any) *Error {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &Error{Code: code, Message: msg}
}

// DomainError returns an *Error with code CodeMisc (-1) and the given
// message, for calls that were well-formed but failed (bitcoind style).
func DomainError(msg string) *Error {
	return &Error{Code: CodeMisc, Message: msg}
}

// Shared, never-mutated error values for the protocol-level failures. The
// messages of the first three are the exact texts of the specification.
var (
	errParse          = &Error{Code: CodeParseError, Message: "Parse error"}
	errInvalidRequest = &Error{Code: CodeInvalidRequest, Message: "Invalid Request"}
	errMethodNotFound = &Error{Code: CodeMethodNotFound, Message: "Method not found"}
	errInternal       = &Error{Code: CodeInternal, Message: "internal error"}
	errTooLarge       = &Error{Code: CodeInvalidRequest, Message: "request too large"}
	errTimeout        = &Error{Code: CodeTimeout, Message: "request timed out"}
	errNotPost        = &Error{Code: CodeInvalidRequest, Message: "only POST is supported"}
)

// newParamError builds a -32602 error about parameter index i (0-based).
// The message reads pre + " N" + post; the server inserts the parameter
// name after N when it knows it.
func newParamError(i int, pre, post string) *Error {
	return &Error{
		Code:      CodeInvalidParams,
		Message:   pre + " " + strconv.Itoa(i+1) + post,
		param:     i + 1,
		paramPre:  pre,
		paramPost: post,
	}
}

// withParamName returns a copy of e whose message names the parameter, if
// e came from a Params helper and specs has a name for it.
func (e *Error) withParamName(specs []ParamSpec) *Error {
	if e.param <= 0 || e.param > len(specs) || specs[e.param-1].Name == "" {
		return e
	}
	c := *e
	c.Message = e.paramPre + " " + strconv.Itoa(e.param) + " (" + specs[e.param-1].Name + ")" + e.paramPost
	return &c
}
