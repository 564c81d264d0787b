package httpapi

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/cointoolkit/coin/lib/faucet/api"
)

// Idempotency keys (docs/faucet.md, "Idempotency"): agents retry on timeouts, and a retried
// send or agent operation must not build a second transaction. A POST to an endpoint that
// builds a transaction may carry an Idempotency-Key header; the first request with a key
// runs, and its answer (status, Content-Type and body) is kept for 24 hours; a retry with
// the same key and the same request gets that answer again (with Idempotent-Replayed:
// true) without running. The same key on a different request (another endpoint or body) is
// 422 idempotency_key_reused. A retry arriving while the first still runs waits for it.
// Keys are per client (the network clientNet names), so one client cannot replay or block
// another's. An answer that is 5xx or 429 is not kept: the request built nothing the
// client has, and a retry runs again. At most idemMaxKeys keys and idemMaxBytes of answers are
// kept; the oldest go first.

const (
	IdempotencyHeader = "Idempotency-Key"
	idemReplayHeader  = "Idempotent-Replayed"
	idemMaxKeys       = 10000
	idemTTL           = 24 * time.Hour
	idemMaxKeyLen     = 255
	// idemMaxBody bounds a kept answer; a larger one is not kept (the API's answers are
	// a few kilobytes). idemMaxBytes bounds them all: past it the oldest keys go.
	idemMaxBody  = 64 << 10
	idemMaxBytes = 32 << 20
)

type idemEntry struct {
	key     string
	request [32]byte // SHA-256 of method, path and body
	created time.Time
	done    chan struct{} // closed when the answer is in (or the entry is dropped)
	kept    bool
	status  int
	ctype   string
	body    []byte
	elem    *list.Element
}

// idemStore is the bounded store of idempotency keys, oldest first in order.
type idemStore struct {
	mu    sync.Mutex
	max   int
	maxB  int // bytes of kept answers
	bytes int
	ttl   time.Duration
	now   func() time.Time
	byKey map[string]*idemEntry
	order *list.List
}

func newIdemStore(max, maxBytes int, ttl time.Duration) *idemStore {
	return &idemStore{max: max, maxB: maxBytes, ttl: ttl, now: time.Now, byKey: map[string]*idemEntry{}, order: list.New()}
}

// begin looks key up for a request with digest req. It returns the entry and whether the
// caller owns it (runs the request and then calls finish); otherwise the entry is another
// request's, to wait for (its done channel) and replay or refuse.
func (st *idemStore) begin(key string, req [32]byte) (*idemEntry, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	now := st.now()
	for f := st.order.Front(); f != nil && now.Sub(f.Value.(*idemEntry).created) >= st.ttl; f = st.order.Front() {
		st.drop(f.Value.(*idemEntry))
	}
	if e, ok := st.byKey[key]; ok {
		return e, false
	}
	for st.order.Len() >= st.max {
		st.drop(st.order.Front().Value.(*idemEntry))
	}
	e := &idemEntry{key: key, request: req, created: now, done: make(chan struct{})}
	e.elem = st.order.PushBack(e)
	st.byKey[key] = e
	return e, true
}

func (st *idemStore) drop(e *idemEntry) {
	st.order.Remove(e.elem)
	st.bytes -= len(e.body)
	if st.byKey[e.key] == e {
		delete(st.byKey, e.key)
	}
}

// finish records the answer of an owned entry, or forgets the key when the answer is not
// to be kept, and wakes the waiters.
func (st *idemStore) finish(e *idemEntry, status int, ctype string, body []byte, keep bool) {
	st.mu.Lock()
	if keep && st.byKey[e.key] == e {
		e.kept, e.status, e.ctype, e.body = true, status, ctype, body
		st.bytes += len(body)
		for st.bytes > st.maxB && st.order.Front() != nil {
			st.drop(st.order.Front().Value.(*idemEntry))
		}
	} else if st.byKey[e.key] == e {
		st.drop(e)
	}
	st.mu.Unlock()
	close(e.done)
}

// len is the number of keys kept.
func (st *idemStore) len() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.order.Len()
}

// idemRecorder passes an answer through and keeps a copy of it.
type idemRecorder struct {
	http.ResponseWriter
	status   int
	body     bytes.Buffer
	overflow bool
}

func (w *idemRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *idemRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if !w.overflow {
		if w.body.Len()+len(b) > idemMaxBody {
			w.overflow = true
		} else {
			w.body.Write(b)
		}
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *idemRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// idempotent runs handle for a request that may carry an Idempotency-Key, from client
// (clientNet), as the comment at the top of this file says.
func (s *Server) idempotent(w http.ResponseWriter, r *http.Request, client string, handle func(http.ResponseWriter, *http.Request)) {
	key := r.Header.Get(IdempotencyHeader)
	if key == "" || s.idem == nil {
		handle(w, r)
		return
	}
	if len(key) > idemMaxKeyLen || !printableASCII(key) {
		s.writeError(w, apiErr(api.KindInvalid, "invalid_idempotency_key",
			"the Idempotency-Key header must be 1 to %d printable ASCII characters", idemMaxKeyLen))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		// The handler meets the same error (a body over the limit) and answers it.
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		handle(w, r)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	h := sha256.New()
	h.Write([]byte(r.Method + " " + r.URL.Path + "\x00"))
	h.Write(body)
	var digest [32]byte
	h.Sum(digest[:0])

	for {
		e, owner := s.idem.begin(client+"\x00"+key, digest)
		if owner {
			rec := &idemRecorder{ResponseWriter: w}
			kept := false
			defer func() {
				if !kept { // the handler panicked: forget the key, wake the waiters
					s.idem.finish(e, 0, "", nil, false)
				}
			}()
			handle(rec, r)
			kept = true
			st := rec.status
			if st == 0 {
				st = http.StatusOK
			}
			keep := st < 500 && st != http.StatusTooManyRequests && !rec.overflow
			s.idem.finish(e, st, w.Header().Get("Content-Type"), rec.body.Bytes(), keep)
			return
		}
		if e.request != digest {
			s.writeError(w, apiErr(api.KindConflict, "idempotency_key_reused",
				"this Idempotency-Key was used for a different request; use a new key for a new request"))
			return
		}
		select {
		case <-e.done:
		case <-r.Context().Done():
			return
		}
		if !e.kept {
			continue // the first answer was not kept: this request runs (or waits on another)
		}
		if e.ctype != "" {
			w.Header().Set("Content-Type", e.ctype)
		}
		w.Header().Set(idemReplayHeader, "true")
		w.WriteHeader(e.status)
		_, _ = w.Write(e.body)
		return
	}
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
