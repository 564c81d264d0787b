package confile

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestParseSectionsCommentsRepeats(t *testing.T) {
	src := "\uFEFF# a comment\n" +
		"network = regtest   # trailing comment\n" +
		"\n" +
		"connect=a:1\n" +
		"connect=b:2\n" +
		"rpc-auth=alice:salt$hash#notacomment\n" +
		"[regtest]\n" +
		"  rpc-bind=127.0.0.1:38332\n" +
		"connect=c:3\n" +
		"[ testnet ]\n" +
		"rpc-bind=127.0.0.1:28332\n" +
		"empty=\n"
	f, err := Parse("coin.conf", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{"", "network", "regtest", 2},
		{"", "connect", "a:1", 4},
		{"", "connect", "b:2", 5},
		{"", "rpc-auth", "alice:salt$hash#notacomment", 6},
		{"regtest", "rpc-bind", "127.0.0.1:38332", 8},
		{"regtest", "connect", "c:3", 9},
		{"testnet", "rpc-bind", "127.0.0.1:28332", 11},
		{"testnet", "empty", "", 12},
	}
	if !reflect.DeepEqual(f.Entries, want) {
		t.Fatalf("entries\n got %v\nwant %v", f.Entries, want)
	}
	vals := func(es []Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Value)
		}
		return out
	}
	for _, tc := range []struct {
		key, net string
		want     []string
	}{
		{"connect", "", []string{"a:1", "b:2"}},        // the top only
		{"connect", "mainnet", []string{"a:1", "b:2"}}, // no [mainnet] connect: the top's
		{"connect", "regtest", []string{"c:3"}},        // the section replaces the top
		{"rpc-bind", "testnet", []string{"127.0.0.1:28332"}},
		{"rpc-bind", "mainnet", nil},
	} {
		if got := vals(f.Values(tc.key, tc.net)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Values(%s, %q) = %v, want %v", tc.key, tc.net, got, tc.want)
		}
	}
	if e, ok := f.Network(); !ok || e.Value != "regtest" || e.Line != 2 {
		t.Errorf("Network() = %v, %v", e, ok)
	}
}

// TestParseErrorsNameFileAndLine: every malformed line is a *LineError (ErrSyntax) with the
// file and the line.
func TestParseErrorsNameFileAndLine(t *testing.T) {
	for _, tc := range []struct {
		src  string
		line int
		msg  string
	}{
		{"network=regtest\nrpc-bind 127.0.0.1:1\n", 2, "is not key=value"},
		{"# x\n\n[signet]\n", 3, "section [signet]"},
		{"[regtest\n", 1, "section [regtest"},
		{"--rpc-bind=1\n", 1, "without dashes (rpc-bind)"},
		{"=value\n", 1, "want an option's long name"},
		{"rpc bind=1\n", 1, "want an option's long name"},
		{"conf=/x\n", 1, "conf cannot be set"},
		{"[regtest]\nnetwork=testnet\n", 2, "network set in the [regtest] section"},
		{"# x\nnetwork=moonnet\n", 2, `network "moonnet": want mainnet, testnet, regtest`},
	} {
		_, err := Parse("/etc/coin/coin.conf", strings.NewReader(tc.src))
		var le *LineError
		if !errors.As(err, &le) || !errors.Is(err, ErrSyntax) {
			t.Errorf("%q: error %v, want a *LineError matching ErrSyntax", tc.src, err)
			continue
		}
		if le.Path != "/etc/coin/coin.conf" || le.Line != tc.line || !strings.Contains(err.Error(), tc.msg) ||
			!strings.HasPrefix(err.Error(), "/etc/coin/coin.conf:"+itoa(tc.line)+": ") {
			t.Errorf("%q: error %q (line %d), want line %d and %q", tc.src, err, le.Line, tc.line, tc.msg)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestReadRefusesHugeFilesAndDirectories(t *testing.T) {
	dir := t.TempDir()
	if _, err := Read(dir); err == nil {
		t.Error("Read of a directory succeeded")
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("# x\n", MaxFileSize/4+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("Read of a %d-byte file: %v", MaxFileSize+4, err)
	}
	if _, err := Load(filepath.Join(dir, "missing.conf")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a named missing file: %v, want ErrNotExist", err)
	}
	t.Setenv("HOME", dir)
	if f, err := Load(""); f != nil || err != nil {
		t.Errorf("Load with no default file = %v, %v; want nothing", f, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("network=regtest\n[regtest]\nrpc-bind=127.0.0.1:1 # c\n")
	f.Fuzz(func(t *testing.T, src string) {
		file, err := Parse("f", strings.NewReader(src))
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) && !strings.HasPrefix(err.Error(), "f: ") {
				t.Fatalf("error %v is neither a LineError nor names the file", err)
			}
			return
		}
		for _, e := range file.Entries {
			if !validKey(e.Key) || (e.Section != "" && !validSection(e.Section)) {
				t.Fatalf("bad entry %+v", e)
			}
		}
	})
}
