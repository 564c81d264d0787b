// Package faucettest holds the test double of lib/faucet's packages: a real regtest node in
// the process (lib/node, its RPC served by lib/rpcserver over httptest), so that the
// faucet's tests run against the node's own mempool, chain and conduct rules instead of a
// re-implementation of them, and Faulty, a thin wrapper over it for the failures a real
// node does not make on demand (a refused or lost send, a node that is down).
package faucettest

import (
	"context"
	"sync"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/node"
	"github.com/cointoolkit/coin/lib/node/nodetest"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

// Net is the network of the double: regtest.
var Net = params.Regtest

// Node is a regtest node in the process and its RPC client.
type Node struct {
	*rpcapi.Client
	Node *node.Node
	// burn receives the blocks Mine mines, so that nobody the test knows gets their coins.
	burn wallet.Key
}

// NewNode starts an empty regtest node (its genesis block only); it stops when the test
// ends.
func NewNode(t testing.TB) *Node {
	t.Helper()
	n, c := nodetest.New(t, nodetest.Config(t, nil))
	return &Node{Client: c, Node: n, burn: NewKey(t)}
}

// Mine mines n blocks to an address of nobody's, confirming the mempool.
func (n *Node) Mine(t testing.TB, blocks int) {
	t.Helper()
	n.MineTo(t, blocks, n.burn.Address)
}

// MineTo mines n blocks whose coinbases pay address.
func (n *Node) MineTo(t testing.TB, blocks int, address string) {
	t.Helper()
	if _, err := n.GenerateToAddress(context.Background(), blocks, address); err != nil {
		t.Fatal(err)
	}
}

// Fund gives address coins coinbases it can spend: it mines coins blocks to address,
// then enough others to mature them.
func (n *Node) Fund(t testing.TB, address string, coins int) {
	t.Helper()
	n.MineTo(t, coins, address)
	n.Mine(t, consensus.CoinbaseMaturity)
}

// Pooled is the transaction id (hex) in the node's mempool, or nil.
func (n *Node) Pooled(id string) *types.Transaction {
	h, err := types.ParseHash(id)
	if err != nil {
		return nil
	}
	e, ok := n.Node.Mempool().Get(h)
	if !ok {
		return nil
	}
	return e.Tx
}

// NewKey is a fresh wallet's first key on regtest.
func NewKey(t testing.TB) wallet.Key {
	t.Helper()
	m, _, err := wallet.NewMnemonic(12, Net)
	if err != nil {
		t.Fatal(err)
	}
	return KeyOf(t, m)
}

// KeyOf is the first key of mnemonic m on regtest.
func KeyOf(t testing.TB, m string) wallet.Key {
	t.Helper()
	ring, err := wallet.KeyringFromMnemonic(m, "", Net, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ring.Wipe()
	k, err := ring.Key(0)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Faulty is a node whose sends can be made to fail: SendErr, when set, answers a
// sendrawtransaction instead of the node (after the node accepted it, when AfterAccept:
// an answer lost on its way back). Down, when set, answers every call the wrapper
// overrides with it.
type Faulty struct {
	*Node
	mu          sync.Mutex
	sendErr     error
	afterAccept bool
	down        error
	sends       int
}

// NewFaulty wraps n.
func NewFaulty(n *Node) *Faulty { return &Faulty{Node: n} }

// FailSends makes the following sends fail with err (nil: none), after the node accepted
// them when afterAccept.
func (f *Faulty) FailSends(err error, afterAccept bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sendErr, f.afterAccept = err, afterAccept
}

// SetDown makes the node answer err to what Faulty overrides (nil: up again).
func (f *Faulty) SetDown(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = err
}

// Sends counts the sendrawtransaction calls made through f.
func (f *Faulty) Sends() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sends
}

// SendRawTransaction is the node's, or the injected failure.
func (f *Faulty) SendRawTransaction(ctx context.Context, hex string) (string, error) {
	f.mu.Lock()
	f.sends++
	err, after, down := f.sendErr, f.afterAccept, f.down
	f.mu.Unlock()
	if down != nil {
		return "", down
	}
	if err != nil && !after {
		return "", err
	}
	id, nerr := f.Client.SendRawTransaction(ctx, hex)
	if nerr == nil && err != nil {
		return "", err
	}
	return id, nerr
}

// GetBlockchainInfo is the node's, or the injected failure.
func (f *Faulty) GetBlockchainInfo(ctx context.Context) (*rpcapi.BlockchainInfo, error) {
	f.mu.Lock()
	down := f.down
	f.mu.Unlock()
	if down != nil {
		return nil, down
	}
	return f.Client.GetBlockchainInfo(ctx)
}
