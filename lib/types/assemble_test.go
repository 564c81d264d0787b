package types_test

import (
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
	b := types.NewBlock(types.BlockSpec{Parent: g.Hash(), Height: 1, Target: net.PowLimitBits, Timestamp: g.Header.Timestamp + 1,
		PayTo: pkh, Reward: consensus.Subsidy(1), Extra: []byte("x")})
	if len(b.Transactions) != 1 || !b.Transactions[0].IsCoinbase() || b.Transactions[0].Outputs[0].PubKeyHash != pkh {
		t.Fatal("coinbase shape")
	}
	if err := consensus.CheckCoinbaseHeight(b.Transactions[0], 1); err != nil {
		t.Fatal(err)
	}
	if err := types.SolveBlock(b, 1<<20); err != nil {
		t.Fatal(err)
	}
	if _, err := consensus.CheckBlockSanity(b, b.Hash(), b.SerializeSize(), net.PowLimit); err != nil {
		t.Fatalf("solved block is not valid: %v", err)
	}
	// An impossible target exhausts the range.
	b.Header.DifficultyTarget = 0x03000001
	if err := types.SolveBlock(b, 1000); !errors.Is(err, types.ErrNonceExhausted) {
		t.Fatalf("got %v, want types.ErrNonceExhausted", err)
	}
	if err := pow.CheckProofOfWork(b.Hash(), b.Header.DifficultyTarget, nil); err == nil {
		t.Fatal("unsolved block meets its target")
	}
}
