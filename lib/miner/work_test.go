package miner

import (
	"encoding/hex"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/sha256d"
	"github.com/cointoolkit/coin/lib/types"
)

// TestKnownHeaderMeetsTarget takes the genesis headers, whose nonces and hashes are fixed
// constants of lib/params, and checks that each hash meets its target at that nonce, that
// the scanning kernel finds that nonce, and that the nonce before it does not meet the
// target.
func TestKnownHeaderMeetsTarget(t *testing.T) {
	for _, tc := range []struct {
		net   *params.Network
		nonce uint64
		hash  string
	}{
		{params.Mainnet, 31698, "00000294de6e2076beaeb2a82c5603964a3116f4610a3fac6cdbb9a715af25f4"},
		{params.Testnet, 1391663, "00000e37ba40a4af8130d7a18ace85671fdbf0c1ffb0f814000211360f9f5de2"},
	} {
		t.Run(tc.net.Name, func(t *testing.T) {
			h := tc.net.GenesisBlock().Header
			if h.Nonce != tc.nonce {
				t.Fatalf("genesis nonce %d, want %d", h.Nonce, tc.nonce)
			}
			if got := h.Hash().String(); got != tc.hash {
				t.Fatalf("hash %s, want %s", got, tc.hash)
			}
			if err := pow.CheckProofOfWork(h.Hash(), h.DifficultyTarget, tc.net.PowLimit); err != nil {
				t.Fatalf("known header does not meet its target: %v", err)
			}
			prev := h
			prev.Nonce--
			if pow.CheckProofOfWork(prev.Hash(), h.DifficultyTarget, tc.net.PowLimit) == nil {
				t.Fatalf("nonce %d also meets the target; the test needs a range with one solution", prev.Nonce)
			}

			// The miner's path: a Work, a job, the kernel.
			w := &Work{Header: h}
			tb := pow.TargetBytes(mustTarget(h.DifficultyTarget))
			w.Target = tb
			j := newJob(1, w, nil, h.Timestamp, fullSpaceChunks)
			sc := sha256d.NewScanner(&j.header, &j.target)
			nonce, hash, found, hashed := sc.Scan(tc.nonce-1, 1000)
			if !found || nonce != tc.nonce || hashed != 2 {
				t.Fatalf("Scan from %d: nonce %d found %v hashed %d, want %d", tc.nonce-1, nonce, found, hashed, tc.nonce)
			}
			if hex.EncodeToString(hash[:]) != tc.hash {
				t.Fatalf("Scan hash %x, want %s", hash, tc.hash)
			}
		})
	}
	// Regtest's genesis solves at nonce 0 (about every second hash meets 0x207fffff).
	g := params.Regtest.GenesisBlock().Header
	if err := pow.CheckProofOfWork(g.Hash(), g.DifficultyTarget, params.Regtest.PowLimit); err != nil || g.Hash() != params.Regtest.GenesisHash {
		t.Fatalf("regtest genesis: %v", err)
	}
}

// template builds a getblocktemplate answer for a coinbase paying pkh and txs.
func template(pkh keys.PubKeyHash, height uint64, txs ...*types.Transaction) *rpcapi.BlockTemplate {
	all := append([]*types.Transaction{types.NewCoinbase(height, types.Hash(pkh), 50_0000_0000+uint64(len(txs)), []byte("x"))}, txs...)
	ids := make([]types.Hash, len(all))
	t := &rpcapi.BlockTemplate{Version: 1, PrevHash: params.Regtest.GenesisHash.String(), Timestamp: 1767225700,
		DifficultyTarget: 0x207fffff, Height: height, MinTime: 1767225603,
		Target: "7fffff0000000000000000000000000000000000000000000000000000000000"}
	for i, tx := range all {
		ids[i] = tx.TxID()
		t.Transactions = append(t.Transactions, rpcapi.TemplateTx{TxID: ids[i].String(), Data: hex.EncodeToString(tx.Bytes()), Fee: uint64(i)})
	}
	t.MerkleRoot = types.MerkleRoot(ids).String()
	return t
}

// TestNewWorkMerkleRoot: the block assembled from a template has the template's merkle
// root, and its bincode decodes back to the same transactions.
func TestNewWorkMerkleRoot(t *testing.T) {
	a := testAddress(t, 7)
	for n := 0; n <= 6; n++ {
		var txs []*types.Transaction
		for i := range n {
			txs = append(txs, transferTx(byte(i+1)))
		}
		tmpl := template(a.PubKeyHash, 1, txs...)
		w, err := NewWork(tmpl, a.PubKeyHash, params.Regtest.PowLimit)
		if err != nil {
			t.Fatalf("%d txs: %v", n, err)
		}
		h := w.HeaderAt(w.Header.Timestamp+5, 42)
		b := w.Block(h)
		root := types.MerkleRoot(b.TxIDs())
		if root.String() != tmpl.MerkleRoot || b.Header.MerkleRoot.String() != tmpl.MerkleRoot {
			t.Fatalf("%d txs: merkle root %s (header %s), template %s", n, root, b.Header.MerkleRoot, tmpl.MerkleRoot)
		}
		raw, err := hex.DecodeString(w.BlockHex(h))
		if err != nil {
			t.Fatal(err)
		}
		dec, err := types.DecodeBlock(raw)
		if err != nil {
			t.Fatalf("%d txs: the submitted bincode does not decode: %v", n, err)
		}
		if dec.Header != h || len(dec.Transactions) != n+1 || types.MerkleRoot(dec.TxIDs()).String() != tmpl.MerkleRoot {
			t.Fatalf("%d txs: decoded block differs: %+v", n, dec.Header)
		}
		if string(raw) != string(b.Bytes()) {
			t.Fatalf("%d txs: BlockHex differs from Block.Bytes", n)
		}
		if w.Header.Timestamp != tmpl.Timestamp || w.Height != 1 || w.Fees != uint64(n*(n+1)/2) {
			t.Fatalf("work fields: %+v", w)
		}
	}
}

func TestNewWorkRejects(t *testing.T) {
	a := testAddress(t, 7)
	other := testAddress(t, 9)
	cases := []struct {
		name   string
		mutate func(*rpcapi.BlockTemplate)
		want   string
	}{
		{"no transactions", func(t *rpcapi.BlockTemplate) { t.Transactions = nil }, "no transactions"},
		{"merkle root", func(t *rpcapi.BlockTemplate) { t.MerkleRoot = strings.Repeat("ab", 32) }, "merkle root"},
		{"txid", func(t *rpcapi.BlockTemplate) { t.Transactions[1].TxID = strings.Repeat("cd", 32) }, "does not match its data"},
		{"not hex", func(t *rpcapi.BlockTemplate) { t.Transactions[1].Data = "zz" }, "not hex"},
		{"trailing bytes", func(t *rpcapi.BlockTemplate) { t.Transactions[1].Data += "00" }, "transaction 1"},
		{"coinbase not first", func(t *rpcapi.BlockTemplate) {
			t.Transactions[0], t.Transactions[1] = t.Transactions[1], t.Transactions[0]
		}, "not the coinbase"},
		{"pays someone else", func(t *rpcapi.BlockTemplate) {
			*t = *template(other.PubKeyHash, 1, transferTx(1))
		}, "does not pay the mining address"},
		{"target mismatch", func(t *rpcapi.BlockTemplate) { t.Target = "7ffffe" + strings.Repeat("0", 58) }, "does not match difficulty_target"},
		{"target above limit", func(t *rpcapi.BlockTemplate) { t.DifficultyTarget = 0x2100ffff; t.Target = "" }, "difficulty_target"},
		{"prev hash", func(t *rpcapi.BlockTemplate) { t.PrevHash = "00" }, "prev_hash"},
	}
	for _, tc := range cases {
		tmpl := template(a.PubKeyHash, 1, transferTx(1))
		tc.mutate(tmpl)
		_, err := NewWork(tmpl, a.PubKeyHash, params.Regtest.PowLimit)
		if !errors.Is(err, ErrBadTemplate) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want ErrBadTemplate with %q", tc.name, err, tc.want)
		}
	}
}

func TestParseAddress(t *testing.T) {
	var pkh keys.PubKeyHash
	pkh[0] = 1
	main, _ := keys.EncodeAddress(keys.HRPMainnet, pkh)
	test, _ := keys.EncodeAddress(keys.HRPTestnet, pkh)
	a, err := ParseAddress(main, nil)
	if err != nil || a.PubKeyHash != pkh || !a.ValidOn(params.Mainnet) || a.ValidOn(params.Regtest) {
		t.Fatalf("mainnet address: %+v %v", a, err)
	}
	a, err = ParseAddress(strings.ToUpper(test), nil)
	if err != nil || a.String != test || !a.ValidOn(params.Testnet) || !a.ValidOn(params.Regtest) || a.NetworkNames() != "testnet or regtest" {
		t.Fatalf("testnet address: %+v %v", a, err)
	}
	if a, err = ParseAddress(test, params.Regtest); err != nil || len(a.Networks) != 1 {
		t.Fatalf("--network regtest: %+v %v", a, err)
	}
	bad := []struct {
		s    string
		net  *params.Network
		want error
	}{
		{main, params.Regtest, keys.ErrWrongNetwork},
		{test, params.Mainnet, keys.ErrWrongNetwork},
		{test[:len(test)-1] + "q", nil, keys.ErrBadChecksum},
		{strings.Replace(test, "tcoin", "xcoin", 1), nil, ErrUnknownHRP},
		{"", nil, keys.ErrBadAddress},
		{"nonsense", nil, keys.ErrBadAddress},
	}
	for _, tc := range bad {
		if _, err := ParseAddress(tc.s, tc.net); !errors.Is(err, tc.want) {
			t.Errorf("ParseAddress(%q, %v) = %v, want %v", tc.s, tc.net, err, tc.want)
		}
	}
}

// mustTarget decodes a valid compact target.
func mustTarget(bits uint32) *big.Int {
	t, _, _ := pow.CompactToBig(bits)
	return t
}
