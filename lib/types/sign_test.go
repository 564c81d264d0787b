package types_test

import (
	"crypto/ed25519"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

func TestSignInputs(t *testing.T) {
	key := ed25519.NewKeyFromSeed(make([]byte, 32))
	tx := &types.Transaction{Version: 1, Kind: types.KindTransfer,
		Inputs:  []types.TxInput{{PrevTxID: types.Blake3([]byte("a"))}, {PrevTxID: types.Blake3([]byte("b")), PrevIndex: 3}},
		Outputs: []types.TxOutput{{Value: 5000, PubKeyHash: types.Blake3([]byte("c"))}}}
	types.SignInputs(tx, key, params.Regtest.Magic)
	if err := consensus.VerifySignatures(tx, tx.TxID(), params.Regtest.Magic); err != nil {
		t.Fatal(err)
	}
	if err := consensus.VerifySignatures(tx, tx.TxID(), params.Testnet.Magic); err == nil {
		t.Fatal("a regtest signature verifies on testnet")
	}
}
