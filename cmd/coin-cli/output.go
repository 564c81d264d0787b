package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/cointoolkit/coin/lib/cliutil"
)

// printResult writes an RPC result with bitcoin-cli's habits: a string raw (an empty
// string and null print nothing at all), a number or boolean bare, an object as 2-space
// indented JSON in the server's key order. A non-empty array of objects is a table when
// table is true (a terminal, or --table); any other array is indented JSON. Output ends
// with a newline.
func printResult(w io.Writer, raw json.RawMessage, table bool) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	switch raw[0] {
	case 'n': // null
		return nil
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("decoding the result: %w", err)
		}
		if s == "" {
			return nil
		}
		if !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		_, err := io.WriteString(w, s)
		return err
	case '[':
		if table {
			header, rows, ok := tableOf(raw)
			if ok {
				return cliutil.PrintTable(w, header, rows)
			}
		}
		return printIndented(w, raw)
	case '{':
		return printIndented(w, raw)
	}
	_, err := w.Write(append(raw, '\n'))
	return err
}

// printIndented re-indents raw JSON, keeping key order and number text as they came.
func printIndented(w io.Writer, raw json.RawMessage) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return fmt.Errorf("decoding the result: %w", err)
	}
	buf.WriteByte('\n')
	_, err := buf.WriteTo(w)
	return err
}

// field is one key of a JSON object, in the order it came.
type field struct {
	key string
	val json.RawMessage
}

// tableOf lays out an array of objects as a table: the columns are the first object's keys
// in its order, then keys first seen in later objects, in the order they appear. ok is false
// when raw is empty or not an array of objects.
func tableOf(raw json.RawMessage) (header []string, rows [][]string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil, nil, false
	}
	var objs [][]field
	col := map[string]int{}
	for dec.More() {
		var elem json.RawMessage
		if err := dec.Decode(&elem); err != nil {
			return nil, nil, false
		}
		fs, isObj := objectFields(elem)
		if !isObj {
			return nil, nil, false
		}
		for _, f := range fs {
			if _, seen := col[f.key]; !seen {
				col[f.key] = len(header)
				header = append(header, f.key)
			}
		}
		objs = append(objs, fs)
	}
	if t, err := dec.Token(); err != nil || t != json.Delim(']') || len(objs) == 0 {
		return nil, nil, false
	}
	rows = make([][]string, len(objs))
	for i, fs := range objs {
		row := make([]string, len(header))
		for _, f := range fs {
			row[col[f.key]] = cellText(f.val)
		}
		rows[i] = row
	}
	return header, rows, true
}

// objectFields decodes a JSON object into its fields in order.
func objectFields(raw json.RawMessage) ([]field, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var fs []field
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		fs = append(fs, field{key, v})
	}
	return fs, true
}

// cellText is a value as a table cell: strings raw, null empty, anything else compact JSON.
func cellText(v json.RawMessage) string {
	switch {
	case len(v) == 0 || string(v) == "null":
		return ""
	case v[0] == '"':
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, v) != nil {
		return string(v)
	}
	return buf.String()
}
