package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
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

// handle processes a complete request body and appends the response to out.
func (s *Server) handle(ctx context.Context, st *callState, in, out []byte) ([]byte, int) {
	if !json.Valid(in) {
		return appendError(out, nil, errParse), http.StatusOK
	}
	i := skipWS(in, 0)
	end := skipValue(in, i)
	body := in[i:end]
	methods := *s.methods.Load()
	if body[0] != '[' {
		out, respond := s.handleOne(ctx, st, methods, body, out)
		if !respond {
			return out, http.StatusNoContent
		}
		return out, http.StatusOK
	}

	n, tooMany := 0, false
	splitArray(body, func([]byte) bool {
		n++
		tooMany = n > s.maxBatch
		return !tooMany
	})
	if n == 0 {
		return appendError(out, nil, errInvalidRequest), http.StatusOK
	}
	if tooMany {
		e := NewError(CodeInvalidRequest, "batch too large: more than %d requests", s.maxBatch)
		return appendError(out, nil, e), http.StatusOK
	}
	out = append(out, '[')
	start, responses := len(out), 0
	splitArray(body, func(elem []byte) bool {
		mark := len(out)
		if responses > 0 {
			out = append(out, ',')
		}
		var respond bool
		out, respond = s.handleOne(ctx, st, methods, elem, out)
		if respond {
			responses++
		} else {
			out = out[:mark]
		}
		return true
	})
	if responses == 0 {
		return out[:start-1], http.StatusNoContent
	}
	return append(out, ']'), http.StatusOK
}

// envelope is the decoded shape of one request object. Byte slices alias
// the request body (method may be fresh memory if it had escapes).
type envelope struct {
	method []byte
	params []byte // raw array or object; nil when absent or null
	id     []byte // raw id; nil when absent or not echoable
	hasID  bool   // the id member is present (so this is not a notification)
}

// parseEnvelope decodes a request object. On failure it still returns the
// id when one was found and valid, so that the error can echo it.
func parseEnvelope(b []byte) (env envelope, ok bool) {
	if len(b) == 0 || b[0] != '{' {
		return env, false
	}
	const (
		seenVersion = 1 << iota
		seenMethod
		seenParams
		seenID
	)
	var seen uint8
	ok = true
	for i := firstMember(b); ; {
		m, next, more := nextMember(b, i)
		if !more {
			break
		}
		i = next
		var bit uint8
		switch string(m.key) {
		case "jsonrpc":
			bit = seenVersion
			if string(m.val) != `"2.0"` {
				if v, isStr := stringValue(m.val); !isStr || string(v) != "2.0" {
					ok = false
				}
			}
		case "method":
			bit = seenMethod
			if v, isStr := stringValue(m.val); isStr {
				env.method = v
			} else {
				ok = false
			}
		case "params":
			bit = seenParams
			switch m.val[0] {
			case '[', '{':
				env.params = m.val
			case 'n':
			default: // the specification requires a structured value
				ok = false
			}
		case "id":
			bit = seenID
			env.hasID = true
			switch c := m.val[0]; {
			case c == '"' || c == 'n' || c == '-' || (c >= '0' && c <= '9'):
				env.id = m.val
			default:
				env.id = nil
				ok = false
			}
		}
		if seen&bit != 0 { // duplicate member: ambiguous, reject
			ok = false
			if bit == seenID {
				env.id = nil
			}
		}
		seen |= bit
	}
	if seen&(seenVersion|seenMethod) != seenVersion|seenMethod {
		ok = false
	}
	return env, ok
}

// handleOne processes one request object, appending its response (if any)
// to out. It reports whether a response was appended.
func (s *Server) handleOne(ctx context.Context, st *callState, methods map[string]*methodEntry, obj, out []byte) ([]byte, bool) {
	var start time.Time
	if st.debug {
		start = time.Now()
	}
	env, valid := parseEnvelope(obj)
	if !valid {
		if st.debug {
			s.logCall(ctx, env.method, start, CodeInvalidRequest)
		}
		return appendError(out, env.id, errInvalidRequest), true
	}

	var (
		result any
		rerr   *Error
	)
	me := methods[string(env.method)]
	if me == nil {
		rerr = errMethodNotFound
	} else if params, perr := me.buildParams(env.params); perr != nil {
		rerr = perr
	} else {
		result, rerr = s.invoke(ctx, st, me, params)
	}

	if env.hasID {
		if rerr == nil {
			var encErr error
			if out, encErr = appendResult(out, env.id, result); encErr != nil {
				s.log.LogAttrs(ctx, slog.LevelError, "jsonrpc: cannot encode result",
					slog.String("method", logName(env.method)), slog.String("error", encErr.Error()))
				rerr = errInternal
			}
		}
		if rerr != nil {
			out = appendError(out, env.id, rerr)
		}
	}
	if st.debug {
		code := 0
		if rerr != nil {
			code = rerr.Code
		}
		s.logCall(ctx, env.method, start, code)
	}
	return out, env.hasID
}

func logName(method []byte) string {
	const max = 64
	if len(method) > max {
		return string(method[:max]) + "..."
	}
	return string(method)
}

// logCall logs one call. Parameters are never logged: they may hold
// secrets such as wallet passphrases.
func (s *Server) logCall(ctx context.Context, method []byte, start time.Time, code int) {
	s.log.LogAttrs(ctx, slog.LevelDebug, "rpc call",
		slog.String("method", logName(method)),
		slog.Duration("duration", time.Since(start)),
		slog.Int("code", code))
}

var nullRaw = json.RawMessage("null")

// buildParams turns the raw params member into positional Params and
// checks their number against the method's ParamSpecs.
func (me *methodEntry) buildParams(raw []byte) (Params, *Error) {
	if len(raw) > 0 && raw[0] == '{' {
		return me.namedParams(raw)
	}
	var p Params
	got := 0
	if len(raw) > 0 {
		p = make(Params, 0, me.max)
		splitArray(raw, func(elem []byte) bool {
			got++
			if got <= me.max {
				p = append(p, elem)
			}
			return true
		})
	}
	if got < me.min || got > me.max {
		want := strconv.Itoa(me.min)
		if me.max != me.min {
			want += ".." + strconv.Itoa(me.max)
		}
		return nil, NewError(CodeInvalidParams, "wrong number of parameters: got %d, want %s", got, want)
	}
	return p, nil
}

// namedParams maps by-name parameters to positions by ParamSpec.Name.
func (me *methodEntry) namedParams(raw []byte) (Params, *Error) {
	specs := me.m.Params
	p := make(Params, len(specs))
	n := 0
	for i := firstMember(raw); ; {
		m, next, more := nextMember(raw, i)
		if !more {
			break
		}
		i = next
		idx := -1
		for j := range specs {
			if specs[j].Name != "" && specs[j].Name == string(m.key) {
				idx = j
				break
			}
		}
		if idx < 0 {
			return nil, NewError(CodeInvalidParams, "unknown parameter name %q", logName(m.key))
		}
		if p[idx] != nil {
			return nil, NewError(CodeInvalidParams, "duplicate parameter %q", specs[idx].Name)
		}
		p[idx] = m.val
		n = max(n, idx+1)
	}
	for i := range me.min {
		if p[i] == nil {
			return nil, NewError(CodeInvalidParams, "missing required parameter %q", specs[i].Name)
		}
	}
	p = p[:n]
	for i := range p {
		if p[i] == nil {
			p[i] = nullRaw
		}
	}
	return p, nil
}

type callResult struct {
	val any
	err *Error
}

var errCanceled = &Error{Code: CodeInternal, Message: "request canceled"}

func ctxError(ctx context.Context) *Error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errTimeout
	}
	return errCanceled
}

// invoke runs the handler in its own goroutine so that the deadline is
// enforced even for a handler that ignores ctx, and so that a panic is
// contained.
func (s *Server) invoke(ctx context.Context, st *callState, me *methodEntry, p Params) (any, *Error) {
	if ctx.Err() != nil {
		return nil, ctxError(ctx)
	}
	if s.sem != nil {
		select {
		case s.sem <- struct{}{}:
		case <-ctx.Done():
			return nil, ctxError(ctx)
		}
	}
	done := make(chan callResult, 1)
	go s.run(ctx, me, p, done)
	select {
	case res := <-done:
		return res.val, res.err
	case <-ctx.Done():
		select {
		case res := <-done:
			return res.val, res.err
		default:
		}
		st.abandoned = true
		return nil, ctxError(ctx)
	}
}

func (s *Server) run(ctx context.Context, me *methodEntry, p Params, done chan<- callResult) {
	var res callResult
	finished := false
	defer func() {
		if r := recover(); r != nil || !finished {
			s.log.LogAttrs(ctx, slog.LevelError, "jsonrpc: handler panic",
				slog.String("method", me.m.Name),
				slog.Any("panic", r),
				slog.String("stack", string(debug.Stack())))
			res = callResult{err: errInternal}
		}
		if s.sem != nil {
			<-s.sem
		}
		done <- res
	}()
	val, err := me.m.Handler(ctx, p)
	res = callResult{val: val, err: convertError(ctx, me, err)}
	finished = true
}

// convertError maps a handler error to the error sent to the caller.
func convertError(ctx context.Context, me *methodEntry, err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		if e == nil {
			return errInternal
		}
		return e.withParamName(me.m.Params)
	}
	if ctx.Err() != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		return ctxError(ctx)
	}
	return &Error{Code: CodeMisc, Message: err.Error()}
}

// appendResult appends a success response. On an encoding failure it
// leaves dst unchanged and returns the error.
func appendResult(dst, id []byte, v any) ([]byte, error) {
	mark := len(dst)
	dst = append(dst, `{"jsonrpc":"2.0","result":`...)
	dst, err := appendValue(dst, v)
	if err != nil {
		return dst[:mark], err
	}
	dst = append(dst, `,"id":`...)
	dst = appendID(dst, id)
	return append(dst, '}'), nil
}

// appendError appends an error response.
func appendError(dst, id []byte, e *Error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = appendString(dst, e.Message)
	if e.Data != nil {
		mark := len(dst)
		dst = append(dst, `,"data":`...)
		var err error
		if dst, err = appendValue(dst, e.Data); err != nil {
			dst = dst[:mark] // drop data that cannot be encoded
		}
	}
	dst = append(dst, `},"id":`...)
	dst = appendID(dst, id)
	return append(dst, '}')
}

func appendID(dst, id []byte) []byte {
	if id == nil {
		return append(dst, "null"...)
	}
	return append(dst, id...)
}

var errInvalidRaw = errors.New("json.RawMessage result is not valid JSON")

// appendValue appends v as JSON, with fast paths for common result types.
func appendValue(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case json.RawMessage:
		if x == nil {
			return append(dst, "null"...), nil
		}
		if !json.Valid(x) {
			return dst, errInvalidRaw
		}
		return append(dst, x...), nil
	case string:
		return appendString(dst, x), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case uint:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint32:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	}
	b, err := safeMarshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// safeMarshal is json.Marshal that turns a panicking MarshalJSON into an
// error.
func safeMarshal(v any) (b []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("panic while encoding: %v", r)
		}
	}()
	return json.Marshal(v)
}
