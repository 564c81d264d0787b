package rpcserver

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// The node's notification stream (rpcapi.StreamPath, docs/operations.md "Notifications"): the
// Notifier numbers the events of the chain and the mempool, keeps the latest (the backlog) for
// clients that resume, and hands each to the streams that follow, which write them as JSON
// lines. Publishing never waits for a reader: a stream whose buffer is full is dropped and
// its client resumes from the backlog.

// Defaults of NotifierConfig.
const (
	DefaultStreamBacklog   = 10_000
	DefaultMaxStreams      = 100
	DefaultStreamBuffer    = 1_024
	DefaultStreamHeartbeat = 15 * time.Second
	// streamWriteTimeout is how long one write to a stream may take before the client is
	// taken for gone.
	streamWriteTimeout = 30 * time.Second
)

// NotifierConfig bounds a Notifier. Zero values are the defaults.
type NotifierConfig struct {
	// Backlog is how many of the latest events are kept for clients that resume.
	Backlog int
	// MaxStreams bounds the streams open at once; more are refused with 503.
	MaxStreams int
	// Buffer is how many events a stream may fall behind before it is dropped.
	Buffer int
	// Heartbeat is how often an idle stream gets a ping line.
	Heartbeat time.Duration
}

// Notifier numbers and distributes the node's events. It is safe for concurrent use.
type Notifier struct {
	cfg    NotifierConfig
	stream string // this run's id, so that a client notices a restart

	mu     sync.Mutex
	seq    uint64
	ring   []entry // the backlog, oldest at head
	head   int
	subs   map[*subscriber]struct{}
	block  chan struct{} // closed at the next block event (BlockEvent)
	closed bool

	waiters atomic.Int64 // calls waiting for a block (wait.go)
}

// entry is a published event with its line, encoded once for every stream.
type entry struct {
	seq  uint64
	line []byte
}

type subscriber struct {
	ch      chan entry
	dropped chan struct{} // closed when the buffer overflowed
}

// NewNotifier returns an empty Notifier.
func NewNotifier(cfg NotifierConfig) *Notifier {
	if cfg.Backlog <= 0 {
		cfg.Backlog = DefaultStreamBacklog
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = DefaultMaxStreams
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = DefaultStreamBuffer
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultStreamHeartbeat
	}
	var id [8]byte
	rand.Read(id[:])
	return &Notifier{cfg: cfg, stream: hex.EncodeToString(id[:]), ring: make([]entry, 0, cfg.Backlog),
		subs: map[*subscriber]struct{}{}, block: make(chan struct{})}
}

// BlockConnected publishes a block joining the main chain.
func (n *Notifier) BlockConnected(hash types.Hash, height uint64) {
	n.publish(rpcapi.Event{Type: rpcapi.EventBlockConnected, Hash: hash.String(), Height: height})
}

// BlockDisconnected publishes a block leaving the main chain.
func (n *Notifier) BlockDisconnected(hash types.Hash, height uint64) {
	n.publish(rpcapi.Event{Type: rpcapi.EventBlockDisconnected, Hash: hash.String(), Height: height})
}

// MempoolChanged publishes a mempool change (mempool.Options.OnChange).
func (n *Notifier) MempoolChanged(c mempool.Change) {
	if c.Added {
		n.publish(rpcapi.Event{Type: rpcapi.EventTxAdded, TxID: c.TxID.String()})
		return
	}
	n.publish(rpcapi.Event{Type: rpcapi.EventTxRemoved, TxID: c.TxID.String(), Reason: string(c.Reason)})
}

// BlockEvent is a channel closed at the next block connected or disconnected (waitfornewblock).
func (n *Notifier) BlockEvent() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.block
}

// Waiters is the number of waitfornewblock and waitforblockheight calls waiting.
func (n *Notifier) Waiters() int { return int(n.waiters.Load()) }

// Sequence is the number of the last event published.
func (n *Notifier) Sequence() uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.seq
}

func (n *Notifier) publish(ev rpcapi.Event) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seq++
	ev.Sequence = n.seq
	en := entry{seq: n.seq, line: appendEvent(nil, ev)}
	if len(n.ring) < cap(n.ring) {
		n.ring = append(n.ring, en)
	} else {
		n.ring[n.head] = en
		n.head = (n.head + 1) % len(n.ring)
	}
	for s := range n.subs {
		select {
		case s.ch <- en:
		default:
			close(s.dropped)
			delete(n.subs, s)
		}
	}
	if ev.Type == rpcapi.EventBlockConnected || ev.Type == rpcapi.EventBlockDisconnected {
		close(n.block)
		n.block = make(chan struct{})
	}
}

// subscribe registers a stream and returns the hello and the backlog from sequence from on
// (none for 0), atomically with the registration so that no event falls between them. It
// returns nil when MaxStreams are open or the notifier is closed.
func (n *Notifier) subscribe(from uint64) (*subscriber, rpcapi.Event, []entry) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed || len(n.subs) >= n.cfg.MaxStreams {
		return nil, rpcapi.Event{}, nil
	}
	s := &subscriber{ch: make(chan entry, n.cfg.Buffer), dropped: make(chan struct{})}
	n.subs[s] = struct{}{}
	oldest := n.seq + 1 - uint64(len(n.ring))
	hello := rpcapi.Event{Type: rpcapi.EventHello, Sequence: n.seq, Stream: n.stream, Oldest: oldest}
	var backlog []entry
	if from > 0 && from <= n.seq {
		start := max(from, oldest)
		backlog = make([]entry, 0, n.seq+1-start)
		for i := start - oldest; i < uint64(len(n.ring)); i++ {
			backlog = append(backlog, n.ring[(n.head+int(i))%len(n.ring)])
		}
	}
	return s, hello, backlog
}

func (n *Notifier) unsubscribe(s *subscriber) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.subs, s)
}

func (n *Notifier) isClosed() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.closed
}

// Streams is the number of streams open.
func (n *Notifier) Streams() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.subs)
}

// Close ends every stream and refuses new ones (the node is stopping).
func (n *Notifier) Close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	for s := range n.subs {
		close(s.dropped)
		delete(n.subs, s)
	}
}

// ServeHTTP answers GET rpcapi.StreamPath[?from=N]: the hello, the backlog from N, then each
// event as it comes, one JSON object a line. The listener's checks (access.go: Host, Origin,
// credentials) come first; a browser's cross-site request that carries no Origin (a plain GET,
// an <img> or <script> tag) is refused here by its Sec-Fetch-Site header.
func (n *Notifier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "the stream answers GET only", http.StatusMethodNotAllowed)
		return
	}
	if r.Header.Get("Origin") == "" {
		switch r.Header.Get("Sec-Fetch-Site") {
		case "", "none", "same-origin":
		default:
			http.Error(w, "forbidden: a cross-site browser request", http.StatusForbidden)
			return
		}
	}
	var from uint64
	if v := r.URL.Query().Get("from"); v != "" {
		var err error
		if from, err = strconv.ParseUint(v, 10, 64); err != nil {
			http.Error(w, "from: want the first sequence number wanted, a non-negative integer", http.StatusBadRequest)
			return
		}
	}
	s, hello, backlog := n.subscribe(from)
	if s == nil {
		msg := "too many notification streams open (at most " + strconv.Itoa(n.cfg.MaxStreams) + ")"
		if n.isClosed() {
			msg = "the node is stopping"
		}
		http.Error(w, msg, http.StatusServiceUnavailable)
		return
	}
	defer n.unsubscribe(s)
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	buf := make([]byte, 0, 4096)
	last := hello.Sequence
	write := func() bool {
		rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		if _, err := w.Write(buf); err != nil {
			return false
		}
		buf = buf[:0]
		return rc.Flush() == nil
	}
	buf = appendEvent(buf, hello)
	for _, en := range backlog {
		buf = append(buf, en.line...)
		last = en.seq
		if len(buf) >= 64<<10 && !write() {
			return
		}
	}
	if !write() {
		return
	}
	tick := time.NewTicker(n.cfg.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case en := <-s.ch:
			if en.seq <= last {
				continue // sent with the backlog
			}
			buf = append(buf, en.line...)
			last = en.seq
			// Whatever else is waiting goes in the same write.
			for more := true; more && len(buf) < 64<<10; {
				select {
				case en := <-s.ch:
					if en.seq > last {
						buf = append(buf, en.line...)
						last = en.seq
					}
				default:
					more = false
				}
			}
			if !write() {
				return
			}
		case <-s.dropped:
			// Closed for overflow or shutdown: what was queued is still in order, then the end.
			for more := true; more; {
				select {
				case en := <-s.ch:
					if en.seq > last {
						buf = append(buf, en.line...)
						last = en.seq
					}
				default:
					more = false
				}
			}
			buf = appendEvent(buf, rpcapi.Event{Type: rpcapi.EventDropped, Sequence: last})
			write()
			return
		case <-tick.C:
			buf = appendEvent(buf, rpcapi.Event{Type: rpcapi.EventPing, Sequence: last})
			if !write() {
				return
			}
		case <-r.Context().Done():
			return
		}
	}
}

func appendEvent(buf []byte, ev rpcapi.Event) []byte {
	b, _ := json.Marshal(ev) // a flat struct of strings and integers: cannot fail
	buf = append(buf, b...)
	return append(buf, '\n')
}

// Mux routes the RPC listener's requests: GET rpcapi.StreamPath to the notifier (when there
// is one), everything else to the JSON-RPC server.
func Mux(rpc http.Handler, n *Notifier) http.Handler {
	if n == nil {
		return rpc
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == rpcapi.StreamPath {
			n.ServeHTTP(w, r)
			return
		}
		rpc.ServeHTTP(w, r)
	})
}
