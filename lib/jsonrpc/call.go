package jsonrpc

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
)

// Running one handler: the concurrency bound, the deadline, panics, and turning its error
// into the response's error object.

// callResult is what a handler's goroutine hands back.
type callResult struct {
	val any
	err *Error
}

// errCanceled answers a call whose client went away.
var errCanceled = &Error{Code: CodeInternal, Message: "request canceled"}

// ctxError is the error of a call whose context ended first.
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
