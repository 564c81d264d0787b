package miner

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// ErrBadTemplate matches every error of NewWork: the template is not one the miner can
// turn into a valid block.
var ErrBadTemplate = errors.New("bad block template")

// Work is a block template turned into the block to solve: everything but the timestamp
// and the nonce is fixed.
type Work struct {
	// Height is the height of the block being mined.
	Height uint64
	// PrevHash is the parent block, the tip the template was made on.
	PrevHash types.Hash
	// Header is the template's header with nonce 0 and the template's timestamp (raised
	// to MinTime when it is below).
	Header types.BlockHeader
	// Transactions are the block's transactions, the coinbase first.
	Transactions []*types.Transaction
	// Target is the full target of Header.DifficultyTarget, big-endian.
	Target [32]byte
	// MinTime is the smallest timestamp the node accepts (median time past + 1).
	MinTime uint64
	// Fees is the sum of the template's transaction fees.
	Fees uint64

	txKey string // the non-coinbase txids, to compare templates
	txs   []byte // bincode of the transaction vector, for BlockHex
}

// NewWork checks template t and builds its block. payTo is the mining address's pubkey
// hash, which the coinbase must pay; powLimit (nil: none) bounds the target.
//
// The checks: at least one transaction; transactions[0] is a coinbase and no other is; every
// data field decodes as exactly one bincode transaction whose txid is the listed txid; the
// merkle root of those txids is the template's merkle_root; the compact difficulty_target
// is a valid target and equals the template's full target when that is given.
func NewWork(t *rpcapi.BlockTemplate, payTo keys.PubKeyHash, powLimit *big.Int) (*Work, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadTemplate, fmt.Sprintf(format, args...))
	}
	if len(t.Transactions) == 0 {
		return nil, bad("no transactions (the coinbase must be first)")
	}
	if t.Height == 0 {
		return nil, bad("height 0")
	}
	prev, err := types.ParseHash(t.PrevHash)
	if err != nil {
		return nil, bad("prev_hash: %v", err)
	}
	wantRoot, err := types.ParseHash(t.MerkleRoot)
	if err != nil {
		return nil, bad("merkle_root: %v", err)
	}
	w := &Work{Height: t.Height, PrevHash: prev, MinTime: t.MinTime}
	ids := make([]types.Hash, len(t.Transactions))
	keyIDs := make([]string, 0, len(t.Transactions)-1)
	for i, tt := range t.Transactions {
		raw, err := hex.DecodeString(tt.Data)
		if err != nil {
			return nil, bad("transaction %d: data is not hex", i)
		}
		tx, err := types.DecodeTransaction(raw)
		if err != nil {
			return nil, bad("transaction %d: %v", i, err)
		}
		ids[i] = tx.TxID()
		if tt.TxID != "" && !strings.EqualFold(tt.TxID, ids[i].String()) {
			return nil, bad("transaction %d: txid %s does not match its data (%s)", i, tt.TxID, ids[i])
		}
		if i == 0 != tx.IsCoinbase() {
			if i == 0 {
				return nil, bad("transactions[0] is a %s, not the coinbase", tx.Kind)
			}
			return nil, bad("transaction %d is a second coinbase", i)
		}
		if i > 0 {
			keyIDs = append(keyIDs, ids[i].String())
		}
		w.Fees += tt.Fee
		w.Transactions = append(w.Transactions, tx)
	}
	cb := w.Transactions[0]
	if len(cb.Outputs) > 0 && !slices.ContainsFunc(cb.Outputs, func(o types.TxOutput) bool {
		return o.PubKeyHash == types.Hash(payTo)
	}) {
		return nil, bad("the coinbase does not pay the mining address")
	}
	if root := types.MerkleRoot(ids); root != wantRoot {
		return nil, bad("merkle root of the transactions is %s, the template says %s", root, wantRoot)
	}
	target, err := pow.TargetFromCompact(t.DifficultyTarget, powLimit)
	if err != nil {
		return nil, bad("difficulty_target: %v", err)
	}
	w.Target = pow.TargetBytes(target)
	if t.Target != "" {
		full, err := parseTarget(t.Target)
		if err != nil {
			return nil, bad("target: %v", err)
		}
		if full != w.Target {
			return nil, bad("target %x does not match difficulty_target 0x%08x (%x)", full, t.DifficultyTarget, w.Target)
		}
	}
	w.Header = types.BlockHeader{
		Version:          t.Version,
		PrevHash:         prev,
		MerkleRoot:       wantRoot,
		Timestamp:        max(t.Timestamp, t.MinTime),
		DifficultyTarget: t.DifficultyTarget,
	}
	w.txKey = strings.Join(keyIDs, ",")
	bw := bincode.NewWriter(nil)
	bw.Varint(uint64(len(w.Transactions)))
	for _, tx := range w.Transactions {
		tx.Encode(bw)
	}
	w.txs = bw.Bytes()
	return w, nil
}

// parseTarget reads a hex target of at most 32 bytes as a big-endian number.
func parseTarget(s string) ([32]byte, error) {
	var out [32]byte
	s = strings.TrimPrefix(s, "0x")
	if len(s)%2 == 1 {
		s = "0" + s
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return out, errors.New("not hex")
	}
	for len(b) > 32 && b[0] == 0 {
		b = b[1:]
	}
	if len(b) > 32 {
		return out, errors.New("longer than 256 bits")
	}
	copy(out[32-len(b):], b)
	return out, nil
}

// SameTransactions reports whether w and o hold the same non-coinbase transactions in the
// same order (templates of one parent differ only in their timestamps otherwise).
func (w *Work) SameTransactions(o *Work) bool { return w.txKey == o.txKey }

// Block is the block with the given header (which must be Header with another timestamp
// and nonce).
func (w *Work) Block(h types.BlockHeader) *types.Block {
	return &types.Block{Header: h, Transactions: w.Transactions}
}

// BlockHex is the hex bincode of the block with header h, ready for submitblock.
func (w *Work) BlockHex(h types.BlockHeader) string {
	hb := h.Bytes()
	buf := make([]byte, 0, len(hb)+len(w.txs))
	buf = append(append(buf, hb...), w.txs...)
	return hex.EncodeToString(buf)
}

// HeaderAt is the header with timestamp ts and nonce.
func (w *Work) HeaderAt(ts, nonce uint64) types.BlockHeader {
	h := w.Header
	h.Timestamp = ts
	h.Nonce = nonce
	return h
}
