package scale

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// chainVersion names the form of the cached chain: change it when the builder, the block
// format or the database format changes, so that a stale cache is built again.
const chainVersion = "v1"

// The chain's shape.
const (
	numKeys          = 1 << 16 // the keys every output pays in turn (key = output number mod numKeys)
	fundingOutputs   = 500     // outputs of each funding coinbase
	transferFee      = 10      // subunits a transfer pays
	defaultTransfers = 1_000_000
	defaultPerBlock  = 1000
)

// scaleConfig is the size of the chain, from the environment.
type scaleConfig struct {
	Transfers int // COIN_SCALE_TRANSFERS
	PerBlock  int // COIN_SCALE_PER_BLOCK
}

func configFromEnv(tb testing.TB) scaleConfig {
	cfg := scaleConfig{Transfers: defaultTransfers, PerBlock: defaultPerBlock}
	for _, e := range []struct {
		name string
		v    *int
	}{{"COIN_SCALE_TRANSFERS", &cfg.Transfers}, {"COIN_SCALE_PER_BLOCK", &cfg.PerBlock}} {
		if s := os.Getenv(e.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n <= 0 {
				tb.Fatalf("%s=%q: want a positive number", e.name, s)
			}
			*e.v = n
		}
	}
	return cfg
}

// chainMeta describes a built chain; it is written last, so a directory without it is an
// interrupted build.
type chainMeta struct {
	Version        string
	Transfers      int
	PerBlock       int
	Keys           int
	Blocks         int    // blocks after genesis
	FirstTransfer  uint64 // height of the first block with transfers
	Tip            string
	RawBytes       int64    // Σ serialized size of the blocks after genesis
	UtxoAt         []uint64 // UTXO count after each height (index = height)
	BuildSeconds   float64
	SourceDBBytes  int64
	UtxoSetHash    string
	UtxoCountAtTip uint64
}

// cacheDir is where the chain of cfg is kept: $COIN_SCALE_CACHE or the user cache
// directory's coin-scale, then a directory per version and size.
func cacheDir(tb testing.TB, cfg scaleConfig) string {
	root := os.Getenv("COIN_SCALE_CACHE")
	if root == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			tb.Fatalf("no user cache directory (set COIN_SCALE_CACHE): %v", err)
		}
		root = filepath.Join(d, "coin-scale")
	}
	return filepath.Join(root, fmt.Sprintf("%s-%dx%d", chainVersion, cfg.Transfers, cfg.PerBlock))
}

// loadOrBuild returns the cached chain of cfg (a node data directory with db/, and its
// description), building it first when the cache does not hold it.
func loadOrBuild(tb testing.TB, cfg scaleConfig) (string, chainMeta) {
	dir := cacheDir(tb, cfg)
	var m chainMeta
	if raw, err := os.ReadFile(filepath.Join(dir, "meta.json")); err == nil {
		if err := json.Unmarshal(raw, &m); err == nil && m.Version == chainVersion {
			return dir, m
		}
	}
	tmp := dir + ".building"
	if err := os.RemoveAll(tmp); err != nil {
		tb.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		tb.Fatal(err)
	}
	m = buildChain(tb, tmp, cfg)
	raw, _ := json.MarshalIndent(m, "", " ")
	if err := os.WriteFile(filepath.Join(tmp, "meta.json"), raw, 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		tb.Fatal(err)
	}
	return dir, m
}

// scaleKey is one of the numKeys keys.
type scaleKey struct {
	priv ed25519.PrivateKey
	pkh  types.Hash
}

func makeKeys() []scaleKey {
	keys := make([]scaleKey, numKeys)
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < numKeys; i += workers {
				var seed [32]byte
				copy(seed[:], "coin-scale key")
				binary.BigEndian.PutUint32(seed[28:], uint32(i))
				priv := ed25519.NewKeyFromSeed(seed[:])
				keys[i] = scaleKey{priv: priv, pkh: types.Blake3(priv.Public().(ed25519.PublicKey))}
			}
		}()
	}
	wg.Wait()
	return keys
}

// coin is an unspent output the builder may spend.
type coin struct {
	op    types.Outpoint
	value uint64
	key   uint32
}

// buildChain writes a regtest chain into dir/db with chainstate under the consensus rules
// (decay included, Options.Values unset):
//
//   - funding blocks whose coinbases pay fundingOutputs outputs each, enough for two blocks
//     of transfers, then 100 empty blocks for coinbase maturity;
//   - then cfg.Transfers transfers, cfg.PerBlock a block: each spends the oldest unspent
//     output (first in, first out, so always one of an earlier block) and pays it, less
//     transferFee, in two outputs. Every transfer adds one output to the UTXO set.
//
// Outputs pay numKeys keys in turn, so no address (and no cluster: a one-input transfer
// merges nothing) comes near protocol §8's 0.1% threshold and nothing decays; the blocks'
// coinbases pay a fresh address each. Signatures are made in parallel; the txid does not
// cover them, so a block's outputs are known before it is signed.
func buildChain(tb testing.TB, dir string, cfg scaleConfig) chainMeta {
	t0 := time.Now()
	net := params.Regtest
	c, err := chainstate.Open(context.Background(), filepath.Join(dir, "db"), net, chainstate.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	if err := c.SetBulk(true); err != nil {
		tb.Fatal(err)
	}
	keys := makeKeys()
	m := chainMeta{Version: chainVersion, Transfers: cfg.Transfers, PerBlock: cfg.PerBlock, Keys: numKeys,
		UtxoAt: []uint64{c.Stats().UtxoCount}}
	var queue []coin
	head := 0
	nextKey := uint32(0)
	payee := func() uint32 {
		k := nextKey
		nextKey = (nextKey + 1) % numKeys
		return k
	}
	genesisTime := net.GenesisBlock().Header.Timestamp
	addBlock := func(txs []*types.Transaction, fees uint64, split bool) *types.Block {
		next := c.NextBlock()
		reward, err := consensus.MaxCoinbaseValue(next.Height, fees, next.Pool)
		if err != nil {
			tb.Fatal(err)
		}
		var h [8]byte
		binary.BigEndian.PutUint64(h[:], next.Height)
		b := types.NewBlock(types.BlockSpec{Parent: next.Parent, Height: next.Height, Target: next.Target,
			Timestamp: genesisTime + 60*next.Height, PayTo: types.Blake3(append([]byte("coin-scale miner"), h[:]...)),
			Reward: reward, Extra: []byte("scale"), Txs: txs})
		if split {
			cb := b.Transactions[0]
			part := reward / fundingOutputs
			cb.Outputs = cb.Outputs[:0]
			owners := make([]uint32, fundingOutputs)
			for i := range owners {
				owners[i] = payee()
				cb.Outputs = append(cb.Outputs, types.TxOutput{Value: part, PubKeyHash: keys[owners[i]].pkh})
			}
			b.Header.MerkleRoot = types.MerkleRoot(b.TxIDs())
			id := cb.TxID()
			for i, k := range owners {
				queue = append(queue, coin{op: types.Outpoint{TxID: id, Index: uint32(i)}, value: part, key: k})
			}
		}
		if err := types.SolveBlock(b, 1<<32); err != nil {
			tb.Fatal(err)
		}
		if _, err := c.ProcessBlock(context.Background(), b); err != nil {
			tb.Fatalf("block %d: %v", next.Height, err)
		}
		if c.Tip().Hash != b.Hash() {
			tb.Fatalf("block %d did not become the tip", next.Height)
		}
		m.RawBytes += int64(b.SerializeSize())
		m.UtxoAt = append(m.UtxoAt, c.Stats().UtxoCount)
		return b
	}
	funding := (2*cfg.PerBlock + fundingOutputs - 1) / fundingOutputs
	for i := 0; i < funding; i++ {
		addBlock(nil, 0, true)
	}
	for i := 0; i < consensus.CoinbaseMaturity; i++ {
		addBlock(nil, 0, false)
	}
	m.FirstTransfer = c.Tip().Height + 1
	workers := runtime.GOMAXPROCS(0)
	for done := 0; done < cfg.Transfers; {
		n := min(cfg.PerBlock, cfg.Transfers-done)
		txs := make([]*types.Transaction, n)
		signers := make([]uint32, n)
		for i := range txs {
			in := queue[head]
			head++
			out := in.value - transferFee
			a, b := payee(), payee()
			tx := &types.Transaction{Version: consensus.TxVersion, Kind: types.KindTransfer,
				Inputs: []types.TxInput{{PrevTxID: in.op.TxID, PrevIndex: in.op.Index}},
				Outputs: []types.TxOutput{{Value: out / 2, PubKeyHash: keys[a].pkh},
					{Value: out - out/2, PubKeyHash: keys[b].pkh}}}
			copy(tx.Inputs[0].PublicKey[:], keys[in.key].priv.Public().(ed25519.PublicKey))
			id := tx.TxID()
			queue = append(queue, coin{types.Outpoint{TxID: id, Index: 0}, out / 2, a},
				coin{types.Outpoint{TxID: id, Index: 1}, out - out/2, b})
			txs[i], signers[i] = tx, in.key
		}
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < n; i += workers {
					types.SignInputs(txs[i], keys[signers[i]].priv, net.Magic)
				}
			}()
		}
		wg.Wait()
		addBlock(txs, uint64(n)*transferFee, false)
		done += n
		if head > 1<<20 { // drop the spent front of the queue now and then
			queue = append([]coin(nil), queue[head:]...)
			head = 0
		}
	}
	tip := c.Tip()
	m.Blocks = int(tip.Height)
	m.Tip = tip.Hash.String()
	if err := c.SetBulk(false); err != nil {
		tb.Fatal(err)
	}
	info, err := c.UtxoSetInfo(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	m.UtxoSetHash = info.Hash.String()
	if err := c.Close(); err != nil {
		tb.Fatal(err)
	}
	m.BuildSeconds = time.Since(t0).Seconds()
	m.SourceDBBytes = dirSize(tb, filepath.Join(dir, "db"))
	m.UtxoCountAtTip = m.UtxoAt[len(m.UtxoAt)-1]
	return m
}

// dirSize is the total size of the files under dir.
func dirSize(tb testing.TB, dir string) int64 {
	var total int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			total += fi.Size()
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return total
}
