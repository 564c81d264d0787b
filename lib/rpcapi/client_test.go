package rpcapi

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/cointoolkit/coin/lib/jsonrpc"
)

// pagingNode serves getutxosbyaddress over n synthetic outputs the way the node pages them
// (after, limit); with old, it takes only the spec's parameters, as a node before paging.
func pagingNode(t *testing.T, n int, old bool) (*Client, *atomic.Int32) {
	t.Helper()
	outs := make([]UTXO, n)
	for i := range outs {
		outs[i] = UTXO{TxID: fmt.Sprintf("%064x", i/3), Index: uint32(i % 3), Value: uint64(i + 1)}
	}
	var calls atomic.Int32
	s := jsonrpc.NewServer(jsonrpc.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	specs := []jsonrpc.ParamSpec{{Name: "address"}, {Name: "include_mempool", Optional: true}}
	if !old {
		specs = append(specs, jsonrpc.ParamSpec{Name: "after", Optional: true}, jsonrpc.ParamSpec{Name: "limit", Optional: true})
	}
	s.Register(jsonrpc.Method{Name: "getutxosbyaddress", Params: specs, Handler: func(_ context.Context, p jsonrpc.Params) (any, error) {
		calls.Add(1)
		if old {
			return outs, nil
		}
		after, _ := p.OptString(2, "")
		limit, _ := p.OptUint64(3, UtxoPageDefault)
		if limit > UtxoPageMax {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid limit")
		}
		i := 0
		if after != "" {
			for i < len(outs) && fmt.Sprintf("%s:%d", outs[i].TxID, outs[i].Index) != after {
				i++
			}
			i++
		}
		end := min(len(outs), i+int(limit))
		return outs[i:end], nil
	}})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c := NewClient(srv.URL)
	t.Cleanup(c.Close)
	return c, &calls
}

func TestGetUtxosByAddressPages(t *testing.T) {
	for _, c := range []struct {
		n, calls int
		old      bool
	}{
		{0, 1, false}, {10, 1, false}, {UtxoPageMax, 2, false}, {2*UtxoPageMax + 7, 3, false}, {12_000, 1, true},
	} {
		cl, calls := pagingNode(t, c.n, c.old)
		us, err := cl.GetUtxosByAddress(context.Background(), "tcoin1x", true)
		if err != nil || len(us) != c.n {
			t.Fatalf("%d outputs (old node %v): got %d, %v", c.n, c.old, len(us), err)
		}
		// An old node refuses the paged call before its handler runs, then answers the spec's.
		if int(calls.Load()) != c.calls {
			t.Fatalf("%d outputs (old node %v): %d calls, want %d", c.n, c.old, calls.Load(), c.calls)
		}
		for i, u := range us {
			if u.Value != uint64(i+1) {
				t.Fatalf("%d outputs: output %d is %+v", c.n, i, u)
			}
		}
	}
}

// TestGetUtxosByAddressFallbackByCode: a node that does not page and refuses the paging
// parameters with -32602 in words of its own is still asked the spec's call: the client
// goes by the error's code, not by its message (it matched "wrong number of parameters").
func TestGetUtxosByAddressFallbackByCode(t *testing.T) {
	outs := []UTXO{{TxID: fmt.Sprintf("%064x", 1), Value: 5}, {TxID: fmt.Sprintf("%064x", 2), Value: 6}}
	s := jsonrpc.NewServer(jsonrpc.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	specs := []jsonrpc.ParamSpec{{Name: "address"}, {Name: "include_mempool", Optional: true},
		{Name: "x", Optional: true}, {Name: "y", Optional: true}}
	s.Register(jsonrpc.Method{Name: "getutxosbyaddress", Params: specs, Handler: func(_ context.Context, p jsonrpc.Params) (any, error) {
		if len(p) > 2 {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "paging is not supported by this node")
		}
		return outs, nil
	}})
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := NewClient(srv.URL)
	defer c.Close()
	us, err := c.GetUtxosByAddress(context.Background(), "tcoin1x", false)
	if err != nil || len(us) != len(outs) {
		t.Fatalf("%d outputs, %v; want %d", len(us), err, len(outs))
	}
}
