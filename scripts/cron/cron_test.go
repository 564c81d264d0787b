//go:build linux

// Package cron_test runs the cron scripts of this directory against real regtest processes:
// shellcheck on each, then each script for real against a coin-node (and a coin-faucetd)
// started on loopback with temporary data directories.
package cron_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/proctest"
)

var scripts = []string{"faucet-low-balance.sh", "node-health.sh", "wallet-payout.sh", "backup-datadir.sh"}

func TestMain(m *testing.M) {
	code := m.Run()
	proctest.Cleanup()
	os.Exit(code)
}

// bins builds the executables the scripts call, once for the package.
func bins(t *testing.T) string {
	t.Helper()
	return proctest.Build(t, "./cmd/coin-node", "./cmd/coin-cli", "./cmd/coin-wallet", "./cmd/coin-faucetd", "./cmd/coin-faucet")
}

// TestShellcheck checks the conventions every script follows and runs shellcheck on every
// script (CI installs it: .ci/run). Without shellcheck the conventions are still checked and
// the test then skips, but fails under CI=true (proctest.Missing).
func TestShellcheck(t *testing.T) {
	sc, lookErr := exec.LookPath("shellcheck")
	for _, s := range scripts {
		if lookErr == nil {
			out, err := exec.Command(sc, "--external-sources", s).CombinedOutput()
			if err != nil {
				t.Errorf("shellcheck %s: %v\n%s", s, err, out)
			}
		}
		fi, err := os.Stat(s)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable", s)
		}
		src, _ := os.ReadFile(s)
		if !bytes.HasPrefix(src, []byte("#!/usr/bin/env bash\n")) || !bytes.Contains(src, []byte("\nset -euo pipefail\n")) {
			t.Errorf("%s: no bash shebang or no set -euo pipefail", s)
		}
		help, err := exec.Command("./"+s, "--help").Output()
		if err != nil || !bytes.Contains(help, []byte("Usage:")) || !bytes.Contains(help, []byte("Exit status")) || !bytes.Contains(help, []byte("[COIN_")) {
			t.Errorf("%s --help: %v\n%s", s, err, help)
		}
	}
	if lookErr != nil {
		proctest.Missing(t, false, "shellcheck is not installed (Debian: apt-get install shellcheck; .ci/run installs it)")
	}
}

// env is a clean environment for the scripts: the test's executables first in PATH, no
// COIN_* variables of the caller, a private HOME.
type env struct {
	t    *testing.T
	bin  string
	vars []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, bin: bins(t)}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "COIN_") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "HOME=") &&
			!strings.HasPrefix(kv, "XDG_") {
			e.vars = append(e.vars, kv)
		}
	}
	e.vars = append(e.vars, "PATH="+e.bin+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+t.TempDir(), "COIN_NETWORK=regtest")
	return e
}

type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// run runs a script with extra environment variables (KEY=VALUE) and arguments.
func (e *env) run(script string, vars []string, args ...string) result {
	e.t.Helper()
	return e.runCmd(script, vars, false, args...)
}

// runCmd is run; with group the script runs in a process group of its own, which a
// simulated crash kills as a whole.
func (e *env) runCmd(script string, vars []string, group bool, args ...string) result {
	e.t.Helper()
	path, err := filepath.Abs(script)
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(append([]string{}, e.vars...), vars...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if group {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	err = cmd.Run()
	r := result{out.String(), errb.String(), 0}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.code = 128 + int(ws.Signal())
		}
	} else if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// tool runs one of the executables and returns its trimmed stdout; it fails the test on a
// non-zero exit.
func (e *env) tool(stdin string, name string, args ...string) string {
	e.t.Helper()
	cmd := exec.Command(filepath.Join(e.bin, name), args...)
	cmd.Env = e.vars
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		e.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, errb.String())
	}
	return strings.TrimSpace(out.String())
}

func (e *env) cli(n *proctest.Node, args ...string) string {
	e.t.Helper()
	return e.tool("", "coin-cli", append([]string{"--rpc", n.URL()}, args...)...)
}

func (e *env) startNode() *proctest.Node {
	e.t.Helper()
	return proctest.StartNode(e.t, filepath.Join(e.bin, "coin-node"))
}

// newKey is a fresh mnemonic and its address.
func (e *env) newKey() (mnemonic, address string) {
	e.t.Helper()
	var k struct{ Mnemonic, Address string }
	if err := json.Unmarshal([]byte(e.tool("", "coin-wallet", "new")), &k); err != nil {
		e.t.Fatal(err)
	}
	return k.Mnemonic, k.Address
}

// outputs is what an address holds in the node's pending view: subunits per txid.
func (e *env) outputs(n *proctest.Node, addr string) map[string]int64 {
	e.t.Helper()
	var utxos []struct {
		Txid  string
		Value int64
	}
	if err := json.Unmarshal([]byte(e.cli(n, "getutxosbyaddress", addr, "true")), &utxos); err != nil {
		e.t.Fatal(err)
	}
	m := map[string]int64{}
	for _, u := range utxos {
		m[u.Txid] += u.Value
	}
	return m
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func TestNodeHealth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	n := e.startNode()
	_, addr := e.newKey()
	e.cli(n, "generatetoaddress", "1", addr)
	state := filepath.Join(t.TempDir(), "health.state")
	base := []string{"--rpc", n.URL(), "--state-file", state, "--min-peers", "0", "--data-dir", n.DataDir,
		"--warn-disk", "0", "--crit-disk", "0"}
	check := func(want int, prefix string, args ...string) result {
		t.Helper()
		r := e.run("node-health.sh", nil, append(append([]string{}, base...), args...)...)
		if r.code != want || !strings.HasPrefix(r.stdout, prefix) || strings.Count(r.stdout, "\n") != 1 {
			t.Fatalf("node-health.sh %v: want exit %d and one line %q...; got %s", args, want, prefix, r)
		}
		return r
	}

	r := check(0, "COIN NODE OK - height 1, tip 0 min old, 0 peers, disk ")
	if !strings.Contains(r.stdout, "| height=1 tip_age=") {
		t.Errorf("no perfdata: %s", r.stdout)
	}
	if st, err := os.ReadFile(state); err != nil || !strings.Contains(string(st), "height=1\n") {
		t.Fatalf("state file: %v %q", err, st)
	}
	// The tip older than --warn-age: WARNING.
	check(1, "COIN NODE WARNING - tip 0 min old (limit 0 min)", "--warn-age", "0")
	// Older than --crit-age and the height has not moved since the previous run: stuck.
	check(2, "COIN NODE CRITICAL - stuck: tip 0 min old, height 1 unchanged for", "--crit-age", "0")
	// A new block since the previous run: not stuck, even at --crit-age 0.
	e.cli(n, "generatetoaddress", "1", addr)
	check(0, "COIN NODE OK - height 2", "--crit-age", "0")
	// Too few peers, too little disk, as environment variables.
	r = e.run("node-health.sh", []string{"COIN_RPC=" + n.URL(), "COIN_HEALTH_STATE_FILE=" + state, "COIN_HEALTH_MIN_PEERS=1"})
	if r.code != 2 || !strings.HasPrefix(r.stdout, "COIN NODE CRITICAL - no peers (min 1)") {
		t.Fatalf("min peers: %s", r)
	}
	check(2, "COIN NODE CRITICAL - disk of ", "--crit-disk", "101")
	check(1, "COIN NODE WARNING - disk of ", "--warn-disk", "101")
	// Usage errors are UNKNOWN.
	check(3, "COIN NODE UNKNOWN - --warn-age must be a whole number", "--warn-age", "soon")
	check(3, "COIN NODE UNKNOWN - unknown argument: --bogus", "--bogus")

	// The node stopped: CRITICAL.
	if code := n.Proc.Stop(t, 20*time.Second); code != 0 {
		t.Fatalf("coin-node exit %d", code)
	}
	check(2, "COIN NODE CRITICAL - node unreachable at "+n.URL())
}

func TestFaucetLowBalance(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	n := e.startNode()
	mnemonic, addr := e.newKey()
	dir := t.TempDir()
	mfile := filepath.Join(dir, "faucet.mnemonic")
	writeFile(t, mfile, mnemonic+"\n", 0o600)
	e.cli(n, "generatetoaddress", "101", addr) // two mature coinbases
	listen := fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t))
	fd := proctest.Start(t, filepath.Join(e.bin, "coin-faucetd"), "--network", "regtest", "--rpc", n.URL(),
		"--listen", listen, "--data-dir", filepath.Join(dir, "faucet"), "--mnemonic-file", mfile, "--access-log", "off")
	url := "http://" + listen
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(url + "/api/status")
		if err == nil {
			var st struct {
				FaucetBalance string `json:"faucet_balance"`
			}
			err = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if err == nil && resp.StatusCode == 200 && st.FaucetBalance != "" && st.FaucetBalance != "0.00000000" {
				break
			}
		}
		if fd.Exited() || time.Now().After(deadline) {
			t.Fatalf("coin-faucetd not ready:\n%s", fd.Out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	var st struct {
		FaucetBalance string `json:"faucet_balance"`
	}
	if err := json.Unmarshal([]byte(e.tool("", "coin-faucet", "--faucet", url, "--json", "status")), &st); err != nil {
		t.Fatal(err)
	}
	bal := st.FaucetBalance // no block comes, so it does not change
	var units, cents int64
	if _, err := fmt.Sscanf(bal, "%d.%d", &units, &cents); err != nil || units < 10 {
		t.Fatalf("faucet_balance %q", bal)
	}
	above := fmt.Sprintf("%d.%08d", units+(cents+1)/100_000_000, (cents+1)%100_000_000)

	// At or above the threshold: silent, exit 0; --verbose prints the OK line.
	if r := e.run("faucet-low-balance.sh", nil, "--faucet", url, "--threshold", "10"); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("above the threshold: %s", r)
	}
	if r := e.run("faucet-low-balance.sh", []string{"COIN_FAUCET_URL=" + url, "COIN_FAUCET_MIN_BALANCE=" + bal}, "--verbose"); r.code != 0 ||
		r.stdout != "faucet OK: "+url+" balance "+bal+" COIN (threshold "+bal+" COIN)\n" {
		t.Fatalf("verbose, at the threshold: %s", r)
	}
	// Below: exit 1, one line on stderr naming the address to fund.
	for _, r := range []result{
		e.run("faucet-low-balance.sh", nil, "--faucet", url, "--threshold", above),
		e.run("faucet-low-balance.sh", []string{"COIN_FAUCET_URL=" + url, "COIN_FAUCET_MIN_BALANCE=100000"}),
	} {
		if r.code != 1 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 ||
			!strings.HasPrefix(r.stderr, "faucet LOW: "+url+" balance "+bal+" COIN is below ") || !strings.Contains(r.stderr, "fund "+addr) {
			t.Fatalf("below the threshold: %s", r)
		}
	}
	// Unreachable and usage errors: exit 2.
	if r := e.run("faucet-low-balance.sh", nil, "--faucet", "http://"+n.P2PAddr(), "--threshold", "1", "--timeout", "5s"); r.code != 2 ||
		!strings.HasPrefix(r.stderr, "faucet UNREACHABLE: ") {
		t.Fatalf("unreachable: %s", r)
	}
	for _, args := range [][]string{{"--faucet", url}, {"--threshold", "1.123456789"}, {"--threshold", "-1"}, {"--bogus"}} {
		if r := e.run("faucet-low-balance.sh", nil, args...); r.code != 2 || !strings.Contains(r.stderr, "try --help") {
			t.Fatalf("usage %v: %s", args, r)
		}
	}
}

// crashWallet is a coin-wallet that kills its whole process group (the payout script
// included) just before or just after a send, once, when the file $CRASH_FILE says so.
const crashWallet = `#!/bin/sh
is_send=
for a; do [ "$a" = send ] && is_send=1; done
mode=
if [ -n "$is_send" ] && [ -f "$CRASH_FILE" ]; then mode=$(cat "$CRASH_FILE"); rm -f "$CRASH_FILE"; fi
[ "$mode" = before ] && kill -KILL 0
"$REAL_WALLET" "$@"; rc=$?
[ "$mode" = after ] && kill -KILL 0
exit $rc
`

func TestWalletPayout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	n := e.startNode()
	dir := t.TempDir()
	pass := filepath.Join(dir, "pass")
	writeFile(t, pass, "correct horse battery staple\n", 0o600)
	mnemonic, addr := e.newKey()
	wdir := filepath.Join(dir, "wallet")
	e.tool(mnemonic, "coin-wallet", "--rpc", n.URL(), "--wallet-dir", wdir, "--passphrase-file", pass, "restore")
	e.cli(n, "generatetoaddress", "101", addr)

	var payees []string
	for range 3 {
		_, a := e.newKey()
		payees = append(payees, a)
	}
	csv := filepath.Join(dir, "payouts.csv")
	ledger := csv + ".ledger"
	rows := "payout_id,address,amount\n" +
		"# March\n" +
		"m-1," + payees[0] + ",1.5\n" +
		"m-2," + payees[1] + ",2.25\r\n" +
		"\n" +
		"m-3," + payees[2] + ",0.3\n"
	writeFile(t, csv, rows, 0o644)
	vars := []string{"COIN_RPC=" + n.URL(), "COIN_WALLET_DIR=" + wdir, "COIN_WALLET_PASSPHRASE_FILE=" + pass}
	payout := func(extra ...string) result {
		t.Helper()
		return e.run("wallet-payout.sh", vars, append([]string{"--csv", csv}, extra...)...)
	}
	// paidOnce checks that addr holds exactly one output, of want subunits, and returns its txid.
	paidOnce := func(addr string, want int64) string {
		t.Helper()
		outs := e.outputs(n, addr)
		if len(outs) != 1 {
			t.Fatalf("%s holds %d outputs, want 1: %v", addr, len(outs), outs)
		}
		for txid, v := range outs {
			if v != want {
				t.Fatalf("%s holds %d subunits, want %d", addr, v, want)
			}
			return txid
		}
		return ""
	}
	ledgerLine := func(id string) []string {
		t.Helper()
		b, err := os.ReadFile(ledger)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Split(l, "\t"); f[0] == id {
				return f
			}
		}
		return nil
	}

	// A dry run pays nothing.
	if r := payout("--dry-run"); r.code != 0 || strings.Count(r.stdout, "would pay ") != 3 {
		t.Fatalf("dry run: %s", r)
	}
	// Every row paid once.
	r := payout()
	if r.code != 0 || len(regexp.MustCompile(`(?m)^paid m-\d \S+ [\d.]+ [0-9a-f]{64}$`).FindAllString(r.stdout, -1)) != 3 {
		t.Fatalf("first run: %s", r)
	}
	for i, want := range []int64{150_000_000, 225_000_000, 30_000_000} {
		txid := paidOnce(payees[i], want)
		if f := ledgerLine(fmt.Sprintf("m-%d", i+1)); len(f) < 5 || f[1] != "done" || f[2] != txid || f[3] != payees[i] {
			t.Fatalf("ledger for m-%d: %q (txid %s)", i+1, f, txid)
		}
	}
	if fi, err := os.Stat(ledger); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("ledger: %v %v", err, fi.Mode())
	}
	// A re-run pays nothing new, also after a block.
	if r := payout(); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("second run: %s", r)
	}
	e.cli(n, "generatetoaddress", "1", addr)
	if r := payout(); r.code != 0 || r.stdout != "" {
		t.Fatalf("third run: %s", r)
	}
	paidOnce(payees[0], 150_000_000)

	// A crash between "pending" and "done", after the broadcast: the next run finds the
	// payout's transaction and does not pay again.
	wrapper := filepath.Join(dir, "coin-wallet-crash")
	writeFile(t, wrapper, crashWallet, 0o755)
	crash := filepath.Join(dir, "crash")
	crashVars := append(append([]string{}, vars...), "COIN_WALLET_BIN="+wrapper, "CRASH_FILE="+crash,
		"REAL_WALLET="+filepath.Join(e.bin, "coin-wallet"))
	crashRun := func(mode string) {
		t.Helper()
		writeFile(t, crash, mode, 0o644)
		r := e.runCmd("wallet-payout.sh", crashVars, true, "--csv", csv)
		if r.code != 128+int(syscall.SIGKILL) {
			t.Fatalf("crash %s: %s", mode, r)
		}
	}
	_, p4 := e.newKey()
	appendRow := func(row string) {
		t.Helper()
		f, err := os.OpenFile(csv, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(f, row)
		f.Close()
	}
	appendRow("m-4," + p4 + ",0.75")
	crashRun("after")
	if f := ledgerLine("m-4"); len(f) < 2 || f[1] != "pending" {
		t.Fatalf("after the crash: %q", f)
	}
	sent := paidOnce(p4, 75_000_000)
	r = payout()
	if r.code != 0 || r.stdout != "resolved m-4 "+p4+" 0.75 "+sent+" (already paid)\n" {
		t.Fatalf("resolve after broadcast: %s", r)
	}
	paidOnce(p4, 75_000_000)
	if f := ledgerLine("m-4"); f[1] != "done" || f[2] != sent {
		t.Fatalf("resolved ledger: %q", f)
	}

	// A crash after "pending", before the broadcast: the next run pays it, once.
	_, p5 := e.newKey()
	appendRow("m-5," + p5 + ",0.5")
	crashRun("before")
	if outs := e.outputs(n, p5); len(outs) != 0 {
		t.Fatalf("paid before the broadcast: %v", outs)
	}
	r = payout()
	if r.code != 0 || !strings.Contains(r.stderr, "resolved m-5: not broadcast") || !strings.HasPrefix(r.stdout, "paid m-5 "+p5+" 0.5 ") {
		t.Fatalf("resolve before broadcast: %s", r)
	}
	paidOnce(p5, 50_000_000)

	// A crash after the broadcast, and the payee spends the output before the next run: the
	// payout is found by the wallet's change.
	pm, p6 := e.newKey()
	appendRow("m-6," + p6 + ",3")
	crashRun("after")
	sent = paidOnce(p6, 300_000_000)
	pdir := filepath.Join(dir, "payee")
	e.tool(pm, "coin-wallet", "--rpc", n.URL(), "--wallet-dir", pdir, "--passphrase-file", pass, "restore")
	_, away := e.newKey()
	e.tool("", "coin-wallet", "--rpc", n.URL(), "--wallet-dir", pdir, "--passphrase-file", pass, "send", "--to", away, "--amount", "2")
	if _, ok := e.outputs(n, p6)[sent]; ok {
		t.Fatal("the payee's output is still unspent")
	}
	r = payout()
	if r.code != 0 || r.stdout != "resolved m-6 "+p6+" 3 "+sent+" (already paid)\n" {
		t.Fatalf("resolve by change: %s", r)
	}

	// Two runs never overlap: the lock is held.
	lf, err := os.OpenFile(ledger+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	_, p7 := e.newKey()
	appendRow("m-7," + p7 + ",0.1")
	if r := payout(); r.code != 4 || !strings.Contains(r.stderr, "another payout run holds") {
		t.Fatalf("locked: %s", r)
	}
	lf.Close()
	if len(e.outputs(n, p7)) != 0 {
		t.Fatal("paid while locked")
	}
	if r := payout(); r.code != 0 || !strings.HasPrefix(r.stdout, "paid m-7 ") {
		t.Fatalf("after the lock: %s", r)
	}

	// A paid row that changes, a malformed row, and no passphrase file: usage errors, nothing paid.
	for _, c := range []struct {
		row  string
		args []string
		want string
	}{
		{"!m-1," + payees[0] + ",1.6", nil, "a paid row must not change"},
		{"m-8," + payees[0] + ",1.123456789", nil, "bad amount"},
		{"m 9," + payees[0] + ",1", nil, "bad payout_id"},
		{"", []string{"--passphrase-file", filepath.Join(dir, "missing")}, "cannot read the passphrase file"},
	} {
		content := rows + c.row + "\n"
		if changed, ok := strings.CutPrefix(c.row, "!"); ok { // replaces its row
			content = strings.Replace(rows, "m-1,"+payees[0]+",1.5", changed, 1)
		}
		writeFile(t, csv, content, 0o644)
		if r := payout(c.args...); r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Fatalf("%q: %s", c.row, r)
		}
	}
	// An overpayment would show here: each payee still holds exactly its one payout.
	paidOnce(payees[1], 225_000_000)
	paidOnce(p5, 50_000_000)
	paidOnce(p7, 10_000_000)
}

func TestBackupDataDir(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	n := e.startNode()
	_, addr := e.newKey()
	e.cli(n, "generatetoaddress", "5", addr)
	best := e.cli(n, "getblockhash", "5")
	dest := filepath.Join(t.TempDir(), "backups")
	archives := func() []string {
		t.Helper()
		m, _ := filepath.Glob(filepath.Join(dest, "*.tar.gz"))
		return m
	}

	// The node is running: its LevelDB is open, the backup is refused.
	r := e.run("backup-datadir.sh", nil, "--data-dir", n.DataDir, "--dest", dest, "--wait", "0")
	if r.code != 1 || !strings.Contains(r.stderr, "refusing: the LevelDB in "+filepath.Join(n.DataDir, "db")+" is open") || len(archives()) != 0 {
		t.Fatalf("running node: %s %v", r, archives())
	}

	// --stop-cmd stops it, the copy waits for its lock, --start-cmd runs after.
	marker := filepath.Join(t.TempDir(), "started")
	r = e.run("backup-datadir.sh", []string{"COIN_BACKUP_DATA_DIR=" + n.DataDir, "COIN_BACKUP_DEST=" + dest},
		"--name", "node", "--keep", "1",
		"--stop-cmd", "coin-cli --rpc "+n.URL()+" stop", "--start-cmd", "touch "+marker)
	if r.code != 0 || !regexp.MustCompile(`^backup \S+/node-\d{8}T\d{6}Z\.tar\.gz \(\d+ bytes, 1 kept\)\n$`).MatchString(r.stdout) {
		t.Fatalf("stop and start: %s", r)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("--start-cmd did not run: %v", err)
	}
	n.Proc.Wait(t, 20*time.Second)
	first := archives()
	if len(first) != 1 {
		t.Fatalf("archives %v", first)
	}
	// A second one (the node stopped, no command needed) replaces it with --keep 1.
	r = e.run("backup-datadir.sh", nil, "--data-dir", n.DataDir, "--dest", dest, "--name", "node", "--keep", "1")
	got := archives()
	if r.code != 0 || len(got) != 1 || got[0] == first[0] {
		t.Fatalf("second backup: %s %v", r, got)
	}
	fi, err := os.Stat(got[0])
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("archive mode: %v %v", err, fi.Mode())
	}

	// The archive restores to a data dir a node opens, at the same tip.
	restored := t.TempDir()
	if out, err := exec.Command("tar", "-C", restored, "-xzf", got[0]).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	m := proctest.NewNode(t, filepath.Join(e.bin, "coin-node"))
	m.DataDir = restored
	m.Start(t)
	if h, err := m.RPC.GetBlockCount(context.Background()); err != nil || h != 5 {
		t.Fatalf("restored node: height %d, %v", h, err)
	}
	if got := e.cli(m, "getblockhash", "5"); got != best {
		t.Fatalf("restored tip %s, want %s", got, best)
	}

	// Usage errors.
	for _, args := range [][]string{{"--dest", dest}, {"--data-dir", restored}, {"--data-dir", restored, "--dest", dest, "--keep", "x"},
		{"--data-dir", restored, "--dest", filepath.Join(restored, "b")}} {
		if r := e.run("backup-datadir.sh", nil, args...); r.code != 2 {
			t.Fatalf("usage %v: %s", args, r)
		}
	}
}
