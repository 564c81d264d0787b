package jsonrpc

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The functions in this file walk JSON text that has already been checked
// with json.Valid, so they only need to find value boundaries, not to
// diagnose errors. They still never index out of range on bad input.

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// skipWS returns the index of the first non-whitespace byte at or after i.
func skipWS(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipString(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	default: // number, true, false, null
		j := i
		for j < len(b) {
			c := b[j]
			if isSpace(c) || c == ',' || c == '}' || c == ']' {
				break
			}
			j++
		}
		return j
	}
}

// splitArray calls fn with each element of the JSON array b (b[0] == '[')
// and stops early when fn returns false.
func splitArray(b []byte, fn func(elem []byte) bool) {
	i := skipWS(b, 1)
	if i >= len(b) || b[i] == ']' {
		return
	}
	for i < len(b) {
		end := skipValue(b, i)
		if end <= i || !fn(b[i:end]) {
			return
		}
		i = skipWS(b, end)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i = skipWS(b, i+1)
	}
}

// objectMember is one member of a JSON object: the key's content (without
// quotes, unescaped) and the raw value.
type objectMember struct {
	key []byte
	val []byte
}

// nextMember parses the member starting at b[i] (the key's opening quote,
// or the closing brace). It returns the member, the index of the next
// member (or len(b)) and false at the end of the object.
func nextMember(b []byte, i int) (objectMember, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return objectMember{}, len(b), false
	}
	kEnd := skipString(b, i)
	key, ok := stringValue(b[i:kEnd])
	if !ok {
		return objectMember{}, len(b), false
	}
	i = skipWS(b, kEnd)
	if i >= len(b) || b[i] != ':' {
		return objectMember{}, len(b), false
	}
	i = skipWS(b, i+1)
	vEnd := skipValue(b, i)
	if vEnd <= i {
		return objectMember{}, len(b), false
	}
	m := objectMember{key: key, val: b[i:vEnd]}
	i = skipWS(b, vEnd)
	if i < len(b) && b[i] == ',' {
		return m, skipWS(b, i+1), true
	}
	return m, len(b), true
}

// firstMember returns the index of the first member of the object b.
func firstMember(b []byte) int {
	return skipWS(b, 1)
}

// stringValue returns the content of the JSON string v. Without escapes it
// aliases v; with escapes it is decoded into new memory.
func stringValue(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, false
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner, true
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, false
	}
	return []byte(s), true
}

// jsonKind names the JSON type of the raw value v, for error messages.
func jsonKind(v []byte) string {
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Invalid UTF-8 is replaced by
// U+FFFD, as encoding/json does; U+2028 and U+2029 are escaped so that the
// output is also safe to embed in JavaScript.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
