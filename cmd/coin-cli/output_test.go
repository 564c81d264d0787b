package main

import (
	"bytes"
	"testing"
)

func TestPrintResult(t *testing.T) {
	const objects = `[{"txid":"ab","index":0,"value":100,"is_coinbase":true,"note":null},` +
		`{"value":5,"txid":"cd","index":1,"is_coinbase":false,"extra":{"a":[1,2]}}]`
	const objectsTable = `┌──────┬───────┬───────┬─────────────┬──────┬─────────────┐
│ TXID │ INDEX │ VALUE │ IS COINBASE │ NOTE │    EXTRA    │
├──────┼───────┼───────┼─────────────┼──────┼─────────────┤
│ ab   │ 0     │ 100   │ true        │      │             │
│ cd   │ 1     │ 5     │ false       │      │ {"a":[1,2]} │
└──────┴───────┴───────┴─────────────┴──────┴─────────────┘
`
	const objectsJSON = `[
  {
    "txid": "ab",
    "index": 0,
    "value": 100,
    "is_coinbase": true,
    "note": null
  },
  {
    "value": 5,
    "txid": "cd",
    "index": 1,
    "is_coinbase": false,
    "extra": {
      "a": [
        1,
        2
      ]
    }
  }
]
`
	tests := []struct {
		name  string
		raw   string
		table bool
		want  string
	}{
		{"string raw", `"` + hash0 + `"`, false, hash0 + "\n"},
		{"string escapes decoded", `"a\tb \"q\" \u00e9"`, false, "a\tb \"q\" é\n"},
		{"multi-line string keeps one newline", `"line1\nline2\n"`, false, "line1\nline2\n"},
		{"empty string prints nothing", `""`, false, ""},
		{"null prints nothing", `null`, false, ""},
		{"null with table", `null`, true, ""},
		{"integer bare", `42`, false, "42\n"},
		{"big integer keeps its digits", `18446744073709551615`, false, "18446744073709551615\n"},
		{"decimal keeps its text", `12.50000000`, false, "12.50000000\n"},
		{"boolean bare", `true`, false, "true\n"},
		{"object indented in server order", `{"z":1,"a":{"k":"v"},"m":[]}`, false,
			"{\n  \"z\": 1,\n  \"a\": {\n    \"k\": \"v\"\n  },\n  \"m\": []\n}\n"},
		{"object stays JSON with table", `{"b":1,"a":2}`, true, "{\n  \"b\": 1,\n  \"a\": 2\n}\n"},
		{"array of strings", `["x","y"]`, false, "[\n  \"x\",\n  \"y\"\n]\n"},
		{"array of strings stays JSON with table", `["x","y"]`, true, "[\n  \"x\",\n  \"y\"\n]\n"},
		{"empty array", `[]`, true, "[]\n"},
		{"mixed array stays JSON with table", `[{"a":1},2]`, true, "[\n  {\n    \"a\": 1\n  },\n  2\n]\n"},
		{"objects as JSON", objects, false, objectsJSON},
		{"objects as table", objects, true, objectsTable},
		{"surrounding space ignored", " \n42\n", false, "42\n"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := printResult(&buf, []byte(tt.raw), tt.table); err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got := buf.String(); got != tt.want {
			t.Errorf("%s:\ngot\n%s\nwant\n%s", tt.name, got, tt.want)
		}
	}
}

func TestTableOf(t *testing.T) {
	header, rows, ok := tableOf([]byte(`[{"b":1,"a":"x"},{"c":true,"a":"y"},{"b":null}]`))
	if !ok {
		t.Fatal("not a table")
	}
	if got, want := fmtRow(header), "b|a|c"; got != want {
		t.Errorf("columns %s, want %s (first object's order, then new keys)", got, want)
	}
	want := []string{"1|x|", "|y|true", "||"}
	for i, r := range rows {
		if fmtRow(r) != want[i] {
			t.Errorf("row %d: %s, want %s", i, fmtRow(r), want[i])
		}
	}
	for _, raw := range []string{`[]`, `[1]`, `[{"a":1},"s"]`, `{"a":1}`, `[{"a":1}`, `"x"`} {
		if _, _, ok := tableOf([]byte(raw)); ok {
			t.Errorf("%s: laid out as a table", raw)
		}
	}
}

func fmtRow(r []string) string {
	var b bytes.Buffer
	for i, c := range r {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(c)
	}
	return b.String()
}

func TestPrintResultMalformed(t *testing.T) {
	for _, raw := range []string{`"unterminated`, `{"a":`} {
		if err := printResult(&bytes.Buffer{}, []byte(raw), false); err == nil {
			t.Errorf("%s: no error", raw)
		}
	}
}
