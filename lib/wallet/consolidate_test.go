package wallet

import (
	"context"
	"errors"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

func TestMaxInputsPerTx(t *testing.T) {
	n := MaxInputsPerTx()
	if n < 700 || n >= consensus.MaxTxInputs {
		t.Fatalf("MaxInputsPerTx = %d", n)
	}
}

// 2,000 small outputs cannot pay 15 COIN in one transaction (ErrTooManyInputs, which is
// also ErrTooLarge); Consolidate merges them, smallest first, in three transactions within
// the limits, each accepted by the consensus rules, into one output that pays it.
func TestConsolidate(t *testing.T) {
	t.Parallel()
	net := params.Regtest
	k0, k1 := testKeys(t)
	var total uint64
	var pay []Payment
	for i := range 2000 {
		v := uint64(1_000_000 + i) // 0.01 COIN and a bit
		pay = append(pay, Payment{k0.PKH, v})
		total += v
	}
	pay = append(pay, Payment{k1.PKH, 5_000_000})
	total += 5_000_000
	node := newQuietNode(t, total)
	node.fund(t, pay...)
	node.mine(t, 50) // 51 confirmations
	keys := []Key{k0, k1}
	_, err := Send(context.Background(), node, Transfer{Net: net, Keys: keys, To: k1.Address, Amount: 15 * 100_000_000})
	if !errors.Is(err, ErrTooManyInputs) || !errors.Is(err, ErrTooLarge) {
		t.Fatalf("send from 2,000 small outputs: %v", err)
	}
	txs, err := Consolidate(context.Background(), node, net, keys, ConsolidateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	maxIn := MaxInputsPerTx()
	if len(txs) != 3 || txs[0].Inputs != maxIn || txs[1].Inputs != maxIn || txs[2].Inputs != 2001-2*maxIn+2 {
		t.Fatalf("consolidation %+v", txs)
	}
	var fees uint64
	for i, c := range txs {
		id, err := types.ParseHash(c.TxID)
		if err != nil {
			t.Fatal(err)
		}
		tx := node.pooled(id)
		if tx == nil {
			t.Fatalf("tx %d (%s) is not in the mempool", i, c.TxID)
		}
		if len(tx.Outputs) != 1 || tx.Outputs[0].PubKeyHash != k0.PKH || c.Output != c.Value-c.Fee ||
			c.Fee != 2*uint64(tx.SerializeSize())+c.DecayMargin || c.Size > consensus.MaxTxSize || len(tx.Inputs) > consensus.MaxTxInputs {
			t.Fatalf("tx %d: %+v", i, c)
		}
		fees += c.Fee
	}
	// The smallest went first: the first transaction's inputs are the 774 smallest.
	us, _ := ListUTXOs(context.Background(), node, []string{k0.Address, k1.Address}, true)
	if len(us) != 1 || us[0].Value != total-fees {
		t.Fatalf("after consolidating: %d outputs, %+v; want one of %d", len(us), us, total-fees)
	}
	_, other, _ := NewMnemonic(12, net)
	if _, err := Send(context.Background(), node, Transfer{Net: net, Keys: keys, To: other, Amount: 15 * 100_000_000}); err != nil {
		t.Fatalf("send after consolidating: %v", err)
	}
	// One output: nothing to do.
	if txs, err := Consolidate(context.Background(), node, net, keys, ConsolidateOptions{}); err != nil || len(txs) != 0 {
		t.Fatalf("consolidating one output: %+v, %v", txs, err)
	}
}
