package miner

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// fakeNode is an in-memory node: a chain of block hashes, a mempool, and submitblock's
// checks (parent is the tip, merkle root, proof of work).
type fakeNode struct {
	mu        sync.Mutex
	network   string
	bits      uint32
	chain     []types.Hash // chain[h] is the hash at height h
	mempool   []*types.Transaction
	down      bool          // answer every call with "connection refused"
	submitLag time.Duration // how long submitblock takes
	refuse    error         // the node's answer to getblocktemplate, as rpcapi.Client returns it
	rejectAll string        // when set, submitblock refuses every block with this message

	templates   []templateReq      // every getblocktemplate answered
	submissions []submission       // every submitblock received
	perParent   map[types.Hash]int // submitblock calls per parent
}

type templateReq struct {
	at     time.Time
	height uint64
	prev   types.Hash
	txs    int
}

type submission struct {
	block    *types.Block
	accepted bool
	reason   string
}

func newFakeNode(network string, bits uint32) *fakeNode {
	return &fakeNode{network: network, bits: bits, chain: []types.Hash{params.Regtest.GenesisHash},
		perParent: map[types.Hash]int{}}
}

var errRefused = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}

func (f *fakeNode) check() error {
	if f.down {
		return fmt.Errorf("jsonrpc: fake: %w", errRefused)
	}
	return nil
}

func (f *fakeNode) GetBlockTemplate(ctx context.Context, address string) (*rpcapi.BlockTemplate, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check(); err != nil {
		return nil, err
	}
	if f.refuse != nil {
		return nil, f.refuse
	}
	hrp := keys.HRPTestnet
	if f.network == "mainnet" {
		hrp = keys.HRPMainnet
	}
	pkh, err := keys.DecodeAddress(address, hrp)
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid address")
	}
	height := uint64(len(f.chain))
	cb := types.NewCoinbase(height, types.Hash(pkh), 50_0000_0000, nil)
	txs := append([]*types.Transaction{cb}, f.mempool...)
	t := &rpcapi.BlockTemplate{Version: 1, PrevHash: f.chain[height-1].String(), Height: height,
		Timestamp: uint64(time.Now().Unix()), DifficultyTarget: f.bits, MinTime: 1}
	ids := make([]types.Hash, len(txs))
	for i, tx := range txs {
		ids[i] = tx.TxID()
		t.Transactions = append(t.Transactions, rpcapi.TemplateTx{TxID: ids[i].String(), Data: hex.EncodeToString(tx.Bytes())})
	}
	t.MerkleRoot = types.MerkleRoot(ids).String()
	f.templates = append(f.templates, templateReq{at: time.Now(), height: height, prev: f.chain[height-1], txs: len(txs)})
	return t, nil
}

func (f *fakeNode) SubmitBlock(ctx context.Context, hexData string) error {
	f.mu.Lock()
	lag := f.submitLag
	f.mu.Unlock()
	time.Sleep(lag)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check(); err != nil {
		return err
	}
	raw, err := hex.DecodeString(hexData)
	if err != nil {
		return jsonrpc.DomainError("not hex")
	}
	b, err := types.DecodeBlock(raw)
	if err != nil {
		return jsonrpc.DomainError(err.Error())
	}
	f.perParent[b.Header.PrevHash]++
	reject := func(msg string) error {
		f.submissions = append(f.submissions, submission{block: b, reason: msg})
		return jsonrpc.DomainError(msg)
	}
	if f.rejectAll != "" {
		return reject(f.rejectAll)
	}
	if b.Header.PrevHash != f.chain[len(f.chain)-1] {
		return reject("stale block template: parent is not the tip")
	}
	if types.MerkleRoot(b.TxIDs()) != b.Header.MerkleRoot {
		return reject("bad merkle root")
	}
	if err := pow.CheckProofOfWork(b.Hash(), b.Header.DifficultyTarget, nil); err != nil {
		return reject("invalid proof of work: " + err.Error())
	}
	f.chain = append(f.chain, b.Hash())
	f.mempool = nil
	f.submissions = append(f.submissions, submission{block: b, accepted: true})
	return nil
}

func (f *fakeNode) GetBlockCount(ctx context.Context) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return uint64(len(f.chain) - 1), f.check()
}

func (f *fakeNode) GetBlockHash(ctx context.Context, height uint64) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check(); err != nil {
		return "", err
	}
	if height >= uint64(len(f.chain)) {
		return "", jsonrpc.DomainError("block height out of range")
	}
	return f.chain[height].String(), nil
}

func (f *fakeNode) GetMempoolInfo(ctx context.Context) (*rpcapi.MempoolInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check(); err != nil {
		return nil, err
	}
	n := 0
	for _, tx := range f.mempool {
		n += tx.SerializeSize()
	}
	return &rpcapi.MempoolInfo{Size: len(f.mempool), Bytes: n}, nil
}

func (f *fakeNode) GetBlockchainInfo(ctx context.Context) (*rpcapi.BlockchainInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check(); err != nil {
		return nil, err
	}
	return &rpcapi.BlockchainInfo{Height: uint64(len(f.chain) - 1), Network: f.network}, nil
}

// addExternalBlock extends the chain with a block the miner did not make.
func (f *fakeNode) addExternalBlock() types.Hash {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := types.DoubleSHA256(fmt.Appendf(nil, "external block %d", len(f.chain)))
	f.chain = append(f.chain, h)
	return h
}

func (f *fakeNode) addMempoolTx(tag byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mempool = append(f.mempool, transferTx(tag))
}

func (f *fakeNode) setDown(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

func (f *fakeNode) height() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return uint64(len(f.chain) - 1)
}

func (f *fakeNode) snapshot() ([]templateReq, []submission, map[types.Hash]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pp := make(map[types.Hash]int, len(f.perParent))
	for k, v := range f.perParent {
		pp[k] = v
	}
	return append([]templateReq(nil), f.templates...), append([]submission(nil), f.submissions...), pp
}

// transferTx is a structurally valid transfer (its signature is not checked here).
func transferTx(tag byte) *types.Transaction {
	tx := &types.Transaction{Version: 1, Kind: types.KindTransfer,
		Inputs:  []types.TxInput{{PrevTxID: types.Hash{tag, 1}, PrevIndex: uint32(tag)}},
		Outputs: []types.TxOutput{{Value: 1000 + uint64(tag), PubKeyHash: types.Hash{tag, 2}}}}
	tx.Inputs[0].Signature[0] = tag
	return tx
}

// testAddress is a regtest/testnet address and its pubkey hash.
func testAddress(t testing.TB, seed byte) Address {
	t.Helper()
	var pkh keys.PubKeyHash
	for i := range pkh {
		pkh[i] = seed + byte(i)
	}
	s, err := keys.EncodeAddress(keys.HRPTestnet, pkh)
	if err != nil {
		t.Fatal(err)
	}
	a, err := ParseAddress(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// waitFor polls cond every 5 ms until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
