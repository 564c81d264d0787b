package wallet

import (
	"context"
	"encoding/hex"
	"errors"
	"path/filepath"
	"testing"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// journalNode answers sendrawtransaction with err (nil: accepted).
type journalNode struct {
	ResendNode
	err error
}

func (n journalNode) SendRawTransaction(_ context.Context, h string) (string, error) {
	b, _ := hex.DecodeString(h)
	tx, _ := types.DecodeTransaction(b)
	return tx.TxID().String(), n.err
}

func (journalNode) GetClusterInfo(context.Context, string) (*rpcapi.ClusterInfo, error) {
	return nil, errors.New("none")
}

// TestJournal: a broadcast is recorded before it is sent; a refusal by the node forgets it
// (nothing was spent), a failure to reach the node keeps it for Resend.
func TestJournal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	s, err := Create(dir, params.Regtest, 0, testSeed(t), "pw", testKDF)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	tx := func(n byte) *types.Transaction {
		return &types.Transaction{Version: 1, Kind: types.KindTransfer, Inputs: []types.TxInput{{PrevTxID: types.Hash{n}}},
			Outputs: []types.TxOutput{{Value: 5_000}}}
	}
	send := func(err error, t1 *types.Transaction) {
		j := Journal{ResendNode: journalNode{err: err}, Dir: dir, Net: params.Regtest}
		j.SendRawTransaction(context.Background(), hex.EncodeToString(t1.Bytes()))
	}
	send(nil, tx(1))
	send(&jsonrpc.Error{Code: -1, Message: "insufficient fee"}, tx(2))
	send(errors.New("connection reset"), tx(3))
	s, err = Open(dir, params.Regtest)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.SentTxs()
	if err != nil || len(got) != 2 || got[0].TxID != tx(1).TxID().String() || got[1].TxID != tx(3).TxID().String() {
		t.Fatalf("recorded %+v, %v; want the accepted and the unanswered one", got, err)
	}
	if err := s.ForgetSent(tx(1).TxID()); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.SentTxs(); len(got) != 1 {
		t.Fatalf("after ForgetSent: %+v", got)
	}
}
