package faucet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/storage"
	"github.com/syndtr/goleveldb/leveldb/util"
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
func retrySeconds(d time.Duration) int64 {
	s := int64(math.Ceil(d.Seconds()))
	if s < 1 {
		s = 1
	}
	return s
}

// ClaimRecord is the last paid claim of an address.
type ClaimRecord struct {
	Time   time.Time
	TxID   types.Hash
	Amount uint64
	// Client is the client network the claim was counted against ("" for claims recorded
	// before it was kept, and for claims of no known client).
	Client string
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
		if errors.Is(err, storage.ErrLocked) || errors.Is(err, syscall.EAGAIN) ||
			strings.Contains(err.Error(), "resource temporarily unavailable") {
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

// The client network a claim was counted against is kept beside its record, under a key of
// its own (so that the record's format, which versions before read, is unchanged).
const clientPrefix = "client/"

func clientKey(addr string) []byte { return []byte(clientPrefix + addr) }

// putClaim adds to b the record of c's claim, paid by txid at t.
func putClaim(b *leveldb.Batch, c Claim, t time.Time, txid types.Hash) {
	b.Put(claimKey(c.Address), encodeRecord(ClaimRecord{Time: t, TxID: txid, Amount: c.Amount}))
	if c.Client != "" {
		b.Put(clientKey(c.Address), []byte(c.Client))
	} else {
		b.Delete(clientKey(c.Address))
	}
}

// client is the client network of addr's last claim ("" when not kept).
func (s *ClaimStore) client(addr string) (string, error) {
	v, err := s.db.Get(clientKey(addr), nil)
	if errors.Is(err, leveldb.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read claim client: %w", err)
	}
	return string(v), nil
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
	if err != nil {
		return ClaimRecord{}, false, err
	}
	r.Client, err = s.client(addr)
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

// Since returns the records of the claims paid at t or later (an address's last claim only:
// with a cooldown of the window or longer, that is every claim within it).
func (s *ClaimStore) Since(t time.Time) ([]ClaimRecord, error) {
	it := s.db.NewIterator(util.BytesPrefix([]byte(claimPrefix)), nil)
	defer it.Release()
	var out []ClaimRecord
	for it.Next() {
		addr := string(it.Key()[len(claimPrefix):])
		r, err := decodeRecord(it.Value())
		if err != nil {
			return nil, fmt.Errorf("claim of %q: %w", addr, err)
		}
		if r.Time.Before(t) {
			continue
		}
		if r.Client, err = s.client(addr); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("read claims: %w", err)
	}
	return out, nil
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
