package payout

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/util"

	"github.com/cointoolkit/coin/lib/dblock"
	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/types"
)

// ErrRateLimited matches every *RateLimitError.
var ErrRateLimited = errors.New("rate limited")

// ErrDataDirInUse is returned when another process has the data directory open.
var ErrDataDirInUse = errors.New("data directory is in use by another process")

// The codes of 429 answers, one per limit (protocol §14).
const (
	// CodeAddressRateLimited: the address was paid less than the cooldown ago, or has a
	// claim in flight.
	CodeAddressRateLimited = "address_rate_limited"
	// CodeClientRateLimited: the client (its IPv4 address or IPv6 /64) made too many
	// claims this hour, or too many requests this second.
	CodeClientRateLimited = "client_rate_limited"
	// CodeBudgetExhausted: the faucet paid its hourly budget of claims.
	CodeBudgetExhausted = "budget_exhausted"
)

// RateLimitError says which limit refused a request (Code, one of the Code constants) and
// when to try again.
type RateLimitError struct {
	Code       string
	What       string
	RetryAfter time.Duration
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("%s: retry in %d s", e.What, retrySeconds(e.RetryAfter))
}

// Is makes errors.Is(err, ErrRateLimited) true.
func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }

// retrySeconds rounds up to whole seconds, at least 1 (the Retry-After header's unit).
func retrySeconds(d time.Duration) int64 { return api.RetrySeconds(d) }

// ClaimRecord is the last paid claim of an address.
type ClaimRecord struct {
	Time   time.Time
	TxID   types.Hash
	Amount uint64
}

const claimPrefix = "claim/"

// ClaimStore keeps, in LevelDB, the last claim of every address, and enforces the cooldown
// between two claims of one address; it is also the engine's Journal of payouts
// (journal.go). Records are written with the paying transaction before it is broadcast
// (see Engine), so a restart never forgets a claim nor the transaction that pays it. It is
// safe for concurrent use.
type ClaimStore struct {
	db       *leveldb.DB
	cooldown time.Duration
	now      func() time.Time

	mu       sync.Mutex
	inflight map[string]struct{}
	seq      uint64 // the next payout's sequence number (journal.go)
}

// OpenClaimStore opens (creating if needed) the claim database in dir.
func OpenClaimStore(dir string, cooldown time.Duration) (*ClaimStore, error) {
	db, err := leveldb.OpenFile(dir, nil)
	if err != nil {
		if dblock.Held(err) {
			return nil, fmt.Errorf("%w: %s", ErrDataDirInUse, dir)
		}
		return nil, fmt.Errorf("open claim database %s: %w", dir, err)
	}
	seq, err := nextSeq(db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open claim database %s: %w", dir, err)
	}
	return &ClaimStore{db: db, cooldown: cooldown, now: time.Now, inflight: map[string]struct{}{}, seq: seq}, nil
}

// Close closes the database.
func (s *ClaimStore) Close() error { return s.db.Close() }

// DB is the store's database, which the journal of the agent operations' transactions
// shares (lib/faucet's txJournal, under keys of its own).
func (s *ClaimStore) DB() *leveldb.DB { return s.db }

func claimKey(addr string) []byte { return []byte(claimPrefix + addr) }

func encodeRecord(r ClaimRecord) []byte {
	b := make([]byte, 8+32+8)
	binary.BigEndian.PutUint64(b, uint64(r.Time.UnixNano()))
	copy(b[8:40], r.TxID[:])
	binary.BigEndian.PutUint64(b[40:], r.Amount)
	return b
}

func decodeRecord(b []byte) (ClaimRecord, error) {
	if len(b) != 48 {
		return ClaimRecord{}, fmt.Errorf("corrupted claim record of %d bytes", len(b))
	}
	var r ClaimRecord
	r.Time = time.Unix(0, int64(binary.BigEndian.Uint64(b)))
	copy(r.TxID[:], b[8:40])
	r.Amount = binary.BigEndian.Uint64(b[40:])
	return r, nil
}

// Each paid claim is also listed by time, with the client network it was counted against:
// "recent/" ‖ the time (Unix nanoseconds, big-endian) ‖ the address → the client network ("" when
// not known). A starting server reads the last hour of it (Recent) without reading the claim
// record of every address that ever claimed; Recent drops what is older.
const recentPrefix = "recent/"

func recentKey(t time.Time, addr string) []byte {
	k := binary.BigEndian.AppendUint64([]byte(recentPrefix), uint64(t.UnixNano()))
	return append(k, addr...)
}

// putClaim adds to b the record of c's claim, paid by txid at t, and its entry by time.
func putClaim(b *leveldb.Batch, c Claim, t time.Time, txid types.Hash) {
	b.Put(claimKey(c.Address), encodeRecord(ClaimRecord{Time: t, TxID: txid, Amount: c.Amount}))
	b.Put(recentKey(t, c.Address), []byte(c.Client))
}

// RecentClaim is a claim paid within the window Recent reads: when, and the client network
// it was counted against ("" when not known).
type RecentClaim struct {
	Time   time.Time
	Client string
}

// Recent returns the claims paid at t or later, oldest first, and deletes the entries by time
// of those paid before t (their claim records stay).
func (s *ClaimStore) Recent(t time.Time) ([]RecentClaim, error) {
	from := recentKey(t, "")
	it := s.db.NewIterator(util.BytesPrefix([]byte(recentPrefix)), nil)
	defer it.Release()
	old := new(leveldb.Batch)
	var out []RecentClaim
	for ok := it.First(); ok; ok = it.Next() {
		if bytes.Compare(it.Key(), from) < 0 {
			old.Delete(bytes.Clone(it.Key()))
			continue
		}
		if len(it.Key()) < len(recentPrefix)+8 {
			return nil, fmt.Errorf("corrupted claim entry %q", it.Key())
		}
		ns := binary.BigEndian.Uint64(it.Key()[len(recentPrefix):])
		out = append(out, RecentClaim{Time: time.Unix(0, int64(ns)), Client: string(it.Value())})
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("read recent claims: %w", err)
	}
	if old.Len() > 0 {
		if err := s.write(old, "drop old claim entries"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Last returns the last recorded claim of addr.
func (s *ClaimStore) Last(addr string) (ClaimRecord, bool, error) {
	b, err := s.db.Get(claimKey(addr), nil)
	if errors.Is(err, leveldb.ErrNotFound) {
		return ClaimRecord{}, false, nil
	}
	if err != nil {
		return ClaimRecord{}, false, fmt.Errorf("read claim: %w", err)
	}
	r, err := decodeRecord(b)
	return r, err == nil, err
}

// Reserve checks that addr may claim now and marks it in flight, so a concurrent claim of
// the same address is refused too. It returns a *RateLimitError when the address claimed
// less than the cooldown ago or has a claim in flight. Call release when the claim is
// finished, paid or not.
func (s *ClaimStore) Reserve(addr string) (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, busy := s.inflight[addr]; busy {
		return nil, &RateLimitError{Code: CodeAddressRateLimited, What: "a claim for this address is in progress", RetryAfter: time.Second}
	}
	last, ok, err := s.Last(addr)
	if err != nil {
		return nil, err
	}
	if ok {
		if wait := last.Time.Add(s.cooldown).Sub(s.now()); wait > 0 {
			return nil, &RateLimitError{Code: CodeAddressRateLimited, What: fmt.Sprintf("this address was paid less than %s ago", s.cooldown), RetryAfter: wait}
		}
	}
	s.inflight[addr] = struct{}{}
	return func() {
		s.mu.Lock()
		delete(s.inflight, addr)
		s.mu.Unlock()
	}, nil
}

// Count returns the number of addresses with a recorded claim.
func (s *ClaimStore) Count() (int, error) {
	it := s.db.NewIterator(util.BytesPrefix([]byte(claimPrefix)), nil)
	defer it.Release()
	n := 0
	for it.Next() {
		n++
	}
	return n, it.Error()
}
