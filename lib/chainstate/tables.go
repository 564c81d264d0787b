package chainstate

import (
	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// The journaled tables (journal.go). Each is a key prefix and a codec; the key layouts are in
// encoding.go.
var (
	// utxoTable maps an outpoint to its entry; its index lists an address's outputs: a range
	// scan of the address's keys, then a read of each output's entry. The index entries are
	// bare (databases written before hold a copy of the entry, which UtxosByAddress still
	// reads): the copy doubled every output's bytes in the database, and with it the
	// compactions of a sync, to save a read per output when a wallet lists an address.
	utxoTable = &tableOf[*consensus.UtxoEntry]{name: "utxo", pfx: pfxUtxo, keyLen: 37,
		encode: encodeEntry, decode: decodeEntry, bareIndex: true,
		index: func(dst []byte, key string, e *consensus.UtxoEntry) []byte {
			dst = append(dst, pfxAddr)
			dst = append(dst, e.PubKeyHash[:]...)
			return append(dst, key[1:37]...)
		}}

	// clusterTable maps a cluster id to its balance (absent when zero); the forest that says
	// which address is in which cluster is in clusters.go.
	clusterTable = &tableOf[uint64]{name: "cluster", pfx: pfxCluster, keyLen: 33,
		encode: func(w *bincode.Writer, v uint64) { w.U64(v) },
		decode: func(r *bincode.Reader) uint64 { return r.U64() }}

	// txTable maps a confirmed transaction to where it is on the main chain.
	txTable = &tableOf[TxLocation]{name: "tx", pfx: pfxTx, keyLen: 33,
		encode: func(w *bincode.Writer, l TxLocation) {
			w.Raw(l.Block[:])
			w.U64(l.Height)
			w.U32(l.Position)
		},
		decode: func(r *bincode.Reader) TxLocation {
			var l TxLocation
			r.Raw(l.Block[:])
			l.Height = r.U64()
			l.Position = r.U32()
			return l
		}}

	// heightTable maps a main-chain height to its block hash.
	heightTable = &tableOf[types.Hash]{name: "height", pfx: pfxHeight, keyLen: 9,
		encode: func(w *bincode.Writer, h types.Hash) { w.Raw(h[:]) },
		decode: func(r *bincode.Reader) types.Hash {
			var h types.Hash
			r.Raw(h[:])
			return h
		}}

	// statsTable holds the one stats record of the tip.
	statsTable = &tableOf[Stats]{name: "stats", pfx: keyStats[0], keyLen: len(keyStats),
		encode: func(w *bincode.Writer, s Stats) { s.encode(w) },
		decode: func(r *bincode.Reader) Stats {
			var s Stats
			s.decode(r)
			return s
		}}

	tables = newRegistry(utxoTable, clusterTable, txTable, heightTable, statsTable,
		agentTable, contractTable, vouchTable, pairTable, reviewsTable,
		clusterNodeTable, clusterNameTable)
)
