package rpcapi_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// serve answers every call of "fail" with the error fail returns.
func serve(t *testing.T, fail func() error) *rpcapi.Client {
	t.Helper()
	s := jsonrpc.NewServer(jsonrpc.Options{Logger: slog.New(slog.DiscardHandler)})
	s.Register(jsonrpc.Method{Name: "fail", Handler: func(context.Context, jsonrpc.Params) (any, error) { return nil, fail() }})
	srv := httptest.NewServer(s)
	c := rpcapi.NewClient(srv.URL)
	t.Cleanup(func() { c.Close(); srv.Close() })
	return c
}

func TestClientErrorsMatchKinds(t *testing.T) {
	tests := []struct {
		name string
		sent error // what the node's handler returns
		is   []error
		not  []error
	}{
		{"consensus rule", rpcapi.NewDomainError(fmt.Errorf("mempool: %w",
			consensus.RuleError{Err: consensus.ErrMissingInputs, Description: "missing inputs: abc:0"})),
			[]error{consensus.ErrMissingInputs, reason.MissingInputs}, []error{mempool.ErrAlreadyInChain, consensus.ErrDoubleSpend}},
		{"mempool rule", rpcapi.NewDomainError(&mempool.RejectError{Kind: mempool.ErrAlreadyInChain}),
			[]error{mempool.ErrAlreadyInChain, reason.AlreadyInChain}, []error{mempool.ErrAlreadyInMempool, consensus.ErrMissingInputs}},
		{"node kind", rpcapi.DomainError(reason.StaleTemplate, "stale block template: ..."),
			[]error{reason.StaleTemplate}, []error{reason.BlockNotFound}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := serve(t, func() error { return tc.sent })
			err := c.Call(context.Background(), "fail", nil, nil)
			for _, k := range tc.is {
				if !errors.Is(err, k) {
					t.Errorf("errors.Is(%v, %v) is false", err, k)
				}
			}
			for _, k := range tc.not {
				if errors.Is(err, k) {
					t.Errorf("errors.Is(%v, %v) is true", err, k)
				}
			}
			var re *jsonrpc.Error
			if !errors.As(err, &re) || re.Code != jsonrpc.CodeMisc || re.Message != tc.sent.Error()[len("rpc error -1: "):] {
				t.Fatalf("errors.As gives %#v", re)
			}
			if err.Error() != tc.sent.Error() {
				t.Fatalf("text %q, want the node's %q", err.Error(), tc.sent.Error())
			}
			var ne *rpcapi.NodeError
			if !errors.As(err, &ne) || reason.Of(err) != ne.Reason() || ne.Reason() != tc.sent.(*jsonrpc.Error).Data.(rpcapi.ErrorData).Reason {
				t.Fatalf("no NodeError or reason.Of disagrees: %#v", ne)
			}
			// CallRaw decodes the same way.
			if _, err := c.CallRaw(context.Background(), "fail", nil); !errors.Is(err, tc.is[0]) {
				t.Fatalf("CallRaw: %v", err)
			}
		})
	}
}

// Errors without a reason come back as they did: the *jsonrpc.Error itself.
func TestClientErrorsWithoutReason(t *testing.T) {
	for _, sent := range []error{jsonrpc.DomainError("something"), jsonrpc.NewError(jsonrpc.CodeInvalidParams, "bad"),
		&jsonrpc.Error{Code: -1, Message: "odd data", Data: map[string]any{"reason": 7}}} {
		c := serve(t, func() error { return sent })
		err := c.Call(context.Background(), "fail", nil, nil)
		var re *jsonrpc.Error
		if !errors.As(err, &re) || err != error(re) {
			t.Fatalf("%v: got %#v", sent, err)
		}
		if reason.Of(err) != "" {
			t.Fatalf("%v has reason %q", sent, reason.Of(err))
		}
	}
	if rpcapi.DecodeError(nil) != nil {
		t.Fatal("DecodeError(nil) is not nil")
	}
	plain := errors.New("transport")
	if rpcapi.DecodeError(plain) != plain {
		t.Fatal("DecodeError changed a transport error")
	}
}

// A domain error built on the node carries the reason as data before it is sent.
func TestDomainErrorData(t *testing.T) {
	e := rpcapi.NewDomainError(consensus.RuleError{Err: consensus.ErrLockedOutput, Description: "output is locked"})
	if e.Code != jsonrpc.CodeMisc || e.Message != "output is locked" || e.Data != (rpcapi.ErrorData{Reason: "locked_output"}) {
		t.Fatalf("%#v", e)
	}
	if e := rpcapi.DomainError(nil, "no kind"); e.Data != nil {
		t.Fatalf("a domain error without kind has data %#v", e.Data)
	}
	if !errors.Is(rpcapi.DecodeError(e), consensus.ErrLockedOutput) {
		t.Fatal("DecodeError of an in-process error does not match")
	}
}
