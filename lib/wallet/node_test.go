package wallet

import (
	"context"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/node"
	"github.com/cointoolkit/coin/lib/node/nodetest"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// testNode is the node of the wallet's tests: a real regtest node in the process
// (lib/node/nodetest) with its own chain, mempool and decay rules, and helpers that make on
// it the situations the tests need. Regtest proof of work is trivial: a block takes about
// 0.3 ms under -race.
type testNode struct {
	*rpcapi.Client
	Node *node.Node
	// burn is a key nobody else uses: the blocks mine mines pay it, and it funds the test's
	// addresses.
	burn Key
}

func newTestNode(t testing.TB) *testNode {
	t.Helper()
	n, c := nodetest.New(t, nodetest.Config(t, nil))
	m, _, err := NewMnemonic(12, params.Regtest)
	if err != nil {
		t.Fatal(err)
	}
	ring, err := KeyringFromMnemonic(m, "", params.Regtest, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ring.Wipe()
	burn, err := ring.Key(0)
	if err != nil {
		t.Fatal(err)
	}
	return &testNode{Client: c, Node: n, burn: burn}
}

// newQuietNode is a test node whose supply is large enough that holdings of up to holdings
// subunits are at most the decay threshold (0.1% of the supply), so that they never decay:
// the blocks to reach it (50 COIN each, 10% more for what the funding spends), and the
// maturity of the burn key's first coinbases.
func newQuietNode(t testing.TB, holdings uint64) *testNode {
	t.Helper()
	n := newTestNode(t)
	supply := holdings * (1_000_000_000 / consensus.DecayThresholdPPB) // 1,000 × holdings
	blocks := int(supply/(50*amount.Coin)) * 11 / 10
	n.mine(t, max(blocks, consensus.CoinbaseMaturity+1))
	return n
}

// mineTo mines blocks whose coinbases pay address, confirming the mempool.
func (n *testNode) mineTo(t testing.TB, blocks int, address string) {
	t.Helper()
	if _, err := n.GenerateToAddress(context.Background(), blocks, address); err != nil {
		t.Fatal(err)
	}
}

// mine mines blocks to the burn key, confirming the mempool.
func (n *testNode) mine(t testing.TB, blocks int) {
	t.Helper()
	n.mineTo(t, blocks, n.burn.Address)
}

// mineBlock hands the node the next block with exactly txs, whatever the mempool holds, its
// coinbase paying pkh the subsidy, fees and the pool's release; it returns the node's
// refusal.
func (n *testNode) mineBlock(pkh types.Hash, fees uint64, txs ...*types.Transaction) error {
	next := n.Node.Chain().NextBlock()
	reward, err := consensus.MaxCoinbaseValue(next.Height, fees, next.Pool)
	if err != nil {
		return err
	}
	ts := max(uint64(time.Now().Unix()), next.MinTimestamp)
	b := types.NewBlock(types.BlockSpec{Parent: next.Parent, Height: next.Height, Target: next.Target,
		Timestamp: ts, PayTo: pkh, Reward: reward, Txs: txs})
	if err := types.SolveBlock(b, 1<<32); err != nil {
		return err
	}
	_, err = n.Node.SubmitBlock(context.Background(), b)
	return err
}

// fund pays each of payments from the burn key's coins, in transactions of at most 900
// outputs, and mines them; it returns the funding transactions.
func (n *testNode) fund(t testing.TB, payments ...Payment) []*types.Transaction {
	t.Helper()
	var txs []*types.Transaction
	for len(payments) > 0 {
		k := min(len(payments), 900)
		plan, err := Spend(context.Background(), n, params.Regtest, []Key{n.burn}, Request{Payments: payments[:k]})
		if err != nil {
			t.Fatal(err)
		}
		txs = append(txs, plan.Tx)
		payments = payments[k:]
	}
	n.mine(t, 1)
	for _, tx := range txs {
		if !n.Node.Chain().Confirmed(tx.TxID()) {
			t.Fatalf("funding %s not mined", tx.TxID())
		}
	}
	return txs
}

// pooled is the mempool's transaction of id, or nil.
func (n *testNode) pooled(id types.Hash) *types.Transaction {
	e, ok := n.Node.Mempool().Get(id)
	if !ok {
		return nil
	}
	return e.Tx
}

// pool is the number of transactions in the mempool.
func (n *testNode) pool() int { return n.Node.Mempool().Info().Size }
