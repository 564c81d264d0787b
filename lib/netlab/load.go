package netlab

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// Wallet is the lab's one key: miners pay it, the load generator spends from it.
type Wallet struct {
	Key  ed25519.PrivateKey
	PKH  types.Hash
	Addr string

	mu   sync.Mutex
	pool []coin          // split outputs ready to spend
	used map[string]bool // coinbases already split
}

type coin struct {
	op    types.Outpoint
	value uint64
}

// NewWallet derives the lab key from a fixed seed (regtest only).
func NewWallet() *Wallet {
	seed := sha256.Sum256([]byte("coin netlab regtest key"))
	k := ed25519.NewKeyFromSeed(seed[:])
	pkh := keys.HashPubKey(k.Public().(ed25519.PublicKey))
	addr, err := keys.EncodeAddress(params.Regtest.HRP, pkh)
	if err != nil {
		panic(err)
	}
	return &Wallet{Key: k, PKH: types.Hash(pkh), Addr: addr, used: map[string]bool{}}
}

// txFee is what each transfer pays (the relay floor is 1 subunit a byte; a lab transfer is
// under 200 bytes, a split under 5,000).
const (
	txFee      = 1_000
	splitFee   = 10_000
	splitParts = 100
)

// Premine mines blocks on n with the real coin-miner (--blocks), paying the lab wallet,
// so that the wallet has mature coinbases to split.
func (l *Lab) Premine(ctx context.Context, n *Node, w *Wallet, blocks int) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", n.NS, filepath.Join(l.Cfg.BinDir, "coin-miner"),
		"--rpc", fmt.Sprintf("http://127.0.0.1:%d", RPCPort), "--address", w.Addr, "--network", "regtest",
		"--blocks", strconv.Itoa(blocks), "--threads", "1", "--log-interval", "1h")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("coin-miner --blocks %d: %v\n%s", blocks, err, out)
	}
	return nil
}

// Split spends up to k mature coinbases of the wallet on node n, each into splitParts
// outputs, and returns the txids; Confirm moves their outputs into the pool once mined.
func (w *Wallet) Split(ctx context.Context, n *Node, k int) ([]*types.Transaction, error) {
	tip, err := n.RPC.GetBlockCount(ctx)
	if err != nil {
		return nil, err
	}
	us, err := n.RPC.GetUtxosByAddress(ctx, w.Addr, false)
	if err != nil {
		return nil, err
	}
	var txs []*types.Transaction
	for _, u := range us {
		if len(txs) >= k {
			break
		}
		if !u.IsCoinbase || u.BlockHeight+consensus.CoinbaseMaturity > tip || w.used[u.TxID] {
			continue
		}
		id, err := types.ParseHash(u.TxID)
		if err != nil {
			return nil, err
		}
		// Keep 4% back from the effective value: the outputs decay until the split is mined.
		total := u.EffectiveValue - u.EffectiveValue/25 - splitFee
		tx := &types.Transaction{Version: 1, Kind: types.KindTransfer,
			Inputs: []types.TxInput{{PrevTxID: id, PrevIndex: u.Index}}}
		for range splitParts {
			tx.Outputs = append(tx.Outputs, types.TxOutput{Value: total / splitParts, PubKeyHash: w.PKH})
		}
		types.SignInputs(tx, w.Key, params.Regtest.Magic)
		if _, err := n.RPC.SendRawTransaction(ctx, hex.EncodeToString(tx.Bytes())); err != nil {
			return nil, fmt.Errorf("split %s: %w", u.TxID, err)
		}
		w.used[u.TxID] = true
		txs = append(txs, tx)
	}
	return txs, nil
}

// AddOutputs puts a mined split's outputs into the pool.
func (w *Wallet) AddOutputs(tx *types.Transaction) {
	w.mu.Lock()
	defer w.mu.Unlock()
	id := tx.TxID()
	for i, o := range tx.Outputs {
		w.pool = append(w.pool, coin{types.Outpoint{TxID: id, Index: uint32(i)}, o.Value})
	}
}

// Left is the number of outputs the pool holds.
func (w *Wallet) Left() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pool)
}

// NextTransfer takes an output from the pool and builds a signed transfer of it back to
// the wallet; nil when the pool is empty.
func (w *Wallet) NextTransfer() *types.Transaction {
	w.mu.Lock()
	if len(w.pool) == 0 {
		w.mu.Unlock()
		return nil
	}
	c := w.pool[0]
	w.pool = w.pool[1:]
	w.mu.Unlock()
	tx := &types.Transaction{Version: 1, Kind: types.KindTransfer,
		Inputs:  []types.TxInput{{PrevTxID: c.op.TxID, PrevIndex: c.op.Index}},
		Outputs: []types.TxOutput{{Value: c.value - c.value/25 - txFee, PubKeyHash: w.PKH}}}
	types.SignInputs(tx, w.Key, params.Regtest.Magic)
	return tx
}
