package rpcauth

import (
	"errors"
	"strings"
	"testing"
)

// A vector computed with Bitcoin Core's share/rpcauth/rpcauth.py formula,
// hmac.new(salt.encode(), password.encode(), 'SHA256').hexdigest(), for salt
// "cb77f0957de88ff388cf817ddbc7273" and password "secret" (checked with Python's hmac).
func TestHMACVector(t *testing.T) {
	got := HMAC("cb77f0957de88ff388cf817ddbc7273", "secret")
	if got != vectorHash {
		t.Fatalf("HMAC = %s, want %s", got, vectorHash)
	}
	e, err := Parse("alice:cb77f0957de88ff388cf817ddbc7273$" + vectorHash)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Verify("alice", "secret") || e.Verify("alice", "Secret") || e.Verify("bob", "secret") || e.Verify("alice", "") {
		t.Fatal("Verify disagrees with the vector")
	}
	if e.String() != "alice:cb77f0957de88ff388cf817ddbc7273$"+vectorHash {
		t.Fatal(e.String())
	}
}

func TestGenerateRoundTrip(t *testing.T) {
	line, pass, err := Generate("coin")
	if err != nil {
		t.Fatal(err)
	}
	if len(pass) != 43 || strings.ContainsAny(pass, "+/=") {
		t.Fatalf("password %q: want 43 base64url characters", pass)
	}
	e, err := Parse(line)
	if err != nil || e.User != "coin" || len(e.Salt) != 32 {
		t.Fatalf("Parse(%q) = %+v, %v", line, e, err)
	}
	es := Entries{mustParse(t, "other:aa$"+HMAC("aa", "x")), e}
	if !es.Verify("coin", pass) || !es.Verify("other", "x") || es.Verify("coin", "x") || es.Verify("other", pass) {
		t.Fatal("Entries.Verify")
	}
	if (Entries{}).Verify("", "") {
		t.Fatal("empty entries accept")
	}
	line2, pass2, _ := Generate("coin")
	if line2 == line || pass2 == pass {
		t.Fatal("Generate repeats itself")
	}
	for _, bad := range []string{"", "a:b", "line\nbreak"} {
		if _, _, err := Generate(bad); err == nil {
			t.Errorf("Generate(%q) accepted", bad)
		}
	}
}

func TestParseErrors(t *testing.T) {
	h := HMAC("s", "p")
	for line, want := range map[string]string{
		"":                               "no USER",
		"nouser":                         "no USER",
		":s$" + h:                        "no USER",
		"u:" + h:                         "no SALT",
		"u:$" + h:                        "no SALT",
		"u:s$abc":                        "HASH has 3 characters",
		"u:s$" + strings.Repeat("z", 64): "not hex",
	} {
		_, err := Parse(line)
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q", line, err, want)
		}
	}
	if _, err := ParseAll([]string{"u:s$" + h, "bad"}); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatal(err)
	}
	if es, err := ParseAll([]string{" u:s$" + h + " "}); err != nil || len(es) != 1 {
		t.Fatal(es, err)
	}
}

func mustParse(t *testing.T, line string) Entry {
	t.Helper()
	e, err := Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

const vectorHash = "c9ce7cb2de2ad5aadae1449ad1e62baa38d98fced30a7cd2eae656cab574b678"
