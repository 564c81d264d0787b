package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/cliutil"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/wallet"
)

const mnemonic = "legal winner thank year wave sausage worth useful legal winner thank yellow"

// runApp runs coin-wallet in-process with stdin and returns stdout and the error.
func runApp(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	app := newApp()
	var out bytes.Buffer
	app.Writer, app.ErrWriter, app.Reader = &out, &out, strings.NewReader(stdin)
	err := cliutil.Run(app, append([]string{"coin-wallet"}, args...))
	return out.String(), err
}

func TestNewJSON(t *testing.T) {
	out, err := runApp(t, "", "--network", "regtest", "new")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]string
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v) != 2 {
		t.Fatalf("new printed %q", out)
	}
	if len(strings.Fields(v["mnemonic"])) != 12 || !strings.HasPrefix(v["address"], "tcoin1") {
		t.Fatalf("new printed %v", v)
	}
	// derive reads the JSON of new, or the bare words, and gives the same address.
	for _, in := range []string{out, v["mnemonic"], "\n  " + v["mnemonic"] + "  \n"} {
		got, err := runApp(t, in, "--network", "regtest", "derive")
		if err != nil || strings.TrimSpace(got) != v["address"] {
			t.Fatalf("derive = %q, %v; want %s", got, err, v["address"])
		}
	}
	out, _ = runApp(t, "", "--network", "mainnet", "new", "--words", "24")
	_ = json.Unmarshal([]byte(out), &v)
	if len(strings.Fields(v["mnemonic"])) != 24 || !strings.HasPrefix(v["address"], "coin1") {
		t.Fatalf("24-word mainnet new printed %v", v)
	}
}

func TestDeriveIndex(t *testing.T) {
	want, _ := wallet.AddressFromMnemonic(mnemonic, params.Testnet, 7)
	out, err := runApp(t, mnemonic, "--network", "testnet", "derive", "--index", "7", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if json.Unmarshal([]byte(out), &v) != nil || v["address"] != want || v["path"] != "m/44'/1'/0'/0'/7'" {
		t.Fatalf("derive --index 7 --json = %s, want %s", out, want)
	}
	f := filepath.Join(t.TempDir(), "m")
	os.WriteFile(f, []byte(mnemonic), 0o600)
	if out, err := runApp(t, "", "--network", "testnet", "derive", "--index", "7", "--mnemonic-file", f); err != nil || strings.TrimSpace(out) != want {
		t.Fatalf("derive --mnemonic-file = %q, %v", out, err)
	}
	if _, err := runApp(t, "abandon abandon", "--network", "testnet", "derive"); err == nil || strings.Contains(err.Error(), "abandon") {
		t.Fatalf("bad mnemonic: %v", err)
	}
	if _, err := runApp(t, "", "--network", "testnet", "derive"); err == nil {
		t.Fatal("empty input accepted")
	}
	if _, err := runApp(t, mnemonic, "--network", "testnet", "derive", "extra"); err == nil {
		t.Fatal("a mnemonic argument accepted")
	}
}

func TestRestoreAddressAndPassphrase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	pass := filepath.Join(t.TempDir(), "pass")
	os.WriteFile(pass, []byte("secret\n"), 0o600)
	common := []string{"--network", "regtest", "--wallet-dir", dir, "--passphrase-file", pass}
	out, err := runApp(t, mnemonic, append(common, "restore")...)
	if err != nil {
		t.Fatal(err)
	}
	want0, _ := wallet.AddressFromMnemonic(mnemonic, params.Regtest, 0)
	want1, _ := wallet.AddressFromMnemonic(mnemonic, params.Regtest, 1)
	if !strings.Contains(out, want0) || strings.Contains(out, "legal") {
		t.Fatalf("restore printed %q", out)
	}
	if _, err := runApp(t, mnemonic, append(common, "restore")...); !errors.Is(err, wallet.ErrWalletExists) {
		t.Fatalf("second restore: %v", err)
	}
	if out, err := runApp(t, "", append(common, "address")...); err != nil || strings.TrimSpace(out) != want0 {
		t.Fatalf("address = %q, %v", out, err)
	}
	if out, err := runApp(t, "", append(common, "address", "--new")...); err != nil || strings.TrimSpace(out) != want1 {
		t.Fatalf("address --new = %q, %v", out, err)
	}
	out, err = runApp(t, "", append(common, "address", "--all")...)
	var recs []wallet.AddressRecord
	if err != nil || json.Unmarshal([]byte(out), &recs) != nil || len(recs) != 2 || recs[1].Address != want1 {
		t.Fatalf("address --all = %q, %v", out, err)
	}
	// A wrong passphrase, and a wallet of another network.
	os.WriteFile(pass, []byte("wrong\n"), 0o600)
	if _, err := runApp(t, "", append(common, "address", "--new")...); !errors.Is(err, wallet.ErrWrongPassphrase) {
		t.Fatalf("wrong passphrase: %v", err)
	}
	if _, err := runApp(t, "", "--network", "testnet", "--wallet-dir", dir, "address"); !errors.Is(err, wallet.ErrWrongNetwork) {
		t.Fatalf("other network: %v", err)
	}
	if _, err := runApp(t, "", "--network", "regtest", "--wallet-dir", filepath.Join(t.TempDir(), "none"), "balance"); err == nil ||
		!strings.Contains(err.Error(), "create") {
		t.Fatalf("missing wallet: %v", err)
	}
}

func TestCreateNeedsPassphrase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	t.Setenv(passphraseEnv, "")
	if _, err := runApp(t, "", "--network", "regtest", "--wallet-dir", dir, "create"); !errors.Is(err, wallet.ErrEmptyPassphrase) {
		t.Fatalf("empty passphrase: %v", err)
	}
	t.Setenv(passphraseEnv, "a passphrase")
	out, err := runApp(t, "", "--network", "regtest", "--wallet-dir", dir, "create")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]string
	if json.Unmarshal([]byte(out), &v) != nil || len(strings.Fields(v["mnemonic"])) != 12 || v["wallet_dir"] != dir {
		t.Fatalf("create printed %q", out)
	}
	if got, _ := wallet.AddressFromMnemonic(v["mnemonic"], params.Regtest, 0); got != v["address"] {
		t.Fatalf("created address %s is not the mnemonic's %s", v["address"], got)
	}
}

// Flag checks come before any node call; a node that is not there is explained.
func TestSendErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	t.Setenv(passphraseEnv, "pw")
	if _, err := runApp(t, mnemonic, "--network", "regtest", "--wallet-dir", dir, "restore"); err != nil {
		t.Fatal(err)
	}
	to, _ := wallet.AddressFromMnemonic(mnemonic, params.Regtest, 5)
	base := []string{"--network", "regtest", "--wallet-dir", dir, "--rpc", "127.0.0.1:1", "send", "--to", to}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--amount", "1e3"}, "--amount"},
		{[]string{"--amount", "0.000000001"}, "--amount"},
		{[]string{"--amount", "0.00000999"}, "dust"},
		{[]string{"--amount", "1", "--fee-rate", "0"}, "--fee-rate"},
		{[]string{"--amount", "1"}, "cannot connect"},
	} {
		_, err := runApp(t, "", append(base, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("send %v: %v, want %q", c.args, err, c.want)
		}
	}
	_, err := runApp(t, "", "--network", "regtest", "--wallet-dir", dir, "send", "--to", "coin1qqq", "--amount", "1")
	if err == nil || !strings.Contains(err.Error(), "--to") {
		t.Errorf("bad --to: %v", err)
	}
}

// An error the node returned prints bitcoin-cli's text and exits with |code|.
func TestNodeErrorExit(t *testing.T) {
	e := &env{rpcURL: "http://x", net: params.Regtest}
	err := e.nodeError(&jsonrpc.Error{Code: -26, Message: "missing inputs"})
	var ee *cliutil.ExitError
	if !errors.As(err, &ee) || ee.Code != 26 || ee.Message != "error code: -26\nerror message:\nmissing inputs" {
		t.Fatalf("%#v", err)
	}
	if err := e.nodeError(&jsonrpc.Error{Code: -256, Message: "m"}); !errors.As(err, &ee) || ee.Code != 1 {
		t.Fatalf("code -256: %#v", err)
	}
}
