package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/rpcapi"
)

func TestConvertArg(t *testing.T) {
	tests := []struct {
		typ, arg string
		want     string // JSON sent, when no error
		err      string // part of the error, when an error is expected
	}{
		{rpcapi.TypeUint, "0", "0", ""},
		{rpcapi.TypeUint, "42", "42", ""},
		{rpcapi.TypeUint, "007", "7", ""},
		{rpcapi.TypeUint, "18446744073709551615", "18446744073709551615", ""},
		{rpcapi.TypeUint, "18446744073709551616", "", "out of range"},
		{rpcapi.TypeUint, "-1", "", `"-1" is not a non-negative integer`},
		{rpcapi.TypeUint, "1.5", "", "not a non-negative integer"},
		{rpcapi.TypeUint, "1e3", "", "not a non-negative integer"},
		{rpcapi.TypeUint, "+1", "", "not a non-negative integer"},
		{rpcapi.TypeUint, "0x10", "", "not a non-negative integer"},
		{rpcapi.TypeUint, "", "", "not a non-negative integer"},
		{rpcapi.TypeUint, "ten", "", "not a non-negative integer"},
		{rpcapi.TypeBool, "true", "true", ""},
		{rpcapi.TypeBool, "TRUE", "true", ""},
		{rpcapi.TypeBool, "1", "true", ""},
		{rpcapi.TypeBool, "false", "false", ""},
		{rpcapi.TypeBool, "0", "false", ""},
		{rpcapi.TypeBool, "yes", "", `"yes" is not a boolean (use true, false, 1 or 0)`},
		{rpcapi.TypeBool, "2", "", "not a boolean"},
		{rpcapi.TypeHash, hash0, `"` + hash0 + `"`, ""},
		{rpcapi.TypeHash, "0123", `"0123"`, ""}, // digits stay a string
		{rpcapi.TypeHex, "00ff", `"00ff"`, ""},
		{rpcapi.TypeAddress, addr1, `"` + addr1 + `"`, ""},
		{rpcapi.TypeString, `say "hi"`, `"say \"hi\""`, ""},
		{rpcapi.TypeString, "true", `"true"`, ""}, // no JSON guessing for typed parameters
		{rpcapi.TypeString, "", `""`, ""},
	}
	for _, tt := range tests {
		got, err := convertArg(rpcapi.Param{Name: "p", Type: tt.typ}, tt.arg)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s %q: error %v, want one containing %q", tt.typ, tt.arg, err, tt.err)
			}
		case err != nil:
			t.Errorf("%s %q: %v", tt.typ, tt.arg, err)
		case string(got) != tt.want:
			t.Errorf("%s %q: sent %s, want %s", tt.typ, tt.arg, got, tt.want)
		}
	}
}

// Every parameter type of the catalogue has a conversion and a line of help.
func TestEveryParamTypeKnown(t *testing.T) {
	for _, m := range rpcapi.Methods {
		for _, p := range m.Params {
			if typeDoc[p.Type] == "" {
				t.Errorf("%s %s: type %q has no help text", m.Name, p.Name, p.Type)
			}
		}
	}
}

func TestConvertArgsCount(t *testing.T) {
	utxo, _ := rpcapi.Lookup("getutxosbyaddress")
	count, _ := rpcapi.Lookup("getblockcount")
	hash, _ := rpcapi.Lookup("getblockhash")

	got, err := convertArgs(utxo, []string{addr1})
	if err != nil || len(got) != 1 {
		t.Fatalf("optional left out: %s %v", got, err)
	}
	got, err = convertArgs(utxo, []string{addr1, "1"})
	if err != nil || string(got[0]) != `"`+addr1+`"` || string(got[1]) != "true" {
		t.Fatalf("optional given: %s %v", got, err)
	}
	if got, err := convertArgs(count, nil); err != nil || len(got) != 0 {
		t.Fatalf("no params: %s %v", got, err)
	}

	for _, tt := range []struct {
		m    rpcapi.Method
		args []string
		want string
	}{
		{hash, nil, "too few arguments for getblockhash: got 0, want 1\nusage: coin-cli [global options] getblockhash <height>\n(see 'coin-cli getblockhash --help')"},
		{hash, []string{"1", "2"}, "too many arguments for getblockhash: got 2, want 1\n"},
		{count, []string{"1"}, "too many arguments for getblockcount: got 1, want none\n"},
		{utxo, nil, "too few arguments for getutxosbyaddress: got 0, want 1 to 4\nusage: coin-cli [global options] getutxosbyaddress <address> [include_mempool] [after] [limit]\n"},
		{utxo, []string{"a", "b", "c", "d", "e"}, "too many arguments for getutxosbyaddress: got 5, want 1 to 4\n"},
		{utxo, []string{addr1, "maybe"}, `getutxosbyaddress: argument 2 (include_mempool): "maybe" is not a boolean`},
		{hash, []string{"-5"}, `getblockhash: argument 1 (height): "-5" is not a non-negative integer`},
	} {
		_, err := convertArgs(tt.m, tt.args)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s %q: error %v, want %q", tt.m.Name, tt.args, err, tt.want)
		}
	}
}

func TestGenericArg(t *testing.T) {
	for arg, want := range map[string]string{
		"0":             "0",
		"-5":            "-5",
		"1.5":           "1.5",
		"true":          "true",
		"null":          "null",
		`"0123"`:        `"0123"`,
		`[1,"a"]`:       `[1,"a"]`,
		`{"k":1}`:       `{"k":1}`,
		"0123":          `"0123"`, // not JSON: a leading zero
		hash0:           `"` + hash0 + `"`,
		addr1:           `"` + addr1 + `"`,
		"":              `""`,
		" ":             `" "`,
		"plain words":   `"plain words"`,
		`{"broken":`:    `"{\"broken\":"`,
		"tcoin1q\"x":    `"tcoin1q\"x"`,
		"1234567890123": "1234567890123",
	} {
		if got := genericArg(arg); string(got) != want || !json.Valid(got) {
			t.Errorf("genericArg(%q) = %s, want %s", arg, got, want)
		}
	}
}

func TestArgsUsage(t *testing.T) {
	for name, want := range map[string]string{
		"getblockcount":     "",
		"getblockhash":      "<height>",
		"getutxosbyaddress": "<address> [include_mempool] [after] [limit]",
		"generatetoaddress": "<nblocks> <address>",
	} {
		m, _ := rpcapi.Lookup(name)
		if got := argsUsage(m); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

func TestSplitHelp(t *testing.T) {
	for _, tt := range []struct {
		args []string
		rest []string
		help bool
	}{
		{nil, nil, false},
		{[]string{"1"}, []string{"1"}, false},
		{[]string{"--help"}, nil, true},
		{[]string{"-h"}, nil, true},
		{[]string{"1", "-help"}, nil, true},
		{[]string{"--", "--help"}, []string{"--help"}, false},
		{[]string{"--", "-5"}, []string{"-5"}, false},
	} {
		rest, help := splitHelp(tt.args)
		if help != tt.help || strings.Join(rest, ",") != strings.Join(tt.rest, ",") {
			t.Errorf("splitHelp(%q) = %q %v", tt.args, rest, help)
		}
	}
}
