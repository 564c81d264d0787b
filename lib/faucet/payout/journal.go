package payout

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// The payout journal (protocol §14): every signed transaction of the faucet's, with the claims
// it pays, written in the same LevelDB write as those claims' records before it is
// broadcast, and kept until it is mined FinalConfirmations deep. The engine sends every
// journaled payout again until then, so a claim answered 200 is paid whatever crashes; a
// payout whose inputs another mined transaction spent is replaced by a new one in one write
// that also records the old one as conflicted, so it is paid again exactly once.

// Payout is a signed transaction of the faucet's and the claims it pays.
type Payout struct {
	Seq    uint64 // order of writing: a payout's unconfirmed parents have lower numbers
	Tx     *types.Transaction
	TxID   types.Hash
	Claims []Claim
	Time   time.Time // when its claims were first journaled (a repayment keeps it)
	// Replaces is the conflicted payout this one pays again (zero: a first payment).
	Replaces types.Hash
}

// Conflicted is the record of a payout that another mined transaction made invalid: which
// payout paid its claims again, and when.
type Conflicted struct {
	TxID       types.Hash
	ReplacedBy types.Hash
	Time       time.Time
}

const (
	payoutPrefix     = "payout/"
	conflictedPrefix = "conflicted/"
	payoutVersion    = 1
)

func payoutKey(seq uint64) []byte {
	k := make([]byte, len(payoutPrefix)+8)
	copy(k, payoutPrefix)
	binary.BigEndian.PutUint64(k[len(payoutPrefix):], seq)
	return k
}

func encodePayout(p *Payout) []byte {
	tx := p.Tx.Bytes()
	b := make([]byte, 0, 1+8+32+4+len(tx)+4+len(p.Claims)*(2+64+32+8))
	b = append(b, payoutVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(p.Time.UnixNano()))
	b = append(b, p.Replaces[:]...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(tx)))
	b = append(b, tx...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(p.Claims)))
	for _, c := range p.Claims {
		b = binary.BigEndian.AppendUint16(b, uint16(len(c.Address)))
		b = append(b, c.Address...)
		b = append(b, c.PKH[:]...)
		b = binary.BigEndian.AppendUint64(b, c.Amount)
	}
	return b
}

// ErrCorruptRecord is a journal record that does not decode.
var ErrCorruptRecord = errors.New("corrupted payout record")

func decodePayout(seq uint64, b []byte) (*Payout, error) {
	p := &Payout{Seq: seq}
	take := func(n int) []byte {
		if len(b) < n {
			b = nil
			return nil
		}
		v := b[:n]
		b = b[n:]
		return v
	}
	if v := take(1); v == nil || v[0] != payoutVersion {
		return nil, ErrCorruptRecord
	}
	v := take(8 + 32 + 4)
	if v == nil {
		return nil, ErrCorruptRecord
	}
	p.Time = time.Unix(0, int64(binary.BigEndian.Uint64(v)))
	copy(p.Replaces[:], v[8:40])
	raw := take(int(binary.BigEndian.Uint32(v[40:])))
	if raw == nil {
		return nil, ErrCorruptRecord
	}
	tx, err := types.DecodeTransaction(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorruptRecord, err)
	}
	p.Tx, p.TxID = tx, tx.TxID()
	v = take(4)
	if v == nil {
		return nil, ErrCorruptRecord
	}
	n := binary.BigEndian.Uint32(v)
	for i := uint32(0); i < n; i++ {
		l := take(2)
		if l == nil {
			return nil, ErrCorruptRecord
		}
		a := take(int(binary.BigEndian.Uint16(l)))
		rest := take(32 + 8)
		if a == nil || rest == nil {
			return nil, ErrCorruptRecord
		}
		c := Claim{Address: string(a), Amount: binary.BigEndian.Uint64(rest[32:])}
		copy(c.PKH[:], rest[:32])
		p.Claims = append(p.Claims, c)
	}
	if len(b) != 0 {
		return nil, ErrCorruptRecord
	}
	return p, nil
}

// Record writes p, with the record of each of its claims, in one synced write; it sets
// p.Seq and p.Time. It implements Journal.
func (s *ClaimStore) Record(p *Payout) error {
	s.mu.Lock()
	p.Seq = s.seq
	s.seq++
	s.mu.Unlock()
	p.Time = s.now()
	b := new(leveldb.Batch)
	b.Put(payoutKey(p.Seq), encodePayout(p))
	for _, c := range p.Claims {
		putClaim(b, c, p.Time, p.TxID)
	}
	return s.write(b, "journal a payout")
}

// Forget removes a payout the node refused at its first broadcast (so it was never in any
// mempool), with its claims' records: those claims were not paid and were not answered
// 200. It implements Journal.
func (s *ClaimStore) Forget(p *Payout) error {
	b := new(leveldb.Batch)
	b.Delete(payoutKey(p.Seq))
	for _, c := range p.Claims {
		b.Delete(claimKey(c.Address))
		b.Delete(recentKey(p.Time, c.Address))
	}
	return s.write(b, "forget a refused payout")
}

// Replace journals repay, which pays old's claims again, and in the same write removes old
// from the journal, records it as conflicted and points the claims' records at repay (their
// entries by time stay: the time is old's and the clients are as recorded). It sets repay.Seq
// and keeps old's time. It implements Journal.
func (s *ClaimStore) Replace(old, repay *Payout) error {
	s.mu.Lock()
	repay.Seq = s.seq
	s.seq++
	s.mu.Unlock()
	repay.Time, repay.Replaces = old.Time, old.TxID
	now := s.now()
	b := new(leveldb.Batch)
	b.Delete(payoutKey(old.Seq))
	b.Put(append([]byte(conflictedPrefix), old.TxID[:]...),
		binary.BigEndian.AppendUint64(append(repay.TxID[:0:0], repay.TxID[:]...), uint64(now.UnixNano())))
	b.Put(payoutKey(repay.Seq), encodePayout(repay))
	for _, c := range repay.Claims {
		b.Put(claimKey(c.Address), encodeRecord(ClaimRecord{Time: old.Time, TxID: repay.TxID, Amount: c.Amount}))
	}
	return s.write(b, "journal a repayment")
}

// Done removes a payout mined FinalConfirmations deep; its claims' records stay. It
// implements Journal.
func (s *ClaimStore) Done(p *Payout) error {
	b := new(leveldb.Batch)
	b.Delete(payoutKey(p.Seq))
	return s.write(b, "remove a mined payout")
}

// Payouts lists the journaled payouts in the order they were written. It implements
// Journal.
func (s *ClaimStore) Payouts() ([]*Payout, error) {
	it := s.db.NewIterator(util.BytesPrefix([]byte(payoutPrefix)), nil)
	defer it.Release()
	var out []*Payout
	for it.Next() {
		k := it.Key()
		if len(k) != len(payoutPrefix)+8 {
			return nil, ErrCorruptRecord
		}
		p, err := decodePayout(binary.BigEndian.Uint64(k[len(payoutPrefix):]), it.Value())
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, it.Error()
}

// ConflictedPayouts lists the payouts recorded as conflicted, with their replacements.
func (s *ClaimStore) ConflictedPayouts() ([]Conflicted, error) {
	it := s.db.NewIterator(util.BytesPrefix([]byte(conflictedPrefix)), nil)
	defer it.Release()
	var out []Conflicted
	for it.Next() {
		k, v := it.Key()[len(conflictedPrefix):], it.Value()
		if len(k) != 32 || len(v) != 40 {
			return nil, ErrCorruptRecord
		}
		var c Conflicted
		copy(c.TxID[:], k)
		copy(c.ReplacedBy[:], v[:32])
		c.Time = time.Unix(0, int64(binary.BigEndian.Uint64(v[32:])))
		out = append(out, c)
	}
	return out, it.Error()
}

// nextSeq is the sequence number after the last journaled payout.
func nextSeq(db *leveldb.DB) (uint64, error) {
	it := db.NewIterator(util.BytesPrefix([]byte(payoutPrefix)), nil)
	defer it.Release()
	if !it.Last() {
		return 0, it.Error()
	}
	k := it.Key()
	if len(k) != len(payoutPrefix)+8 {
		return 0, ErrCorruptRecord
	}
	return binary.BigEndian.Uint64(k[len(payoutPrefix):]) + 1, nil
}

func (s *ClaimStore) write(b *leveldb.Batch, what string) error {
	if err := s.db.Write(b, &opt.WriteOptions{Sync: true}); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
