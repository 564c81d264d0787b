package httpapi

import (
	"context"
	"fmt"
	"github.com/cointoolkit/coin/lib/faucet"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/faucet/payout"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/wallet"
)

func TestWalletNewAndDerive(t *testing.T) {
	h := regtestHarness(t, 1)
	r := h.do(t, http.MethodGet, "/api/wallet/new", "")
	m, _ := r.Body["mnemonic"].(string)
	a, _ := r.Body["address"].(string)
	if r.Status != 200 || len(strings.Fields(m)) != 12 || !strings.HasPrefix(a, "tcoin1") {
		t.Fatalf("new: %d %s", r.Status, r.Raw)
	}
	if r.Header.Get("Cache-Control") != "no-store" {
		t.Fatal("new wallet response may be cached")
	}
	d := h.do(t, http.MethodPost, "/api/wallet/derive", fmt.Sprintf(`{"mnemonic":%q}`, m))
	if d.Status != 200 || d.Body["address"] != a {
		t.Fatalf("derive: %d %s, want %s", d.Status, d.Raw, a)
	}
	// Extra white space is normalised.
	d = h.do(t, http.MethodPost, "/api/wallet/derive", fmt.Sprintf(`{"mnemonic":%q}`, "  "+strings.ReplaceAll(m, " ", "\t ")+"\n"))
	if d.Status != 200 || d.Body["address"] != a {
		t.Fatalf("derive with extra spaces: %d %s", d.Status, d.Raw)
	}
}

// Malformed input gets a 4xx with a JSON error, never a 500, and never echoes a mnemonic.
func TestBadRequests(t *testing.T) {
	h := regtestHarness(t, 1, func(_ *payout.EngineConfig, c *Config) { c.IPRate = -1 })
	mainnetAddr, _ := wallet.AddressFromMnemonic(faucetMnemonic, params.Mainnet, 0)
	valid, _ := newAddress(t)
	badChecksum := valid[:len(valid)-1] + map[bool]string{true: "q", false: "p"}[valid[len(valid)-1] != 'q']
	secret := "zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo"
	big := `{"address":"` + strings.Repeat("a", 20<<10) + `"}`
	cases := []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/api/faucet", "", 400, "bad_request"},
		{"POST", "/api/faucet", "{", 400, "bad_request"},
		{"POST", "/api/faucet", "[1,2]", 400, "bad_request"},
		{"POST", "/api/faucet", `{"address":5}`, 400, "bad_request"},
		{"POST", "/api/faucet", `{}`, 400, "bad_request"},
		{"POST", "/api/faucet", `{"address":"x"}`, 400, "invalid_address"},
		{"POST", "/api/faucet", `{"address":"` + badChecksum + `"}`, 400, "invalid_address"},
		{"POST", "/api/faucet", `{"address":"` + mainnetAddr + `"}`, 400, "invalid_address"},
		{"POST", "/api/faucet", `{"address":"` + h.key.Address + `"}`, 400, "invalid_address"},
		{"POST", "/api/faucet", `{"address":"` + valid + `"} {}`, 400, "bad_request"},
		{"POST", "/api/faucet", big, 413, "body_too_large"},
		{"GET", "/api/faucet", "", 405, "method_not_allowed"},
		{"GET", "/api/wallet/balance", "", 400, "bad_request"},
		{"GET", "/api/wallet/balance?address=nope", "", 400, "invalid_address"},
		{"POST", "/api/wallet/derive", `{"mnemonic":""}`, 400, "bad_request"},
		{"POST", "/api/wallet/derive", `{"mnemonic":"` + secret + `"}`, 400, "invalid_mnemonic"},
		{"POST", "/api/wallet/derive", `{"mnemonic":"abandon abandon"}`, 400, "invalid_mnemonic"},
		{"POST", "/api/wallet/derive", `{"mnemonic":["a"]}`, 400, "bad_request"},
		{"POST", "/api/wallet/send", `{"mnemonic":"` + secret + `","to":"` + valid + `","amount":1}`, 400, "invalid_mnemonic"},
		{"POST", "/api/wallet/send", `{"mnemonic":"` + faucetMnemonic + `","to":"` + valid + `","amount":1e2}`, 400, "invalid_amount"},
		{"POST", "/api/wallet/send", `{"mnemonic":"` + faucetMnemonic + `","to":"` + valid + `","amount":-1}`, 400, "invalid_amount"},
		{"POST", "/api/wallet/send", `{"mnemonic":"` + faucetMnemonic + `","to":"` + valid + `","amount":0}`, 400, "invalid_amount"},
		{"POST", "/api/wallet/send", `{"mnemonic":"` + faucetMnemonic + `","to":"` + valid + `","amount":0.000000001}`, 400, "invalid_amount"},
		{"POST", "/api/wallet/send", `{"mnemonic":"` + faucetMnemonic + `","to":"` + valid + `","amount":21000001}`, 400, "invalid_amount"},
		{"POST", "/api/wallet/send", `{"mnemonic":"` + faucetMnemonic + `","to":"` + valid + `","amount":0.00000999}`, 400, "invalid_amount"},
		{"POST", "/api/wallet/send", `{"mnemonic":"` + faucetMnemonic + `","to":"` + valid + `","amount":true}`, 400, "bad_request"},
		{"POST", "/api/wallet/send", `{"mnemonic":"` + faucetMnemonic + `","to":"` + valid + `","amount":"1"}`, 400, "bad_request"},
		{"POST", "/api/agent/contract/create", `{"mnemonic":"` + faucetMnemonic + `","counterparty":"` + valid + `","value_coin":"1"}`, 400, "bad_request"},
		{"POST", "/api/agent/review", `{"mnemonic":"` + faucetMnemonic + `","subject_address":"` + valid + `","score":"5","contract_id":"00"}`, 400, "bad_request"},
		{"POST", "/api/wallet/send", `{"mnemonic":"` + faucetMnemonic + `","to":"` + valid + `"}`, 400, "bad_request"},
		{"POST", "/api/wallet/send", `{"mnemonic":"` + faucetMnemonic + `","to":"` + mainnetAddr + `","amount":1}`, 400, "invalid_address"},
		{"GET", "/api/nothing", "", 404, "not_found"},
		{"DELETE", "/api/status", "", 405, "method_not_allowed"},
	}
	for _, c := range cases {
		r := h.do(t, c.method, c.path, c.body)
		if r.Status != c.status || r.errCode() != c.code {
			t.Errorf("%s %s %.60s: %d %s, want %d %s", c.method, c.path, c.body, r.Status, r.Raw, c.status, c.code)
		}
		for _, w := range []string{"zoo", "abandon", "legal winner"} {
			if strings.Contains(r.Raw, w) {
				t.Errorf("%s %s: response echoes the mnemonic: %s", c.method, c.path, r.Raw)
			}
		}
	}
	if r := h.do(t, "GET", "/api/faucet", ""); r.Header.Get("Allow") != "POST" {
		t.Errorf("Allow = %q", r.Header.Get("Allow"))
	}
	if strings.Contains(h.log.String(), "zoo") || strings.Contains(h.log.String(), "legal") {
		t.Fatal("a mnemonic reached the log")
	}
}

// One claim per address per cooldown; the second gets 429 with Retry-After, also after a
// restart (the claim store is on disk).
func TestClaimRateLimitPersists(t *testing.T) {
	dir := t.TempDir()
	h := newHarnessDir(t, 4, dir)
	var err error
	a, _ := newAddress(t)
	r := h.do(t, http.MethodPost, "/api/faucet", claimBody(a))
	if r.Status != 200 {
		t.Fatalf("first claim: %d %s", r.Status, r.Raw)
	}
	r = h.do(t, http.MethodPost, "/api/faucet", claimBody(strings.ToUpper(a)))
	if r.Status != http.StatusTooManyRequests || r.errCode() != "address_rate_limited" {
		t.Fatalf("second claim: %d %s", r.Status, r.Raw)
	}
	ra, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || ra < 3500 || ra > 3600 {
		t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	h.claims.Close()
	s2, err := payout.OpenClaimStore(dir, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	h.claims = s2 // closed by the harness cleanup
	if _, err := s2.Reserve(a); err == nil {
		t.Fatal("rate limit forgotten after reopening the store")
	}
	// After the cooldown the address may claim again: the store reopened with a cooldown
	// that has passed.
	s2.Close()
	s3, err := payout.OpenClaimStore(dir, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	h.claims = s3 // closed by the harness cleanup
	time.Sleep(2 * time.Millisecond)
	release, err := s3.Reserve(a)
	if err != nil {
		t.Fatalf("after the cooldown: %v", err)
	}
	release()
}

// Two simultaneous claims for one address: one is paid, the other is refused.
func TestClaimSameAddressConcurrently(t *testing.T) {
	h := regtestHarness(t, 4)
	a, _ := newAddress(t)
	codes := make(chan int, 8)
	for i := 0; i < 8; i++ {
		go func() { codes <- h.do(t, http.MethodPost, "/api/faucet", claimBody(a)).Status }()
	}
	ok := 0
	for i := 0; i < 8; i++ {
		switch c := <-codes; c {
		case 200:
			ok++
		case 429:
		default:
			t.Errorf("status %d", c)
		}
	}
	if ok != 1 {
		t.Fatalf("%d claims paid for one address", ok)
	}
}

func TestStatusAndBalance(t *testing.T) {
	h := newHarness(t, 3)
	// Wait for the engine's first read of the faucet's outputs.
	deadline := time.Now().Add(5 * time.Second)
	for !h.engine.Status().Synced && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	// The faucet holds 3 of the 103 coinbases, so its coins decay (protocol §8): its balance is
	// the node's figure of what they are worth at the next block, below the nominal 150 COIN.
	nb, err := h.rn.GetAddressBalance(context.Background(), h.key.Address, true)
	if err != nil || nb.Balance != 150*amount.Coin || nb.Spendable >= nb.Balance {
		t.Fatalf("the node's balance of the faucet: %+v %v", nb, err)
	}
	r := h.do(t, http.MethodGet, "/api/status", "")
	if r.Status != 200 || r.Body["block_height"] != 103.0 || r.Body["mempool_size"] != 0.0 ||
		r.Body["faucet_balance"] != amount.Format(nb.Spendable) || r.Body["faucet_address"] != h.key.Address || r.Body["network"] != "regtest" {
		t.Fatalf("status: %d %s, want a balance of %s", r.Status, r.Raw, amount.Format(nb.Spendable))
	}
	a, _ := newAddress(t)
	if r := h.do(t, http.MethodPost, "/api/faucet", claimBody(a)); r.Status != 200 {
		t.Fatal(r.Raw)
	}
	r = h.do(t, http.MethodGet, "/api/status", "")
	bal, _ := amount.Parse(r.Body["faucet_balance"].(string))
	if r.Body["mempool_size"] != 1.0 || bal >= 50*amount.Coin || bal < 49*amount.Coin {
		t.Fatalf("status after a claim: %s", r.Raw)
	}
	// Balance is confirmed only.
	r = h.do(t, http.MethodGet, "/api/wallet/balance?address="+a, "")
	if r.Status != 200 || r.Body["balance"] != "0.00000000" || r.Body["utxo_count"] != 0.0 || r.Body["address"] != a {
		t.Fatalf("balance before the block: %s", r.Raw)
	}
	h.mine(1)
	r = h.do(t, http.MethodGet, "/api/wallet/balance?address="+a, "")
	if r.Body["balance"] != "100.00000000" || r.Body["utxo_count"] != 1.0 {
		t.Fatalf("balance after the block: %s", r.Raw)
	}
}

func TestSend(t *testing.T) {
	h := regtestHarness(t, 1, withAmount(10*amount.Coin))
	m, a, _ := wallet.NewMnemonic(12, testNet)
	if r := h.do(t, http.MethodPost, "/api/faucet", claimBody(a)); r.Status != 200 {
		t.Fatal(r.Raw)
	}
	to, _ := newAddress(t)
	// Unconfirmed coins can be spent.
	r := h.do(t, http.MethodPost, "/api/wallet/send", fmt.Sprintf(`{"mnemonic":%q,"to":%q,"amount":1.5}`, m, to))
	if r.Status != 200 || r.Body["from"] != a || r.Body["to"] != to || r.Body["amount"] != "1.50000000" || len(r.Body["txid"].(string)) != 64 {
		t.Fatalf("send: %d %s", r.Status, r.Raw)
	}
	r = h.do(t, http.MethodPost, "/api/wallet/send", fmt.Sprintf(`{"mnemonic":%q,"to":%q,"amount":9}`, m, to))
	if r.Status != 400 || r.errCode() != "insufficient_funds" {
		t.Fatalf("overspend: %d %s", r.Status, r.Raw)
	}
	// The spec's amount is a number: a decimal string is refused, and nothing is sent.
	r = h.do(t, http.MethodPost, "/api/wallet/send", fmt.Sprintf(`{"mnemonic":%q,"to":%q,"amount":"0.12345678"}`, m, to))
	if r.Status != 400 || r.errCode() != "bad_request" || !strings.Contains(r.Raw, "amount must be a number") {
		t.Fatalf("send with a string amount: %d %s", r.Status, r.Raw)
	}
	r = h.do(t, http.MethodPost, "/api/wallet/send", fmt.Sprintf(`{"mnemonic":%q,"to":%q,"amount":0.12345678}`, m, to))
	if r.Status != 200 || r.Body["amount"] != "0.12345678" {
		t.Fatalf("send: %d %s", r.Status, r.Raw)
	}
	h.mine(1)
	r = h.do(t, http.MethodGet, "/api/wallet/balance?address="+to, "")
	if r.Body["balance"] != "1.62345678" || r.Body["utxo_count"] != 2.0 {
		t.Fatalf("receiver balance: %s", r.Raw)
	}
}

// The endpoints that take a mnemonic are limited per client IP; the others are not.
func TestPerIPLimit(t *testing.T) {
	h := regtestHarness(t, 1, func(_ *payout.EngineConfig, c *Config) { c.IPRate, c.IPBurst = 1, 3 })
	body := fmt.Sprintf(`{"mnemonic":%q}`, faucetMnemonic)
	for i := 0; i < 3; i++ {
		if r := h.do(t, http.MethodPost, "/api/wallet/derive", body); r.Status != 200 {
			t.Fatalf("derive %d: %d", i, r.Status)
		}
	}
	r := h.do(t, http.MethodPost, "/api/wallet/derive", body)
	if r.Status != 429 || r.errCode() != "client_rate_limited" {
		t.Fatalf("derive beyond the burst: %d %s", r.Status, r.Raw)
	}
	if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
		t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	if r := h.do(t, http.MethodPost, "/api/wallet/send", body); r.Status != 429 {
		t.Fatalf("send shares the limit: %d", r.Status)
	}
	for i := 0; i < 5; i++ {
		if r := h.do(t, http.MethodGet, "/api/wallet/new", ""); r.Status != 200 {
			t.Fatalf("new is not limited: %d", r.Status)
		}
	}
}

// The access log has one line per request, with method, path and status, and no body or
// query string.
func TestAccessLog(t *testing.T) {
	h := regtestHarness(t, 1)
	h.do(t, http.MethodPost, "/api/wallet/derive", fmt.Sprintf(`{"mnemonic":%q}`, faucetMnemonic))
	a, _ := newAddress(t)
	h.do(t, http.MethodGet, "/api/wallet/balance?address="+a, "")
	var lines []string
	for _, l := range strings.Split(h.log.String(), "\n") {
		if strings.Contains(l, " sys=http ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 || !strings.Contains(lines[0], "method=POST path=/api/wallet/derive status=200") ||
		!strings.Contains(lines[1], "method=GET path=/api/wallet/balance status=200") {
		t.Fatalf("access log: %q", lines)
	}
	if strings.Contains(h.log.String(), "legal") || strings.Contains(h.log.String(), a) {
		t.Fatal("the log has a body or a query string")
	}
}

func TestNodeDown(t *testing.T) {
	h, _, cn := newRegtestHarness(t, 1)
	cn.SetDown(fmt.Errorf("%w: connection refused", payout.ErrNodeUnavailable))
	r := h.do(t, http.MethodGet, "/api/status", "")
	if r.Status != http.StatusBadGateway || r.errCode() != "node_unavailable" {
		t.Fatalf("status with the node down: %d %s", r.Status, r.Raw)
	}
}

func TestMainnetRefused(t *testing.T) {
	h := newHarness(t, 1)
	_, err := NewServer(faucet.Config{Net: params.Mainnet, Node: h.backend, Engine: h.engine, Claims: h.claims}, Options{})
	if err == nil {
		t.Fatal("mainnet accepted")
	}
}
