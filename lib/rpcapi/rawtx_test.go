package rpcapi

import (
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/types"
)

// TestGetRawTransaction: the typed call decodes the node's hex into the transaction (same
// txid), and an answer that is not hex, or not a transaction, is an error, not a zero value.
func TestGetRawTransaction(t *testing.T) {
	tx := &types.Transaction{Version: 1, Kind: types.KindTransfer,
		Inputs:  []types.TxInput{{PrevTxID: types.Hash{1}, PrevIndex: 2}},
		Outputs: []types.TxOutput{{Value: 5000, PubKeyHash: types.Hash{3}}}}
	answers := map[string]string{"good": hex.EncodeToString(tx.Bytes()), "nothex": "zz", "short": "0100"}
	s := jsonrpc.NewServer(jsonrpc.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	s.Register(jsonrpc.Method{Name: "getrawtransaction", Params: []jsonrpc.ParamSpec{{Name: "txid"}},
		Handler: func(_ context.Context, p jsonrpc.Params) (any, error) {
			id, _ := p.String(0)
			return answers[id], nil
		}})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c := NewClient(srv.URL)
	t.Cleanup(c.Close)
	got, err := c.GetRawTransaction(context.Background(), "good")
	if err != nil {
		t.Fatal(err)
	}
	if got.TxID() != tx.TxID() || len(got.Outputs) != 1 || got.Outputs[0].Value != 5000 {
		t.Fatalf("decoded %+v, want %+v", got, tx)
	}
	for _, id := range []string{"nothex", "short"} {
		if got, err := c.GetRawTransaction(context.Background(), id); err == nil {
			t.Fatalf("%s: no error, got %+v", id, got)
		}
	}
}
