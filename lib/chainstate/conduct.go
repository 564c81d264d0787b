package chainstate

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb/util"
	"lukechampine.com/blake3"
)

// Proof of Conduct's state (protocol §9.1): five journaled tables. Connecting a block stages
// the records its agent transactions changed (consensus.BlockEffect.Conduct); the journal
// gives undo data, crash safety and reorgs, as for every other table.
const (
	pfxAgent    = 'g' // agent address → AgentRecord
	pfxDir      = 'd' // directory index: 'd' ‖ (1000 − score) u16 BE ‖ address → AgentRecord
	pfxContract = 'k' // contract id → ContractRecord
	pfxVouch    = 'v' // voucher ‖ target → present
	pfxPair     = 'f' // lower ‖ higher address → fulfilled contracts between them
	pfxReviews  = 'w' // reviewer ‖ subject → reviews given
)

// conductPrefixes are the tables the conduct hash covers, in the order it reads them.
var conductPrefixes = []byte{pfxAgent, pfxContract, pfxVouch, pfxPair, pfxReviews}

var (
	// agentTable's index orders agents by score (highest first), then address: a page of the
	// directory is one short range scan, however many agents there are.
	agentTable = &tableOf[*consensus.AgentRecord]{name: "agent", pfx: pfxAgent, keyLen: 33,
		encode: encodeAgent, decode: decodeAgent,
		index: func(dst []byte, key string, a *consensus.AgentRecord) []byte {
			return dirKeyTo(dst, a.Score, key[1:33])
		}}
	contractTable = &tableOf[*consensus.ContractRecord]{name: "contract", pfx: pfxContract, keyLen: 33,
		encode: encodeContract, decode: decodeContract}
	vouchTable = &tableOf[bool]{name: "vouch", pfx: pfxVouch, keyLen: 65,
		encode: func(w *bincode.Writer, _ bool) { w.U8(1) },
		decode: func(r *bincode.Reader) bool {
			if r.U8() != 1 {
				r.Fail(fmt.Errorf("vouch record is not 1"))
			}
			return true
		}}
	pairTable = &tableOf[uint64]{name: "pair", pfx: pfxPair, keyLen: 65,
		encode: func(w *bincode.Writer, v uint64) { w.U64(v) },
		decode: func(r *bincode.Reader) uint64 { return r.U64() }}
	reviewsTable = &tableOf[uint64]{name: "reviews", pfx: pfxReviews, keyLen: 65,
		encode: func(w *bincode.Writer, v uint64) { w.U64(v) },
		decode: func(r *bincode.Reader) uint64 { return r.U64() }}
)

func dirKeyTo(dst []byte, score uint32, pkh string) []byte {
	if score > consensus.MaxScore {
		score = consensus.MaxScore
	}
	dst = append(dst, pfxDir)
	dst = binary.BigEndian.AppendUint16(dst, uint16(consensus.MaxScore-score))
	return append(dst, pkh...)
}

func pairKey(p byte, hp consensus.HashPair) []byte {
	return pairKeyTo(new([65]byte), p, hp)
}

// pairKeyTo writes the key of hp in table p into k.
func pairKeyTo(k *[65]byte, p byte, hp consensus.HashPair) []byte {
	k[0] = p
	copy(k[1:33], hp[0][:])
	copy(k[33:], hp[1][:])
	return k[:]
}

func encodeAgent(w *bincode.Writer, a *consensus.AgentRecord) {
	w.U32(a.Score)
	for _, v := range []uint64{a.ContractsCompleted, a.ContractsFailed, a.VouchesReceived, a.VouchesGiven,
		a.ReviewsReceived, a.ReviewScoreSum, a.RegisteredHeight, a.RegisteredTime} {
		w.U64(v)
	}
	w.Raw(a.Stake.TxID[:])
	w.U32(a.Stake.Index)
}

func decodeAgent(r *bincode.Reader) *consensus.AgentRecord {
	a := new(consensus.AgentRecord)
	a.Score = r.U32()
	for _, p := range []*uint64{&a.ContractsCompleted, &a.ContractsFailed, &a.VouchesReceived, &a.VouchesGiven,
		&a.ReviewsReceived, &a.ReviewScoreSum, &a.RegisteredHeight, &a.RegisteredTime} {
		*p = r.U64()
	}
	r.Raw(a.Stake.TxID[:])
	a.Stake.Index = r.U32()
	return a
}

func encodeContract(w *bincode.Writer, c *consensus.ContractRecord) {
	w.Raw(c.ID[:])
	w.Raw(c.Initiator[:])
	w.Raw(c.Counterparty[:])
	w.U64(c.Value)
	w.U64(c.CreatedHeight)
	w.U64(c.ExpiresAt)
	w.U8(uint8(c.Status))
	w.Raw(c.ClosedBy[:])
	w.U8(c.Reviewed)
}

func decodeContract(r *bincode.Reader) *consensus.ContractRecord {
	c := new(consensus.ContractRecord)
	r.Raw(c.ID[:])
	r.Raw(c.Initiator[:])
	r.Raw(c.Counterparty[:])
	c.Value = r.U64()
	c.CreatedHeight = r.U64()
	c.ExpiresAt = r.U64()
	c.Status = consensus.ContractStatus(r.U8())
	if c.Status > consensus.ContractExpired {
		r.Fail(fmt.Errorf("contract status %d", c.Status))
	}
	r.Raw(c.ClosedBy[:])
	c.Reviewed = r.U8()
	return c
}

// conductKeyCounts is the number of 65-byte keys and of 33-byte keys stageConduct writes for ch.
func conductKeyCounts(ch *consensus.ConductChanges) (pairs, hashes int) {
	if ch == nil {
		return 0, 0
	}
	return len(ch.Vouches) + len(ch.Pairs) + len(ch.Reviews), len(ch.Agents) + len(ch.Contracts)
}

// stageConduct stages a block's conduct changes, in key order, and counts the agents and
// open contracts it adds into next.
func (c *Chain) stageConduct(j *blockJournal, ch *consensus.ConductChanges, next *Stats) error {
	if ch.Empty() {
		return nil
	}
	var k keyBuf
	var pk [65]byte
	// The records are the block's own (CheckConduct copies what it changes), so the journal
	// takes them as they are.
	for _, pkh := range sortedHashes(ch.Agents) {
		s, err := c.slotLocked(k.of(pfxAgent, pkh))
		if err != nil {
			return err
		}
		if s.val == nil {
			next.Agents++
		}
		j.put(k[:], ch.Agents[pkh])
	}
	for _, id := range sortedHashes(ch.Contracts) {
		s, err := c.slotLocked(k.of(pfxContract, id))
		if err != nil {
			return err
		}
		rec := ch.Contracts[id]
		wasOpen := s.val != nil && s.val.(*consensus.ContractRecord).Status == consensus.ContractOpen
		isOpen := rec.Status == consensus.ContractOpen
		switch {
		case isOpen && !wasOpen:
			next.OpenContracts++
		case wasOpen && !isOpen:
			next.OpenContracts--
		}
		j.put(k[:], rec)
	}
	for _, hp := range sortedPairs(ch.Vouches) {
		j.put(pairKeyTo(&pk, pfxVouch, hp), true)
	}
	for _, hp := range sortedPairs(ch.Pairs) {
		j.put(pairKeyTo(&pk, pfxPair, hp), ch.Pairs[hp])
	}
	for _, hp := range sortedPairs(ch.Reviews) {
		j.put(pairKeyTo(&pk, pfxReviews, hp), ch.Reviews[hp])
	}
	return nil
}

func sortedHashes[V any](m map[types.Hash]V) []types.Hash {
	ks := make([]types.Hash, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b types.Hash) int { return bytes.Compare(a[:], b[:]) })
	return ks
}

func sortedPairs[V any](m map[consensus.HashPair]V) []consensus.HashPair {
	ks := make([]consensus.HashPair, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b consensus.HashPair) int {
		if c := bytes.Compare(a[0][:], b[0][:]); c != 0 {
			return c
		}
		return bytes.Compare(a[1][:], b[1][:])
	})
	return ks
}

// conductReader answers consensus.ConductView through get: the write cache's slot reads
// while a block connects (connectView), a locked read of the cache and database otherwise.
type conductReader struct {
	get  func(key []byte) (any, error)
	copy bool // hand out copies (the Chain's readers run outside the lock)
	// keys, when set, is scratch space for the keys (a reader used by one goroutine: the
	// connecting block's); otherwise each lookup makes its own.
	keys *conductKeys
}

type conductKeys struct {
	hash keyBuf
	pair [65]byte
}

func (r conductReader) hashKey(p byte, h types.Hash) []byte {
	if r.keys == nil {
		return hashKey(p, h)
	}
	return r.keys.hash.of(p, h)
}

func (r conductReader) pairKey(p byte, hp consensus.HashPair) []byte {
	if r.keys == nil {
		return pairKey(p, hp)
	}
	return pairKeyTo(&r.keys.pair, p, hp)
}

func (r conductReader) Agent(pkh types.Hash) (*consensus.AgentRecord, bool, error) {
	v, err := r.get(r.hashKey(pfxAgent, pkh))
	if err != nil || v == nil {
		return nil, false, err
	}
	a := v.(*consensus.AgentRecord)
	if r.copy {
		cp := *a
		a = &cp
	}
	return a, true, nil
}

func (r conductReader) Contract(id types.Hash) (*consensus.ContractRecord, bool, error) {
	v, err := r.get(r.hashKey(pfxContract, id))
	if err != nil || v == nil {
		return nil, false, err
	}
	k := v.(*consensus.ContractRecord)
	if r.copy {
		cp := *k
		k = &cp
	}
	return k, true, nil
}

func (r conductReader) Vouched(voucher, target types.Hash) (bool, error) {
	v, err := r.get(r.pairKey(pfxVouch, consensus.HashPair{voucher, target}))
	return v != nil, err
}

func (r conductReader) FulfilledBetween(a, b types.Hash) (uint64, error) {
	return r.count(r.pairKey(pfxPair, consensus.PairOf(a, b)))
}

func (r conductReader) ReviewsOf(reviewer, subject types.Hash) (uint64, error) {
	return r.count(r.pairKey(pfxReviews, consensus.HashPair{reviewer, subject}))
}

func (r conductReader) count(k []byte) (uint64, error) {
	v, err := r.get(k)
	if err != nil || v == nil {
		return 0, err
	}
	return v.(uint64), nil
}

// Conduct is the confirmed agent and contract state at the tip. Each lookup takes the read
// lock and returns a copy.
func (c *Chain) Conduct() consensus.ConductView {
	return conductReader{copy: true, get: func(k []byte) (any, error) {
		c.mu.RLock()
		defer c.mu.RUnlock()
		return c.getLocked(k)
	}}
}

// Conduct of the connecting block reuses one reader with scratch keys.
func (v connectView) Conduct() consensus.ConductView { return v.m.conduct }

// DirectoryEntry is an agent as the directory index lists it.
type DirectoryEntry struct {
	Address types.Hash
	Record  *consensus.AgentRecord
}

// Directory visits the confirmed agents in directory order (score, highest first, then
// address) until visit returns false. It reads the score index: the cost is that of the
// entries visited, not of the number of agents.
func (c *Chain) Directory(visit func(DirectoryEntry) bool) error {
	unlock, err := c.rlockFlushed(context.Background())
	if err != nil {
		return err
	}
	defer unlock()
	it := c.db.NewIterator(util.BytesPrefix([]byte{pfxDir}), nil)
	defer it.Release()
	for it.Next() {
		k := it.Key()
		if len(k) != 35 {
			return storageErr("directory index", fmt.Errorf("key of %d bytes", len(k)))
		}
		var e DirectoryEntry
		copy(e.Address[:], k[3:])
		r := bincode.NewReader(it.Value())
		e.Record = decodeAgent(r)
		if err := r.Finish(); err != nil {
			return storageErr("decode directory index", err)
		}
		if !visit(e) {
			break
		}
	}
	return storageErr("iterate directory index", it.Error())
}

// ConductInfo summarises the confirmed conduct state with a hash over all of it.
type ConductInfo struct {
	Height        uint64
	TipHash       types.Hash
	Agents        uint64
	OpenContracts uint64
	Hash          types.Hash
}

// ConductInfo walks every conduct table from a consistent snapshot: two nodes with the same
// agents, contracts, vouches and repetition counts have the same hash.
func (c *Chain) ConductInfo(ctx context.Context) (ConductInfo, error) {
	unlock, err := c.rlockFlushed(ctx)
	if err != nil {
		return ConductInfo{}, err
	}
	snap, err := c.db.GetSnapshot()
	s := c.stats
	unlock()
	if err != nil {
		return ConductInfo{}, storageErr("snapshot", err)
	}
	defer snap.Release()
	info := ConductInfo{Height: s.Height, TipHash: s.TipHash, Agents: s.Agents, OpenContracts: s.OpenContracts}
	h := blake3.New(32, nil)
	n := 0
	for _, p := range conductPrefixes {
		it := snap.NewIterator(util.BytesPrefix([]byte{p}), nil)
		for it.Next() {
			if n++; n%4096 == 0 && ctx.Err() != nil {
				it.Release()
				return ConductInfo{}, ctx.Err()
			}
			h.Write(it.Key())
			h.Write(it.Value())
		}
		it.Release()
		if err := it.Error(); err != nil {
			return ConductInfo{}, storageErr("iterate conduct state", err)
		}
	}
	h.Sum(info.Hash[:0])
	return info, nil
}
