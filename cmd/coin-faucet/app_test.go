package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/cliutil"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/wallet"
)

func runApp(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	app := newApp()
	var out bytes.Buffer
	app.Writer, app.ErrWriter, app.Reader = &out, &out, strings.NewReader(stdin)
	err := cliutil.Run(app, append([]string{"coin-faucet"}, args...))
	return out.String(), err
}

const addr = "tcoin1q96nxnn43whppxdyguxp3tj8nztpu7l6lvphxrvp7r840zvt4lwuq0f0fzx"

// fakeFaucet answers claims: the first for an address is paid, later ones are rate limited.
func fakeFaucet(t *testing.T) *httptest.Server {
	paid := map[string]bool{}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/faucet":
			var req struct{ Address string }
			b, _ := io.ReadAll(r.Body)
			if r.Method != http.MethodPost || json.Unmarshal(b, &req) != nil {
				w.WriteHeader(400)
				io.WriteString(w, `{"error":{"code":"bad_request","message":"bad"}}`)
				return
			}
			if req.Address == "broken" {
				w.WriteHeader(502)
				io.WriteString(w, `{"error":{"code":"node_unavailable","message":"the node is unavailable"}}`)
				return
			}
			if paid[req.Address] {
				w.Header().Set("Retry-After", "3599")
				w.WriteHeader(429)
				io.WriteString(w, `{"error":{"code":"rate_limited","message":"this address was paid less than 1h0m0s ago"}}`)
				return
			}
			paid[req.Address] = true
			io.WriteString(w, `{"txid":"`+strings.Repeat("ab", 32)+`","amount":"100.00000000"}`)
		case "/api/status":
			io.WriteString(w, `{"block_height":5,"mempool_size":1,"faucet_balance":"1.00000000","faucet_address":"x"}`)
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func TestClaim(t *testing.T) {
	s := fakeFaucet(t)
	// From standard input: the JSON of 'coin-wallet new' (the mnemonic is not echoed).
	in := `{"mnemonic": "legal winner thank year wave sausage worth useful legal winner thank yellow", "address": "` + addr + `"}`
	out, err := runApp(t, in, "--faucet", s.URL, "claim")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]string
	if json.Unmarshal([]byte(out), &v) != nil || v["txid"] != strings.Repeat("ab", 32) || v["amount"] != "100.00000000" ||
		v["address"] != addr || strings.Contains(out, "legal") {
		t.Fatalf("claim printed %q", out)
	}
	// Rate limited: exit status 75 (EX_TEMPFAIL), not the 2 of a usage error.
	_, err = runApp(t, "", "--faucet", s.URL, "claim", addr)
	var ee *cliutil.ExitError
	if !errors.As(err, &ee) || ee.Code != exitRateLimited || !strings.Contains(ee.Message, "rate limited") || !strings.Contains(ee.Message, "3599") {
		t.Fatalf("rate limited: %#v", err)
	}
	// Other failures: exit status 1.
	_, err = runApp(t, "", "--faucet", s.URL, "claim", "broken")
	if !errors.As(err, &ee) || ee.Code != exitFailure || !strings.Contains(ee.Message, "node_unavailable") {
		t.Fatalf("failure: %#v", err)
	}
	// A bare address on standard input, --json after the command.
	if out, err := runApp(t, "  tcoin1other\n", "--faucet", s.URL, "claim", "--json"); err != nil || !strings.Contains(out, "tcoin1other") {
		t.Fatalf("bare address: %q %v", out, err)
	}
	for _, in := range []string{"", "{}", `{"mnemonic":"a b"}`, "two words"} {
		if _, err := runApp(t, in, "--faucet", s.URL, "claim"); err == nil || errors.As(err, &ee) && ee.Code == exitRateLimited {
			t.Errorf("input %q: %v", in, err)
		}
	}
	if _, err := runApp(t, "", "--faucet", "127.0.0.1:1", "claim", addr); err == nil || !strings.Contains(err.Error(), "cannot connect") {
		t.Fatalf("no faucet: %v", err)
	}
}

func TestStatus(t *testing.T) {
	s := fakeFaucet(t)
	out, err := runApp(t, "", "--faucet", s.URL, "status")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if json.Unmarshal([]byte(out), &v) != nil || v["block_height"] != 5.0 || v["faucet_balance"] != "1.00000000" {
		t.Fatalf("status printed %q", out)
	}
}

func TestReadAddress(t *testing.T) {
	for in, want := range map[string]string{addr: addr, " " + addr + "\n": addr, `{"address":"` + addr + `"}`: addr} {
		if got, m, err := readAddress(strings.NewReader(in)); err != nil || got != want || m != "" {
			t.Errorf("readAddress(%q) = %q, %v", in, got, err)
		}
	}
}

// 'coin-wallet new | coin-faucet claim' with no environment: new makes a mainnet address,
// the faucet pays regtest (or testnet) ones. claim asks the faucet's network and claims for
// the piped mnemonic's address there, saying so on standard error; the mnemonic is never
// sent or printed. A piped address of the faucet's network is claimed as it is.
func TestClaimDerivesForFaucetNetwork(t *testing.T) {
	var claimed []string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), "legal") || strings.Contains(r.URL.RawQuery, "legal") {
			t.Errorf("the mnemonic was sent to the faucet: %s %s", r.URL, b)
		}
		switch r.URL.Path {
		case "/api/status":
			io.WriteString(w, `{"network":"regtest","block_height":5}`)
		case "/api/faucet":
			var req struct{ Address string }
			json.Unmarshal(b, &req)
			claimed = append(claimed, req.Address)
			io.WriteString(w, `{"txid":"`+strings.Repeat("cd", 32)+`","amount":"100.00000000"}`)
		}
	}))
	defer s.Close()
	const m = "legal winner thank year wave sausage worth useful legal winner thank yellow"
	mainAddr, _ := wallet.AddressFromMnemonic(m, params.Mainnet, 0)
	regAddr, _ := wallet.AddressFromMnemonic(m, params.Regtest, 0)
	app := newApp()
	var out, errb bytes.Buffer
	app.Writer, app.ErrWriter, app.Reader = &out, &errb, strings.NewReader(`{"mnemonic": "`+m+`", "address": "`+mainAddr+`"}`)
	if err := app.Run([]string{"coin-faucet", "--faucet", s.URL, "claim"}); err != nil {
		t.Fatal(err)
	}
	var v map[string]string
	if json.Unmarshal(out.Bytes(), &v) != nil || v["address"] != regAddr || len(claimed) != 1 || claimed[0] != regAddr ||
		!strings.Contains(errb.String(), "note: "+mainAddr+" is not a regtest address") || strings.Contains(out.String()+errb.String(), "legal") {
		t.Fatalf("claim printed %q, stderr %q, claimed %v; want %s", out.String(), errb.String(), claimed, regAddr)
	}
	// The faucet's own network: claimed as piped, nothing said.
	out.Reset()
	errb.Reset()
	app.Reader = strings.NewReader(`{"mnemonic": "` + m + `", "address": "` + regAddr + `"}`)
	if err := app.Run([]string{"coin-faucet", "--faucet", s.URL, "claim"}); err != nil || errb.Len() != 0 || claimed[1] != regAddr {
		t.Fatalf("regtest address: %v, stderr %q, claimed %v", err, errb.String(), claimed)
	}
	// A bad mnemonic beside a foreign address: an error without its words.
	app.Reader = strings.NewReader(`{"mnemonic": "legal legal legal", "address": "` + mainAddr + `"}`)
	if err := app.Run([]string{"coin-faucet", "--faucet", s.URL, "claim"}); err == nil || strings.Contains(err.Error(), "legal") || len(claimed) != 2 {
		t.Fatalf("bad mnemonic: %v, claimed %v", err, claimed)
	}
}
