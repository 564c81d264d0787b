package consensus

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cointoolkit/coin/lib/types"
)

// SigCache remembers transactions whose every input signature verified, keyed by the hash of
// the transaction's full bincode (witness included), so a transaction checked when it entered
// the mempool, or ahead of time while an earlier block connected, is not verified again when
// its block connects. A cache belongs to one network (the magic is part of every signed
// message). It is bounded: when full, an arbitrary entry makes room. Only positive results are
// kept, so a cache can make validation faster but never more permissive: the pubkey-hash,
// value and every other rule are still checked per block.
type SigCache struct {
	mu  sync.RWMutex
	m   map[types.Hash]struct{}
	max int

	queueOnce sync.Once
	queue     *PreverifyQueue
}

// NewSigCache returns a cache of at most max transactions (100,000 if max ≤ 0, about 8 MB).
func NewSigCache(max int) *SigCache {
	if max <= 0 {
		max = 100_000
	}
	return &SigCache{m: make(map[types.Hash]struct{}, min(max, 4096)), max: max}
}

// SigCacheKey identifies a transaction with its witness.
func SigCacheKey(tx *types.Transaction) types.Hash { return tx.WitnessHash() }

// Has reports whether key was verified.
func (c *SigCache) Has(key types.Hash) bool {
	if c == nil {
		return false
	}
	c.mu.RLock()
	_, ok := c.m[key]
	c.mu.RUnlock()
	return ok
}

// Take reports whether key was verified and forgets it: a block's connect takes its
// transactions' entries, which it will not need again (as Bitcoin Core's signature cache
// erases the entries a block's validation hits), so that the cache holds what is still to
// come (mempool transactions, blocks verified ahead of their connect) rather than what
// connected.
func (c *SigCache) Take(key types.Hash) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	_, ok := c.m[key]
	if ok {
		delete(c.m, key)
	}
	c.mu.Unlock()
	return ok
}

// room reports whether n more entries fit without evicting any.
func (c *SigCache) room(n int) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)+n <= c.max
}

// Add records key as verified.
func (c *SigCache) Add(key types.Hash) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.addLocked(key)
	c.mu.Unlock()
}

// addLocked records key, making room when the cache is full; the caller holds c.mu.
func (c *SigCache) addLocked(key types.Hash) {
	if len(c.m) >= c.max {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[key] = struct{}{}
}

// Len is the number of cached transactions.
func (c *SigCache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

// PreverifyTransactions checks the signatures of transactions (txids[i] the id of txs[i], or
// nil to compute them) ahead of their acceptance, for a relay burst: those the cache does not
// know are verified together in batches on up to workers goroutines (0: every CPU) and the
// ones that verify are recorded. It judges nothing: a transaction that fails is simply not
// cached, and its acceptance reports the failure. It returns how many were verified here.
// Blocks go through the cache's PreverifyQueue instead.
func (c *SigCache) PreverifyTransactions(txs []*types.Transaction, txids []types.Hash, magic [4]byte, workers int) int {
	if c == nil || len(txs) == 0 {
		return 0
	}
	todo := make([]*types.Transaction, 0, len(txs))
	ids := make([]types.Hash, 0, len(txs))
	keys := make([]types.Hash, 0, len(txs))
	for i, tx := range txs {
		key := SigCacheKey(tx)
		if c.Has(key) {
			continue
		}
		todo = append(todo, tx)
		keys = append(keys, key)
		if txids != nil {
			ids = append(ids, txids[i])
		} else {
			ids = append(ids, tx.TxID())
		}
	}
	errs := VerifyTransactions(todo, ids, magic, workers)
	for i, key := range keys {
		if errs == nil || errs[i] == nil {
			c.Add(key)
		}
	}
	return len(todo)
}

// PreverifyQueue verifies the signatures of queued blocks ahead of their connect, for the
// cache: the blocks' signatures are cut into batches of up to BatchSize, and every worker
// (Step) takes the oldest batch not yet taken, so all cores work on the oldest block first
// and it is done as early as it can be (instead of one block per core, each taking as long as
// its signatures on one core). A block's transactions whose signatures all verify are
// recorded in the cache and then the block's done channel is closed. Like
// PreverifyTransactions it judges nothing: a transaction with an invalid signature is simply
// not cached, and its block's connect verifies it again and reports the failure.
type PreverifyQueue struct {
	cache *SigCache
	magic [4]byte
	mu    sync.Mutex
	jobs  []*preverifyJob // oldest first; a job leaves once its last batch is taken
	wake  chan struct{}   // one token while jobs is not empty
	// pending counts the input signatures of queued blocks not verified yet (those the
	// cache knows included until their block is prepared).
	pending atomic.Int64
}

type preverifyJob struct {
	txs      []*types.Transaction // non-coinbase transactions
	prepared bool                 // checks and batches are set (preparing: taken, not yet)
	taking   bool                 // a worker is preparing it
	keys     []types.Hash         // cache keys of the transactions to verify
	checks   []SigCheck
	owner    []int32 // owner[i]: index in keys of checks[i]'s transaction
	bad      []bool  // per key: some signature is invalid
	size     int     // batch size
	next     int     // start of the next batch to take
	left     int     // batches not yet finished
	inputs   int     // input signatures counted in pending
	urgent   bool    // its connect waits for it (Urge): started even without room
	done     chan struct{}
}

// newPreverifyQueue returns a queue that records into c the transactions of network magic whose
// signatures verify (its Queue is the one to use for a cache).
func newPreverifyQueue(c *SigCache, magic [4]byte) *PreverifyQueue {
	return &PreverifyQueue{cache: c, magic: magic, wake: make(chan struct{}, 1)}
}

// Add queues a block's signatures; done is closed once they were checked (at once when the
// block has no transaction but the coinbase). Add only appends the block: the work, hashing
// included, is Step's.
func (q *PreverifyQueue) Add(b *types.Block, done chan struct{}) {
	if len(b.Transactions) < 2 {
		close(done)
		return
	}
	job := &preverifyJob{txs: b.Transactions[1:], done: done}
	for _, tx := range job.txs {
		job.inputs += len(tx.Inputs)
	}
	q.pending.Add(int64(job.inputs))
	q.mu.Lock()
	q.jobs = append(q.jobs, job)
	q.mu.Unlock()
	q.signal()
}

// Urge marks the queued block whose channel is done as awaited by its connect: it is started
// even when the cache has no room for its transactions (see Step).
func (q *PreverifyQueue) Urge(done chan struct{}) {
	q.mu.Lock()
	for _, j := range q.jobs {
		if j.done == done {
			j.urgent = true
		}
	}
	q.mu.Unlock()
	q.signal()
}

func (q *PreverifyQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Wake receives a token when there may be work for another goroutine (Step).
func (q *PreverifyQueue) Wake() <-chan struct{} { return q.wake }

// Pending is the number of queued signatures not verified yet.
func (q *PreverifyQueue) Pending() int { return int(q.pending.Load()) }

// Len is the number of queued blocks with batches not yet taken.
func (q *PreverifyQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.jobs)
}

// Queue is the cache's pre-verification queue for network magic (created on first use; a
// cache belongs to one network), which any number of goroutines work on with Step.
func (c *SigCache) Queue(magic [4]byte) *PreverifyQueue {
	c.queueOnce.Do(func() { c.queue = newPreverifyQueue(c, magic) })
	return c.queue
}

// Step does one piece of the queue's work on the calling goroutine — prepares the oldest
// block not yet prepared, or verifies the oldest batch not yet taken (a millisecond or two of
// one core) — and reports whether there was any. Goroutines run it one per core.
func (q *PreverifyQueue) Step() bool {
	q.mu.Lock()
	var job *preverifyJob
	for _, j := range q.jobs {
		if !j.prepared && !j.taking {
			// A block is started only when its transactions fit in the cache (verified
			// further ahead, they would evict, at random, the entries of blocks still to
			// connect, whose connect would then verify them again), or when its connect
			// waits for it (Urge), so that a full cache never stalls the chain.
			if !j.urgent && !q.cache.room(len(j.txs)) {
				continue
			}
			j.taking = true
			q.mu.Unlock()
			q.prepare(j)
			return true
		}
		if j.prepared && j.next < len(j.checks) {
			job = j
			break
		}
	}
	if job == nil {
		q.mu.Unlock()
		return false
	}
	start := job.next
	end := min(start+job.size, len(job.checks))
	job.next = end
	if end == len(job.checks) {
		q.removeLocked(job)
	}
	more := len(q.jobs) > 0
	q.mu.Unlock()
	if more {
		q.signal() // another worker may take the next batch
	}
	var bad []int
	verifyOne(job.checks[start:end], true, func(i int, _ error) { bad = append(bad, start+i) })
	q.pending.Add(int64(start - end))
	q.finish(job, bad)
	return true
}

// removeLocked drops a job whose batches are all taken from the queue.
func (q *PreverifyQueue) removeLocked(job *preverifyJob) {
	for i, j := range q.jobs {
		if j == job {
			q.jobs = slices.Delete(q.jobs, i, i+1) // (clears the freed slot)
			return
		}
	}
}

// prepare computes a job's cache keys and signature checks (the transactions the cache does not
// know) and cuts them into batches.
func (q *PreverifyQueue) prepare(job *preverifyJob) {
	checks := make([]SigCheck, 0, job.inputs)
	owner := make([]int32, 0, job.inputs)
	keys := make([]types.Hash, 0, len(job.txs))
	for _, tx := range job.txs {
		key := SigCacheKey(tx)
		if q.cache.Has(key) {
			continue
		}
		checks = SigChecks(tx, tx.TxID(), q.magic, checks)
		for range tx.Inputs {
			owner = append(owner, int32(len(keys)))
		}
		keys = append(keys, key)
	}
	q.pending.Add(int64(len(checks) - job.inputs)) // the cached ones are done
	q.mu.Lock()
	job.prepared, job.keys, job.checks, job.owner = true, keys, checks, owner
	job.bad = make([]bool, len(keys))
	if len(checks) == 0 {
		q.removeLocked(job)
		q.mu.Unlock()
		close(job.done)
		return
	}
	job.size = batchSize(len(checks), 1) // batches of at most BatchSize, of nearly equal size
	job.left = (len(checks) + job.size - 1) / job.size
	more := len(q.jobs) > 0
	q.mu.Unlock()
	if more {
		q.signal()
	}
}

// finish records a verified batch (bad: indexes of its invalid signatures in job.checks); the
// job's last batch records the transactions that verified and closes done.
func (q *PreverifyQueue) finish(job *preverifyJob, bad []int) {
	q.mu.Lock()
	for _, i := range bad {
		job.bad[job.owner[i]] = true
	}
	job.left--
	last := job.left == 0
	q.mu.Unlock()
	if !last {
		return
	}
	q.cache.addMany(job.keys, job.bad)
	job.txs, job.checks, job.owner, job.keys = nil, nil, nil, nil
	close(job.done)
}

// addMany records keys as verified, leaving out keys[i] when skip[i] (skip may be nil), under
// one lock.
func (c *SigCache) addMany(keys []types.Hash, skip []bool) {
	if c == nil || len(keys) == 0 {
		return
	}
	c.mu.Lock()
	for i, key := range keys {
		if skip == nil || !skip[i] {
			c.addLocked(key)
		}
	}
	c.mu.Unlock()
}
