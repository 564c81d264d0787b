package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for the zero values of Options.
const (
	DefaultMaxBodyBytes = 4 << 20 // 4 MiB
	DefaultMaxBatch     = 1000
	DefaultTimeout      = 30 * time.Second
)

// Options configures a Server. The zero value gives the defaults.
type Options struct {
	// MaxBodyBytes bounds the request body. Zero or less means
	// DefaultMaxBodyBytes. A larger body gets HTTP 413 with a -32600
	// "request too large" error.
	MaxBodyBytes int64
	// MaxBatch bounds the number of requests in a batch. Zero or less
	// means DefaultMaxBatch. A larger batch is rejected as a whole, before
	// anything runs, with a single -32600 error.
	MaxBatch int
	// Timeout bounds the handling of one HTTP request (for a batch, all of
	// its calls together). Zero means DefaultTimeout; a negative value
	// disables the timeout.
	Timeout time.Duration
	// Logger receives a Debug record per call and an Error record per
	// handler panic. Nil means slog.Default().
	Logger *slog.Logger
	// MaxConcurrent bounds the number of handlers running at once across
	// all requests. Zero or less means no bound. A call waits for a slot
	// until its deadline.
	MaxConcurrent int
}

// Method describes one RPC method.
type Method struct {
	Name string
	// Params lists the positional parameters. The server rejects calls
	// with fewer parameters than the required ones or more than all of
	// them (-32602), and maps by-name calls to positions with the names.
	Params []ParamSpec
	// Result is a human description of the result, for help output.
	Result string
	// Help is the method's description, for help output.
	Help string
	// Handler runs the call. It must honour ctx: when the deadline passes
	// the caller gets a timeout error at once and whatever the handler
	// returns later is discarded.
	Handler func(ctx context.Context, p Params) (any, error)
}

type methodEntry struct {
	m        Method
	min, max int
}

// Server is an http.Handler serving JSON-RPC 2.0 over HTTP POST. Register
// methods with Register; it is safe to register while serving.
type Server struct {
	maxBody  int64
	maxBatch int
	timeout  time.Duration
	log      *slog.Logger
	sem      chan struct{}

	mu      sync.Mutex // serialises Register
	methods atomic.Pointer[map[string]*methodEntry]
	pool    sync.Pool // *reqBuf
}

// reqBuf holds the pooled buffers of one HTTP request.
type reqBuf struct {
	in, out []byte
}

// Buffers that grew beyond this are dropped instead of pooled, so that one
// large request does not pin memory.
const maxPooledBuf = 64 << 10

// NewServer returns a Server with no methods.
func NewServer(opts Options) *Server {
	s := &Server{
		maxBody:  opts.MaxBodyBytes,
		maxBatch: opts.MaxBatch,
		timeout:  opts.Timeout,
		log:      opts.Logger,
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.maxBatch <= 0 {
		s.maxBatch = DefaultMaxBatch
	}
	if s.timeout == 0 {
		s.timeout = DefaultTimeout
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if opts.MaxConcurrent > 0 {
		s.sem = make(chan struct{}, opts.MaxConcurrent)
	}
	empty := map[string]*methodEntry{}
	s.methods.Store(&empty)
	s.pool.New = func() any {
		return &reqBuf{in: make([]byte, 0, 1024), out: make([]byte, 0, 1024)}
	}
	return s
}

// Register adds a method. It panics on programmer errors: an empty name,
// a nil handler, a name registered before, a required parameter after an
// optional one, or two parameters with the same name.
func (s *Server) Register(m Method) {
	if m.Name == "" {
		panic("jsonrpc: Register: empty method name")
	}
	if m.Handler == nil {
		panic("jsonrpc: Register: nil handler for method " + strconv.Quote(m.Name))
	}
	e := &methodEntry{max: len(m.Params)}
	optional := false
	for i, ps := range m.Params {
		if ps.Optional {
			optional = true
		} else {
			if optional {
				panic(fmt.Sprintf("jsonrpc: Register %q: required parameter %d follows an optional one", m.Name, i+1))
			}
			e.min++
		}
		for _, prev := range m.Params[:i] {
			if ps.Name != "" && prev.Name == ps.Name {
				panic(fmt.Sprintf("jsonrpc: Register %q: duplicate parameter name %q", m.Name, ps.Name))
			}
		}
	}
	m.Params = slices.Clone(m.Params)
	e.m = m

	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.methods.Load()
	if _, dup := old[m.Name]; dup {
		panic("jsonrpc: Register: method " + strconv.Quote(m.Name) + " registered twice")
	}
	next := make(map[string]*methodEntry, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[m.Name] = e
	s.methods.Store(&next)
}

// Methods returns the registered methods sorted by name, for help and
// documentation.
func (s *Server) Methods() []Method {
	all := *s.methods.Load()
	out := make([]Method, 0, len(all))
	for _, e := range all {
		m := e.m
		m.Params = slices.Clone(m.Params)
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Method) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Lookup returns the method registered under name.
func (s *Server) Lookup(name string) (Method, bool) {
	e := (*s.methods.Load())[name]
	if e == nil {
		return Method{}, false
	}
	m := e.m
	m.Params = slices.Clone(m.Params)
	return m, true
}

// callState is the per-HTTP-request state shared by the calls of a batch.
type callState struct {
	debug     bool // Debug logging enabled
	abandoned bool // a handler outlived its deadline and may still read the body
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		s.writeError(w, http.StatusMethodNotAllowed, errNotPost)
		return
	}
	if r.ContentLength > s.maxBody {
		s.writeError(w, http.StatusRequestEntityTooLarge, errTooLarge)
		return
	}
	rb := s.pool.Get().(*reqBuf)
	in, err := readBody(http.MaxBytesReader(w, r.Body, s.maxBody), rb.in[:0], r.ContentLength)
	rb.in = in
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			s.writeError(w, http.StatusRequestEntityTooLarge, errTooLarge)
		} else {
			s.writeError(w, http.StatusBadRequest, errParse)
		}
		s.putBuf(rb)
		return
	}

	ctx := r.Context()
	if s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel()
	}
	st := callState{debug: s.log.Enabled(ctx, slog.LevelDebug)}
	out, status := s.handle(ctx, &st, in, rb.out[:0])
	rb.out = out
	if status == http.StatusNoContent {
		w.WriteHeader(http.StatusNoContent)
	} else {
		writeJSON(w, status, out)
	}
	if st.abandoned {
		// A handler still running may read Params, which alias rb.in.
		rb.in = nil
	}
	s.putBuf(rb)
}

func (s *Server) putBuf(rb *reqBuf) {
	if cap(rb.in) > maxPooledBuf || cap(rb.out) > maxPooledBuf {
		return
	}
	if rb.in == nil {
		rb.in = make([]byte, 0, 1024)
	}
	s.pool.Put(rb)
}

// readBody reads r to EOF, appending to buf. contentLength, when known,
// pre-sizes the buffer (the caller has checked it against the limit).
func readBody(r io.Reader, buf []byte, contentLength int64) ([]byte, error) {
	if contentLength > 0 && int64(cap(buf)) < contentLength+1 {
		buf = make([]byte, 0, contentLength+1)
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// Bodies up to this size fit net/http's pre-chunking buffer, and net/http
// computes their Content-Length itself; larger ones get it set explicitly
// so that they are not sent chunked.
const autoContentLength = 2048

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	if len(body) > autoContentLength {
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
	}
	w.WriteHeader(status)
	w.Write(body) //nolint:errcheck // the client may be gone; nothing to do
}

func (s *Server) writeError(w http.ResponseWriter, status int, e *Error) {
	writeJSON(w, status, appendError(make([]byte, 0, 96), nil, e))
}
