// Package faucettest holds the test double of lib/faucet's packages: a real regtest node in
// the process (lib/node, its RPC served by lib/rpcserver over httptest), so that the
// faucet's tests run against the node's own mempool, chain, decay and conduct rules instead
// of a re-implementation of them; it restarts without its mempool and mines blocks of
// transactions it never saw. Faulty is a thin wrapper over it for the failures a real node
// does not make on demand (a refused or lost send, a node that is down).
package faucettest

import (
	"context"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
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
	// Node is the node; Restart replaces it.
	Node *node.Node
	cfg  node.Config
	// burn receives the blocks Mine mines, so that nobody the test knows gets their coins.
	burn wallet.Key
	gate *gate
}

// gate serves the node's RPC, one node after another: a restart waits for the calls in
// flight, and the calls made during it wait for the new node, so the client keeps one URL.
type gate struct {
	mu sync.RWMutex
	h  http.Handler
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	g.h.ServeHTTP(w, r)
}

// NewNode starts an empty regtest node (its genesis block only); it stops when the test
// ends.
func NewNode(t testing.TB) *Node {
	t.Helper()
	n := &Node{cfg: nodetest.Config(t, nil), burn: NewKey(t), gate: &gate{}}
	n.open(t)
	srv := httptest.NewServer(n.gate)
	n.Client = rpcapi.NewClient(srv.URL, jsonrpc.WithTimeout(time.Minute))
	t.Cleanup(func() {
		n.Client.Close()
		srv.Close()
		n.Node.Chain().Close()
	})
	return n
}

// open opens the node on its data directory and serves it.
func (n *Node) open(t testing.TB) {
	t.Helper()
	nn, err := node.New(context.Background(), n.cfg)
	if err != nil {
		t.Fatal(err)
	}
	n.Node, n.gate.h = nn, nodetest.Handler(nn, n.cfg.Logger)
}

// Restart stops the node and opens it again on its data directory: coin-node killed before
// it wrote its mempool to mempool.dat (this node never writes it) and started again, so the
// chain stays and the mempool is empty. The RPC address stays; calls wait for the restart.
func (n *Node) Restart(t testing.TB) {
	t.Helper()
	n.gate.mu.Lock()
	defer n.gate.mu.Unlock()
	if err := n.Node.Chain().Close(); err != nil {
		t.Fatal(err)
	}
	n.open(t)
}

// MineBlock mines one block of txs (after its coinbase, to nobody's address) on the tip and
// hands it to the node as a peer's block would come: the node checks it with the consensus
// rules, and its mempool drops what the block confirms or conflicts. txs need not have been
// in the node's mempool: the transactions of someone else, relayed to the miner only.
func (n *Node) MineBlock(txs ...*types.Transaction) error {
	next := n.Node.Chain().NextBlock()
	reward, err := consensus.MaxCoinbaseValue(next.Height, 0, next.Pool)
	if err != nil {
		return err
	}
	ts := max(uint64(time.Now().Unix()), next.MinTimestamp)
	b := types.NewBlock(types.BlockSpec{Parent: next.Parent, Height: next.Height, Target: next.Target,
		Timestamp: ts, PayTo: n.burn.PKH, Reward: reward, Txs: txs})
	if err := types.SolveBlock(b, 1<<32); err != nil {
		return err
	}
	res, err := n.Node.SubmitBlock(context.Background(), b)
	if err != nil {
		return err
	}
	if !res.IsTip {
		return errors.New("the mined block is not the tip")
	}
	return nil
}

// PaidTo is the sum and the number of address's confirmed outputs.
func (n *Node) PaidTo(t testing.TB, address string) (sum uint64, outputs int) {
	t.Helper()
	us, err := n.GetUtxosByAddress(context.Background(), address, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range us {
		sum += u.Value
	}
	return sum, len(us)
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
// overrides with it. Intercept, when set, sees each sent transaction first.
type Faulty struct {
	*Node
	mu          sync.Mutex
	sendErr     error
	afterAccept bool
	down        error
	sends       int
	intercept   func(*types.Transaction) error
}

// Intercept makes f see each transaction sent from now on before the node does (nil:
// none): an error of f answers the send instead of the node; with nil the node answers.
// f may act on the node meanwhile (mine the transaction, as if it had come by a peer).
func (f *Faulty) Intercept(fn func(*types.Transaction) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.intercept = fn
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

// Sends counts the transactions the node accepted through f (an answer then lost
// included): what was broadcast.
func (f *Faulty) Sends() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sends
}

// SendRawTransaction is the node's, or the injected failure.
func (f *Faulty) SendRawTransaction(ctx context.Context, hexTx string) (string, error) {
	f.mu.Lock()
	err, after, down, intercept := f.sendErr, f.afterAccept, f.down, f.intercept
	f.mu.Unlock()
	if down != nil {
		return "", down
	}
	if intercept != nil {
		b, derr := hex.DecodeString(hexTx)
		if derr != nil {
			return "", derr
		}
		tx, derr := types.DecodeTransaction(b)
		if derr != nil {
			return "", derr
		}
		if ierr := intercept(tx); ierr != nil {
			return "", ierr
		}
	}
	if err != nil && !after {
		return "", err
	}
	id, nerr := f.Client.SendRawTransaction(ctx, hexTx)
	if nerr == nil {
		f.mu.Lock()
		f.sends++
		f.mu.Unlock()
	}
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
