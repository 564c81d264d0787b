package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Writing responses: results and error objects appended to the response buffer, with the
// request's id echoed byte for byte.

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
