package chainstate

import (
	"encoding/binary"

	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/types"
)

const (
	pfxBlock   = 'b' // a block's bytes, in databases written before the block files (blockstore.go)
	pfxBlockAt = 'B' // where a block is in the blk files (blockfile.Pos)
	pfxUndoAt  = 'U' // where a block's undo data is in the rev files (blockfile.Pos)
	pfxIndex   = 'i'
	pfxHeight  = 'h'
	pfxUtxo    = 'u'
	pfxAddr    = 'a'
	pfxCluster = 'c'
	pfxTx      = 't'
	pfxUndo    = 'j'  // journal undo data (format 1) before the rev files; 'r' held the format before the journal
	keyBlkEnd  = "Fb" // the end of the blk files (blockfile.End)
	keyRevEnd  = "Fr" // the end of the rev files
	keyStats   = "s"
)

func hashKey(p byte, h types.Hash) []byte {
	k := make([]byte, 33)
	k[0] = p
	copy(k[1:], h[:])
	return k
}

func heightKey(h uint64) []byte {
	k := make([]byte, 9)
	k[0] = pfxHeight
	binary.BigEndian.PutUint64(k[1:], h)
	return k
}

func utxoKey(op types.Outpoint) []byte {
	k := make([]byte, 37)
	utxoKeyTo(k, op)
	return k
}

// utxoKeyTo writes op's key into k[:37].
func utxoKeyTo(k []byte, op types.Outpoint) {
	k[0] = pfxUtxo
	copy(k[1:33], op.TxID[:])
	binary.BigEndian.PutUint32(k[33:37], op.Index)
}

func addrKey(pkh types.Hash, op types.Outpoint) []byte {
	k := make([]byte, 69)
	addrKeyTo(k, pkh, op)
	return k
}

// addrKeyTo writes the address-index key into k[:69].
func addrKeyTo(k []byte, pkh types.Hash, op types.Outpoint) {
	k[0] = pfxAddr
	copy(k[1:33], pkh[:])
	copy(k[33:65], op.TxID[:])
	binary.BigEndian.PutUint32(k[65:69], op.Index)
}

const (
	flagCoinbase = 1 << iota
	flagLocked
)

func encodeEntry(w *bincode.Writer, e *consensus.UtxoEntry) {
	w.U64(e.Value)
	w.Raw(e.PubKeyHash[:])
	w.U64(e.Height)
	var f uint8
	if e.Coinbase {
		f |= flagCoinbase
	}
	if e.Locked {
		f |= flagLocked
	}
	w.U8(f)
	w.Raw(e.ClusterID[:])
}

func decodeEntry(r *bincode.Reader) *consensus.UtxoEntry {
	e := new(consensus.UtxoEntry)
	e.Value = r.U64()
	r.Raw(e.PubKeyHash[:])
	e.Height = r.U64()
	f := r.U8()
	e.Coinbase = f&flagCoinbase != 0
	e.Locked = f&flagLocked != 0
	r.Raw(e.ClusterID[:])
	return e
}

func entryBytes(e *consensus.UtxoEntry) []byte {
	w := bincode.NewWriter(make([]byte, 0, 84))
	encodeEntry(w, e)
	return w.Bytes()
}

// Stats are the chain statistics stored with the tip, in one record.
type Stats struct {
	TipHash   types.Hash
	Height    uint64
	UtxoCount uint64
	UtxoTotal uint64 // Σ nominal value of unspent outputs (circulating supply)
	Pool      uint64 // decay pool
	Burned    uint64 // coinbase value left unclaimed
	Issued    uint64 // Σ subsidies of connected blocks above genesis
	TxCount   uint64 // transactions in connected blocks, genesis included
	// Proof of Conduct (a record written before it ends after TxCount: both are zero).
	Agents        uint64 // registered agents
	OpenContracts uint64 // contracts with status open
}

func (s *Stats) encode(w *bincode.Writer) {
	w.Raw(s.TipHash[:])
	for _, v := range []uint64{s.Height, s.UtxoCount, s.UtxoTotal, s.Pool, s.Burned, s.Issued, s.TxCount,
		s.Agents, s.OpenContracts} {
		w.U64(v)
	}
}

func (s *Stats) decode(r *bincode.Reader) {
	r.Raw(s.TipHash[:])
	for _, p := range []*uint64{&s.Height, &s.UtxoCount, &s.UtxoTotal, &s.Pool, &s.Burned, &s.Issued, &s.TxCount} {
		*p = r.U64()
	}
	if r.Remaining() == 0 {
		return // written before Proof of Conduct
	}
	s.Agents = r.U64()
	s.OpenContracts = r.U64()
}

// Block status in the header index.
type Status uint8

// Status values.
const (
	StatusStored        Status = iota // block data stored, not yet connected
	StatusValid                       // connected at least once: fully valid
	StatusInvalid                     // failed validation
	StatusInvalidParent               // descends from an invalid block
)

func (s Status) String() string {
	return [...]string{"stored", "valid", "invalid", "invalid-parent"}[s]
}

// indexRecord is the stored form of a node: fixed header, height, status, arrival sequence.
func indexRecord(n *BlockNode) []byte {
	w := bincode.NewWriter(make([]byte, 0, 104))
	h := n.BlockHeader()
	fixed := h.FixedBytes()
	w.Raw(fixed[:])
	w.U64(n.Height)
	w.U8(uint8(n.status))
	w.U64(n.seq)
	w.U32(n.size)
	w.U32(n.txCount)
	return w.Bytes()
}

// decodeIndexRecord decodes an index record into a node without its parent, and the parent's
// hash.
func decodeIndexRecord(b []byte) (*BlockNode, types.Hash, error) {
	r := bincode.NewReader(b)
	var fixed [types.HeaderSize]byte
	r.Raw(fixed[:])
	h := types.HeaderFromFixed(&fixed)
	n := &BlockNode{}
	n.setHeader(&h)
	n.Height = r.U64()
	n.status = Status(r.U8())
	n.seq = r.U64()
	n.size = r.U32()
	n.txCount = r.U32()
	if err := r.Finish(); err != nil {
		return nil, types.Hash{}, err
	}
	n.Hash = h.Hash()
	return n, h.PrevHash, nil
}

// txLoc is the transaction index value: the block and position of a confirmed transaction.
func txLocBytes(block types.Hash, height uint64, pos uint32) []byte {
	return appendTxLoc(make([]byte, 0, 48), block, height, pos)
}

func appendTxLoc(dst []byte, block types.Hash, height uint64, pos uint32) []byte {
	w := bincode.NewWriter(dst)
	w.Raw(block[:])
	w.U64(height)
	w.U32(pos)
	return w.Bytes()
}

// TxLocation is where a confirmed transaction is.
type TxLocation struct {
	Block    types.Hash
	Height   uint64
	Position uint32
}

func decodeTxLoc(b []byte) (TxLocation, error) {
	r := bincode.NewReader(b)
	var l TxLocation
	r.Raw(l.Block[:])
	l.Height = r.U64()
	l.Position = r.U32()
	return l, r.Finish()
}

// workOf is the proof of a header's target.
func workOf(bits uint32) pow.Uint256 { return pow.Work256(bits) }
