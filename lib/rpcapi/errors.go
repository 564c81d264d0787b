package rpcapi

import (
	"errors"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/reason"
)

// ErrorData is the data member of every domain error the node sends (code -1, protocol §11):
// the reason names the kind of the error.
type ErrorData struct {
	Reason reason.Reason `json:"reason"`
}

// NodeError is a domain error the node reported with a reason. errors.Is matches it against
// every kind with that reason (reason.MissingInputs, consensus.ErrMissingInputs,
// mempool.ErrAlreadyInChain, reason.StaleTemplate, ...); errors.As still finds the
// *jsonrpc.Error with the code and message the node sent. Its text is the *jsonrpc.Error's.
// It is a reason.Kind, so reason.Of gives its reason.
type NodeError struct {
	RPC    *jsonrpc.Error
	reason reason.Reason
}

func (e *NodeError) Error() string { return e.RPC.Error() }

// Reason is the reason the node sent.
func (e *NodeError) Reason() reason.Reason { return e.reason }

// Unwrap gives the *jsonrpc.Error.
func (e *NodeError) Unwrap() error { return e.RPC }

// Is reports whether target is a kind with e's reason.
func (e *NodeError) Is(target error) bool { return reason.Match(e.reason, target) }

// DecodeError turns an error from a jsonrpc call whose *jsonrpc.Error carries a reason
// (error.data.reason) into a *NodeError; any other error, and nil, come back unchanged.
func DecodeError(err error) error {
	var re *jsonrpc.Error
	if !errors.As(err, &re) {
		return err
	}
	r := reasonOf(re.Data)
	if r == "" {
		return err
	}
	return &NodeError{RPC: re, reason: r}
}

// reasonOf reads the reason from an error's data: a decoded JSON object on the client, or
// ErrorData when the error never left the process.
func reasonOf(data any) reason.Reason {
	switch d := data.(type) {
	case map[string]any:
		if s, ok := d["reason"].(string); ok {
			return reason.Reason(s)
		}
	case ErrorData:
		return d.Reason
	case *ErrorData:
		if d != nil {
			return d.Reason
		}
	}
	return ""
}

// NewDomainError is the node's domain error for err: code -1, err's text as the message and
// the reason of err's kind as data (see reason.Of). A server sends it as is.
func NewDomainError(err error) *jsonrpc.Error {
	return DomainError(reason.Of(err), err.Error())
}

// DomainError is a domain error of the given kind with message msg.
func DomainError(kind reason.Kind, msg string) *jsonrpc.Error {
	e := jsonrpc.DomainError(msg)
	if kind != nil {
		if r := kind.Reason(); r != "" {
			e.Data = ErrorData{Reason: r}
		}
	}
	return e
}
