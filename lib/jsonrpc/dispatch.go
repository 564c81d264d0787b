package jsonrpc

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"time"
)

// Reading a request body: single requests and batches, the envelope of each request, the
// method lookup and the parameters by position or by name.

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
