package jsonrpc

import (
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
)

// Params holds the positional parameters of a call, each as raw JSON.
//
// When a request passes parameters by name (a JSON object), the server maps
// them to positions using the method's ParamSpec names before the handler
// runs, filling skipped optional positions with null, so handlers always
// see positional parameters.
//
// The raw values alias the request body: they are valid only until the
// handler returns. Copy (or decode) anything that must outlive the call.
//
// The helper methods take a 0-based index. Their errors are -32602 *Error
// values whose message numbers parameters from 1; when the error is returned
// from a handler, the server adds the ParamSpec name, for example
// "invalid parameter 1 (hash): expected string, got number".
type Params []json.RawMessage

// ParamSpec describes one positional parameter of a Method.
type ParamSpec struct {
	Name     string // name used for by-name calls and in error messages
	Type     string // human-readable type, for help output ("string", "numeric", ...)
	Help     string // one-line description, for help output
	Optional bool   // optional parameters must follow all required ones
}

// get returns parameter i, or nil when it is absent.
func (p Params) get(i int) []byte {
	if i < 0 || i >= len(p) {
		return nil
	}
	return p[i]
}

func isNull(v []byte) bool {
	return len(v) == 4 && v[0] == 'n'
}

func typeError(i int, want string, v []byte) *Error {
	return newParamError(i, "invalid parameter", ": expected "+want+", got "+jsonKind(v))
}

func missing(i int) *Error {
	return newParamError(i, "missing parameter", "")
}

// String returns parameter i, which must be a JSON string.
func (p Params) String(i int) (string, error) {
	v := p.get(i)
	if v == nil {
		return "", missing(i)
	}
	if v[0] != '"' {
		return "", typeError(i, "string", v)
	}
	s, ok := stringValue(v)
	if !ok {
		return "", typeError(i, "string", v)
	}
	return string(s), nil
}

// OptString returns parameter i as a string, or def when it is absent or
// null.
func (p Params) OptString(i int, def string) (string, error) {
	if v := p.get(i); v == nil || isNull(v) {
		return def, nil
	}
	return p.String(i)
}

// isIntegerLiteral reports whether v is a JSON number without fraction or
// exponent, with an optional leading minus.
func isIntegerLiteral(v []byte) bool {
	if len(v) > 0 && v[0] == '-' {
		v = v[1:]
	}
	if len(v) == 0 {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Uint64 returns parameter i, which must be a JSON integer literal in
// [0, 2^64-1]. Negative numbers, fractions and exponents (even 1.0 or 1e3),
// and numeric strings are rejected.
func (p Params) Uint64(i int) (uint64, error) {
	v := p.get(i)
	if v == nil {
		return 0, missing(i)
	}
	if jsonKind(v) != "number" || !isIntegerLiteral(v) || v[0] == '-' {
		return 0, typeError(i, "non-negative integer", v)
	}
	n, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil {
		return 0, newParamError(i, "invalid parameter", ": integer out of range")
	}
	return n, nil
}

// OptUint64 is Uint64, returning def when parameter i is absent or null.
func (p Params) OptUint64(i int, def uint64) (uint64, error) {
	if v := p.get(i); v == nil || isNull(v) {
		return def, nil
	}
	return p.Uint64(i)
}

// Int returns parameter i, which must be a JSON integer literal that fits
// in an int. Fractions, exponents and strings are rejected.
func (p Params) Int(i int) (int, error) {
	v := p.get(i)
	if v == nil {
		return 0, missing(i)
	}
	if jsonKind(v) != "number" || !isIntegerLiteral(v) {
		return 0, typeError(i, "integer", v)
	}
	n, err := strconv.ParseInt(string(v), 10, strconv.IntSize)
	if err != nil {
		return 0, newParamError(i, "invalid parameter", ": integer out of range")
	}
	return int(n), nil
}

// OptInt is Int, returning def when parameter i is absent or null.
func (p Params) OptInt(i int, def int) (int, error) {
	if v := p.get(i); v == nil || isNull(v) {
		return def, nil
	}
	return p.Int(i)
}

// Bool returns parameter i, which must be JSON true or false.
func (p Params) Bool(i int) (bool, error) {
	v := p.get(i)
	if v == nil {
		return false, missing(i)
	}
	switch string(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, typeError(i, "boolean", v)
}

// OptBool is Bool, returning def when parameter i is absent or null.
func (p Params) OptBool(i int, def bool) (bool, error) {
	if v := p.get(i); v == nil || isNull(v) {
		return def, nil
	}
	return p.Bool(i)
}

// Hex returns the bytes of parameter i, which must be a JSON string of
// hexadecimal digits (either case) of even length. A value of the wrong
// JSON type and a string that is not hex both give -32602.
func (p Params) Hex(i int) ([]byte, error) {
	v := p.get(i)
	if v == nil {
		return nil, missing(i)
	}
	if v[0] != '"' {
		return nil, typeError(i, "hex string", v)
	}
	s, ok := stringValue(v)
	if !ok {
		return nil, typeError(i, "hex string", v)
	}
	out := make([]byte, len(s)/2)
	if len(s)%2 != 0 {
		return nil, newParamError(i, "invalid hex in parameter", "")
	}
	if _, err := hex.Decode(out, s); err != nil {
		return nil, newParamError(i, "invalid hex in parameter", "")
	}
	return out, nil
}

// Decode unmarshals parameter i into v with encoding/json, for structured
// parameters. A decoding failure is a -32602 error.
func (p Params) Decode(i int, v any) error {
	raw := p.get(i)
	if raw == nil {
		return missing(i)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return newParamError(i, "invalid parameter", ": "+decodeErrorText(err))
	}
	return nil
}

// decodeErrorText shortens encoding/json errors for callers.
func decodeErrorText(err error) string {
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		if te.Field != "" {
			return "unexpected " + te.Value + " in field " + te.Field
		}
		return "unexpected " + te.Value
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}
