package types

import (
	"encoding/binary"
	"fmt"

	"github.com/cointoolkit/coin/lib/bincode"
)

// HeaderSize is the length of the fixed header layout that is hashed.
const HeaderSize = 88

// BlockHeader is the protocol §6 header.
type BlockHeader struct {
	Version          uint32
	PrevHash         Hash
	MerkleRoot       Hash
	Timestamp        uint64
	DifficultyTarget uint32
	Nonce            uint64
}

// FixedBytes is the 88-byte layout: version u32 LE ‖ prev_hash ‖ merkle_root ‖ timestamp u64 LE
// ‖ difficulty_target u32 LE ‖ nonce u64 LE.
func (h *BlockHeader) FixedBytes() [HeaderSize]byte {
	var b [HeaderSize]byte
	binary.LittleEndian.PutUint32(b[0:], h.Version)
	copy(b[4:36], h.PrevHash[:])
	copy(b[36:68], h.MerkleRoot[:])
	binary.LittleEndian.PutUint64(b[68:], h.Timestamp)
	binary.LittleEndian.PutUint32(b[76:], h.DifficultyTarget)
	binary.LittleEndian.PutUint64(b[80:], h.Nonce)
	return b
}

// HeaderFromFixed is the inverse of FixedBytes.
func HeaderFromFixed(b *[HeaderSize]byte) BlockHeader {
	var h BlockHeader
	h.Version = binary.LittleEndian.Uint32(b[0:])
	copy(h.PrevHash[:], b[4:36])
	copy(h.MerkleRoot[:], b[36:68])
	h.Timestamp = binary.LittleEndian.Uint64(b[68:])
	h.DifficultyTarget = binary.LittleEndian.Uint32(b[76:])
	h.Nonce = binary.LittleEndian.Uint64(b[80:])
	return h
}

// Hash is SHA-256d of the fixed layout.
func (h *BlockHeader) Hash() Hash {
	b := h.FixedBytes()
	return DoubleSHA256(b[:])
}

// Encode appends the header's bincode (varint integers) to w.
func (h *BlockHeader) Encode(w *bincode.Writer) {
	w.U32(h.Version)
	w.Raw(h.PrevHash[:])
	w.Raw(h.MerkleRoot[:])
	w.U64(h.Timestamp)
	w.U32(h.DifficultyTarget)
	w.U64(h.Nonce)
}

// Decode reads a header's bincode from r.
func (h *BlockHeader) Decode(r *bincode.Reader) {
	h.Version = r.U32()
	r.Raw(h.PrevHash[:])
	r.Raw(h.MerkleRoot[:])
	h.Timestamp = r.U64()
	h.DifficultyTarget = r.U32()
	h.Nonce = r.U64()
}

// Bytes is the header's bincode.
func (h *BlockHeader) Bytes() []byte {
	w := bincode.NewWriter(make([]byte, 0, 96))
	h.Encode(w)
	return w.Bytes()
}

// DecodeHeader decodes exactly one header's bincode.
func DecodeHeader(b []byte) (*BlockHeader, error) {
	r := bincode.NewReader(b)
	h := new(BlockHeader)
	h.Decode(r)
	if err := r.Finish(); err != nil {
		return nil, fmt.Errorf("decode header: %w", err)
	}
	return h, nil
}

// Block is a header and its transactions, the coinbase first.
type Block struct {
	Header       BlockHeader
	Transactions []*Transaction
}

// Hash is the header's hash.
func (b *Block) Hash() Hash { return b.Header.Hash() }

// Encode appends the block's bincode to w.
func (b *Block) Encode(w *bincode.Writer) {
	b.Header.Encode(w)
	w.Varint(uint64(len(b.Transactions)))
	for _, tx := range b.Transactions {
		tx.Encode(w)
	}
}

// Bytes is the block's bincode.
func (b *Block) Bytes() []byte {
	w := bincode.NewWriter(make([]byte, 0, b.SerializeSize()))
	b.Encode(w)
	return w.Bytes()
}

// SerializeSize is the length of the block's bincode.
func (b *Block) SerializeSize() int {
	n := len(b.Header.Bytes()) + bincode.VarintSize(uint64(len(b.Transactions)))
	for _, tx := range b.Transactions {
		n += tx.SerializeSize()
	}
	return n
}

// Decode reads a block from r.
func (b *Block) Decode(r *bincode.Reader) {
	b.Header.Decode(r)
	n := r.Len(minTxSize)
	b.Transactions = make([]*Transaction, 0, n)
	for i := 0; i < n && r.Err() == nil; i++ {
		tx := new(Transaction)
		tx.Decode(r)
		b.Transactions = append(b.Transactions, tx)
	}
}

// DecodeBlock decodes exactly one block.
func DecodeBlock(data []byte) (*Block, error) {
	r := bincode.NewReader(data)
	b := new(Block)
	b.Decode(r)
	if err := r.Finish(); err != nil {
		return nil, fmt.Errorf("decode block: %w", err)
	}
	return b, nil
}

// TxIDs computes the id of every transaction.
func (b *Block) TxIDs() []Hash {
	ids := make([]Hash, len(b.Transactions))
	for i, tx := range b.Transactions {
		ids[i] = tx.TxID()
	}
	return ids
}
