package mining

import (
	"crypto/ed25519"
	"errors"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/types"
)

func TestNewBlockAndSolve(t *testing.T) {
	net := params.Regtest
	g := net.GenesisBlock()
	pkh := types.Blake3([]byte("miner"))
	b := NewBlock(Spec{Parent: g.Hash(), Height: 1, Target: net.PowLimitBits, Timestamp: g.Header.Timestamp + 1,
		PayTo: pkh, Reward: consensus.Subsidy(1), Extra: []byte("x")})
	if len(b.Transactions) != 1 || !b.Transactions[0].IsCoinbase() || b.Transactions[0].Outputs[0].PubKeyHash != pkh {
		t.Fatal("coinbase shape")
	}
	if err := consensus.CheckCoinbaseHeight(b.Transactions[0], 1); err != nil {
		t.Fatal(err)
	}
	if err := Solve(b, 1<<20); err != nil {
		t.Fatal(err)
	}
	if _, err := consensus.CheckBlockSanity(b, b.Hash(), b.SerializeSize(), net.PowLimit); err != nil {
		t.Fatalf("solved block is not valid: %v", err)
	}
	// An impossible target exhausts the range.
	b.Header.DifficultyTarget = 0x03000001
	if err := Solve(b, 1000); !errors.Is(err, ErrExhausted) {
		t.Fatalf("got %v, want ErrExhausted", err)
	}
	if err := pow.CheckProofOfWork(b.Hash(), b.Header.DifficultyTarget, nil); err == nil {
		t.Fatal("unsolved block meets its target")
	}
}

func TestSign(t *testing.T) {
	key := ed25519.NewKeyFromSeed(make([]byte, 32))
	tx := &types.Transaction{Version: 1, Kind: types.KindTransfer,
		Inputs:  []types.TxInput{{PrevTxID: types.Blake3([]byte("a"))}, {PrevTxID: types.Blake3([]byte("b")), PrevIndex: 3}},
		Outputs: []types.TxOutput{{Value: 5000, PubKeyHash: types.Blake3([]byte("c"))}}}
	Sign(tx, key, params.Regtest.Magic)
	if err := consensus.VerifySignatures(tx, tx.TxID(), params.Regtest.Magic); err != nil {
		t.Fatal(err)
	}
	if err := consensus.VerifySignatures(tx, tx.TxID(), params.Testnet.Magic); err == nil {
		t.Fatal("a regtest signature verifies on testnet")
	}
}
