package consensus_test

import (
	"testing"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// FuzzCheckTransactionSanity decodes arbitrary bytes as a transaction and checks it: no panic,
// and every rejection is a RuleError.
func FuzzCheckTransactionSanity(f *testing.F) {
	f.Add(baseTransfer().Bytes())
	f.Add(signedPair(regtestMagic).Bytes())
	f.Add(coinbase(5, pay(50*coin, miner)).Bytes())
	f.Add(coinbase(1, pay(0, miner), pay(amount.MaxMoney, miner)).Bytes())
	dup := baseTransfer()
	dup.Inputs = append(dup.Inputs, dup.Inputs[0])
	f.Add(dup.Bytes())
	agent := baseTransfer()
	agent.Kind = types.KindReview
	f.Add(agent.Bytes())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		tx, err := types.DecodeTransaction(b)
		if err != nil {
			return
		}
		if tx.SerializeSize() != len(b) {
			t.Fatalf("SerializeSize %d, encoded %d", tx.SerializeSize(), len(b))
		}
		err = consensus.CheckTransactionSanity(tx, len(b))
		if err == nil {
			// Whatever passes sanity obeys the limits.
			if len(tx.Outputs) == 0 || len(tx.Outputs) > consensus.MaxTxOutputs || len(tx.Inputs) > consensus.MaxTxInputs {
				t.Fatalf("sane transaction breaks a limit: %d inputs, %d outputs", len(tx.Inputs), len(tx.Outputs))
			}
			if tx.IsCoinbase() != (len(tx.Inputs) == 0) {
				t.Fatal("sane transaction: coinbase iff no inputs")
			}
			return
		}
		if !consensus.IsRuleError(err) {
			t.Fatalf("error %v (%T) is not a RuleError", err, err)
		}
		if err.Error() == "" {
			t.Fatal("empty message")
		}
	})
}
