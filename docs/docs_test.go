// Package docs holds the documents of the toolkit and, in this test, checks the command lines
// they show: every line of the README's quick start and of the "Examples:" of each
// executable's --help runs as written, on regtest, with executables built afresh.
//
// # How the lines run
//
// Each line runs in bash (a line of the README in one working directory where bin/ holds the
// fresh executables, so that its lines share files and exported variables as in one
// terminal; each --help example in a fresh directory of its own) under a pseudo-terminal made
// by script(1), as typed in a terminal: a command that asks for the passphrase finds a terminal
// and is answered on it (docsPassphrase, typed twice). HOME is a fresh directory, PATH starts
// with the fresh executables, and no COIN_* variable of the caller leaks in; the --help
// examples see COIN_NETWORK=regtest, the network of the README's quick start (its coin.conf).
//
//   - A line ending in "&" runs in the background; when it starts coin-node, the next line
//     waits until the node answers on 127.0.0.1:38332 (a person waits for the log line).
//   - An example that runs until it is stopped (a daemon: coin-node, coin-faucetd, a coin-miner
//     without --blocks) runs in place of its shell; it must do its job (the node answers, the
//     faucet serves /api/status, the miner prints a block) and exit 0 on SIGTERM.
//   - Any other line must exit 0 within lineTimeout; a line whose comment says it asks for a
//     passphrase must print a prompt naming it.
//
// # What is substituted
//
// Only the placeholders the documents use: "tcoin1..." becomes a fresh regtest address,
// "https://faucet.example" the URL of a regtest coin-faucetd the test runs (also in
// COIN_FAUCET_URL, as an operator would set it), and the shell variables $address and $addr (an
// address with mature coins) and $MNEMONIC (its mnemonic) are set. A remark in parentheses
// after a command and two spaces, as --help writes "(asks for a passphrase)", is not part of
// the command; a "\" at the end of a line joins the next one. The examples read the files they
// name from their directory: wallet.json (the JSON of 'coin-wallet new' for $MNEMONIC),
// mnemonic.txt, pass.txt, faucet.txt (the funded mnemonic of the faucet) and tx.hex (a
// transfer signed by that wallet just before and not broadcast: coin-wallet send through a
// proxy that keeps what it would have sent).
//
// Lines that cannot run on regtest here are listed in skipped with the reason; lines known to
// fail until a fix lands are listed in knownBroken with the issue, and are skipped (not passed)
// while they fail.
//
// The test needs bash and script(1), the regtest ports 38332 and 38333 and the faucet's
// default port 8080 free, and is skipped with -short.
package docs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// lineTimeout bounds a foreground line.
const lineTimeout = 60 * time.Second

// docsPassphrase answers the passphrase prompts.
const docsPassphrase = "docs-test-passphrase"

// regtestRPC is the regtest node's default RPC address, which the documents use.
const regtestRPC = "127.0.0.1:38332"

var tools = []string{"coin-node", "coin-cli", "coin-miner", "coin-wallet", "coin-faucetd", "coin-faucet"}

// skipped are the lines that do not run here, with the reason.
var skipped = map[string]string{
	"make build": "the test builds the executables itself (go build of ./cmd/..., as make build does) into bin/",
	"make test":  "runs the whole suite, this test included",
	"coin-node --network testnet --rpc-bind 127.0.0.1:28332 --connect seed.example:28333":                                                            "testnet: joins the public test network (seed.example is a placeholder peer)",
	"COIN_NETWORK=testnet COIN_RPC_BIND=127.0.0.1:28332 coin-node":                                                                                   "testnet: joins the public test network",
	"coin-cli --rpc http://127.0.0.1:28332 getblockchaininfo":                                                                                        "the testnet RPC port: needs a testnet node",
	"COIN_RPC=127.0.0.1:28332 COIN_MINER_ADDRESS=tcoin1... coin-miner":                                                                               "the testnet RPC port: needs a testnet node",
	"coin-wallet --network testnet consolidate":                                                                                                      "testnet: needs a testnet node and a funded testnet wallet",
	"coin-wallet --network testnet balance":                                                                                                          "testnet: needs a testnet node and a testnet wallet",
	"coin-wallet --network testnet send --to tcoin1... --amount 1.5":                                                                                 "testnet: needs a testnet node and a funded testnet wallet",
	"coin-wallet --network testnet agent register":                                                                                                   "testnet: needs a testnet node and a funded testnet wallet",
	"coin-wallet --network testnet agent contract create --counterparty tcoin1... --amount 2":                                                        "testnet: needs a testnet node and a funded testnet wallet",
	"coin-faucetd --network testnet --wallet-dir /var/lib/faucet/wallet --passphrase-file pass.txt --listen 0.0.0.0:8080 --amount 10 --cooldown 24h": "testnet, and a deployment's wallet path and public listen address",
}

// knownBroken are lines that fail until the fix named lands: skipped while they fail.
var knownBroken = map[string]string{
	// None at present. Fixed: 'restore < wallet.json' asks on the terminal (751fcad),
	// 'coin-wallet new | coin-faucet claim' across networks (d132c30).
}

// dependsOn: a line that cannot work when the line it names failed.
var dependsOn = map[string]string{
	"bin/coin-wallet --wallet-dir w send --to tcoin1... --amount 1.5": "bin/coin-wallet --wallet-dir w restore < wallet.json",
}

func TestDocsAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("starts nodes, a faucet and a miner")
	}
	for _, tool := range []string{"bash", "script"} {
		if _, err := exec.LookPath(tool); err != nil {
			proctest.Missing(t, false, tool+" is not installed (Debian: apt-get install bash bsdutils)")
		}
	}
	for _, addr := range []string{regtestRPC, "127.0.0.1:38333", "127.0.0.1:8080"} {
		if err := waitFree(addr); err != nil {
			t.Skipf("%v: the documents' lines use it", err)
		}
	}
	pkgs := make([]string, len(tools))
	for i, tool := range tools {
		pkgs[i] = "./cmd/" + tool
	}
	bin := proctest.Build(t, pkgs...)
	env := baseEnv(bin)

	fresh := freshAddress(t, bin, env)
	subst := strings.NewReplacer("tcoin1...", fresh)
	t.Run("README quick start", func(t *testing.T) { readmeQuickStart(t, bin, env, subst) })
	t.Run("help examples", func(t *testing.T) { helpExamples(t, bin, env, fresh) })
}

// baseEnv is the environment of every line: the caller's without COIN_*, with a PATH that
// starts with the fresh executables.
func baseEnv(bin string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "COIN_") || strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "HOME=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "TERM=dumb")
}

func freshAddress(t *testing.T, bin string, env []string) string {
	out := mustRun(t, env, filepath.Join(bin, "coin-wallet"), "--network", "regtest", "new")
	var w struct{ Address string }
	if err := json.Unmarshal(out, &w); err != nil || !strings.HasPrefix(w.Address, "tcoin1") {
		t.Fatalf("coin-wallet new: %v %s", err, out)
	}
	return w.Address
}

func mustRun(t *testing.T, env []string, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(append([]string{}, env...), "HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return out
}

// docLine is one command line of a document.
type docLine struct {
	text string // as written, continuation lines joined
	cmd  string // the command to run: remarks dropped, placeholders substituted
}

// command is the runnable text of a documented line: without a parenthesized remark after two
// spaces.
var remark = regexp.MustCompile(`\s{2,}\([^()]*\)\s*$`)

func command(line string) string { return strings.TrimSpace(remark.ReplaceAllString(line, "")) }

// key is how skipped, knownBroken and dependsOn name a line: without its comment or remark.
func key(line string) string {
	c := command(line)
	if i := strings.Index(c, "  #"); i >= 0 {
		c = c[:i]
	}
	return strings.TrimSpace(c)
}

// quickStartLines are the code lines (indented by four spaces) of the README's "Quick start".
func quickStartLines(t *testing.T) []string {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "## "):
			in = strings.TrimSpace(l) == "## Quick start"
		case in && strings.HasPrefix(l, "    ") && strings.TrimSpace(l) != "":
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	if len(lines) < 5 {
		t.Fatalf("README quick start: %d code lines", len(lines))
	}
	return lines
}

func readmeQuickStart(t *testing.T, bin string, env []string, subst *strings.Replacer) {
	work := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(work, "bin")); err != nil {
		t.Fatal(err)
	}
	sh := newShell(t, work, append(env, "HOME="+filepath.Join(work, "home")))
	failed := map[string]bool{}
	for i, line := range quickStartLines(t) {
		k := key(line)
		t.Run(fmt.Sprintf("%02d %s", i+1, k), func(t *testing.T) {
			if why, ok := skipped[k]; ok {
				t.Skip(why)
			}
			if dep, ok := dependsOn[k]; ok && failed[dep] {
				t.Skipf("%q failed before it", dep)
			}
			err := sh.line(t, subst.Replace(command(line)), line)
			if err != nil {
				failed[k] = true
				if issue, ok := knownBroken[k]; ok {
					t.Skipf("known broken, fix not landed yet: %s\n%v", issue, err)
				}
				t.Errorf("%s\n%v", line, err)
			}
		})
	}
}

// helpExamples runs the "Examples:" lines of every executable's --help.
func helpExamples(t *testing.T, bin string, env []string, fresh string) {
	fixtures := map[string]string{}
	var lines []docLine
	for _, tool := range tools {
		out := mustRun(t, env, filepath.Join(bin, tool), "--help")
		for _, l := range examples(string(out)) {
			lines = append(lines, docLine{text: l})
		}
	}
	if len(lines) < 20 {
		t.Fatalf("only %d example lines", len(lines))
	}
	env = append(env, "COIN_NETWORK=regtest")

	// The daemons' own examples first: they use the default ports the test node takes next.
	var node *daemon
	owner := t
	setup := func() {
		t := owner
		if node != nil {
			return
		}
		node = startNode(t, bin, env)
		rich := newWallet(t, bin, env)
		faucetKey := newWallet(t, bin, env)
		node.mine(t, 101, faucetKey.Address)
		node.mine(t, 101, rich.Address)
		walletJSON, _ := json.Marshal(rich)
		fixtures = map[string]string{"wallet.json": string(walletJSON) + "\n", "mnemonic.txt": rich.Mnemonic + "\n",
			"pass.txt": docsPassphrase + "\n", "faucet.txt": faucetKey.Mnemonic + "\n"}
		faucetURL := startFaucet(t, bin, env, faucetKey.Mnemonic)
		env = append(env, "address="+rich.Address, "addr="+rich.Address, "MNEMONIC="+rich.Mnemonic,
			"COIN_FAUCET_URL="+faucetURL)
		fixtures["@faucet"], fixtures["@mnemonic"] = faucetURL, rich.Mnemonic
	}
	for _, daemonsFirst := range []bool{true, false} {
		if !daemonsFirst {
			setup()
		}
		for i, l := range lines {
			k := key(l.text)
			isNodeExample := strings.HasPrefix(k, "coin-node ")
			if isNodeExample != daemonsFirst {
				continue
			}
			t.Run(fmt.Sprintf("%02d %s", i+1, k), func(t *testing.T) {
				if why, ok := skipped[k]; ok {
					t.Skip(why)
				}
				dir := t.TempDir()
				for name, content := range fixtures {
					if !strings.HasPrefix(name, "@") {
						os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600)
					}
				}
				if strings.Contains(l.text, "tx.hex") { // made just before: the wallet's coins decay
					os.WriteFile(filepath.Join(dir, "tx.hex"), []byte(signedTx(t, bin, env, fixtures["@mnemonic"], fresh)+"\n"), 0o600)
				}
				cmd := strings.NewReplacer("tcoin1...", fresh, "https://faucet.example", fixtures["@faucet"]).Replace(command(l.text))
				sh := newShell(owner, dir, append(append([]string{}, env...), "HOME="+t.TempDir()))
				var err error
				if kind := daemonKind(k); kind != "" {
					err = sh.daemon(t, cmd, kind)
				} else {
					err = sh.line(t, cmd, l.text)
				}
				if err != nil {
					if issue, ok := knownBroken[k]; ok {
						t.Skipf("known broken, fix not landed yet: %s\n%v", issue, err)
					}
					t.Errorf("%s\n%v", l.text, err)
				}
			})
		}
	}
}

// examples extracts the lines under "Examples:" of a --help text: those indented deeper than
// the heading, "\"-continued lines joined.
func examples(help string) []string {
	var out []string
	depth := -1
	pending := ""
	for _, l := range strings.Split(help, "\n") {
		indent := len(l) - len(strings.TrimLeft(l, " "))
		text := strings.TrimSpace(l)
		switch {
		case text == "Examples:":
			depth = indent
			continue
		case depth < 0:
			continue
		case text == "":
			continue
		case indent <= depth:
			depth = -1
			continue
		}
		if pending != "" {
			text = pending + " " + text
			pending = ""
		}
		if strings.HasSuffix(text, `\`) {
			pending = strings.TrimSpace(strings.TrimSuffix(text, `\`))
			continue
		}
		out = append(out, text)
	}
	return out
}

// daemonKind names the daemon an example starts in the foreground ("" for none).
func daemonKind(k string) string {
	switch {
	case strings.HasPrefix(k, "coin-node "):
		return "node"
	case strings.HasPrefix(k, "coin-faucetd ") && !strings.Contains(k, " openapi"):
		return "faucet"
	case strings.HasPrefix(k, "coin-miner ") && !strings.Contains(k, "--blocks") && !strings.Contains(k, "--benchmark"):
		return "miner"
	}
	return ""
}

// shell runs documented lines in bash, in dir, carrying exported variables from line to line.
// Its processes and files belong to owner, a test that outlives the lines' subtests.
type shell struct {
	owner *testing.T
	dir   string
	env   []string
	state string
}

func newShell(owner *testing.T, dir string, env []string) *shell {
	return &shell{owner: owner, dir: dir, env: env, state: filepath.Join(owner.TempDir(), "state.sh")}
}

func (s *shell) script(body string) string {
	f, err := os.CreateTemp(s.owner.TempDir(), "line-*.sh")
	if err != nil {
		s.owner.Fatal(err)
	}
	fmt.Fprintf(f, "[ -f %[1]q ] && . %[1]q\n%[2]s\n__rc=$?\nexport -p > %[1]q\nexit $__rc\n", s.state, body)
	if err := f.Close(); err != nil {
		s.owner.Fatal(err)
	}
	return f.Name()
}

// line runs one documented line (cmd, from the text as written) and returns why it failed.
func (s *shell) line(t *testing.T, cmd, written string) error {
	if strings.HasSuffix(cmd, "&") {
		return s.background(t, cmd)
	}
	ctx, cancel := context.WithTimeout(context.Background(), lineTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, "script", "-qefc", "bash "+s.script(cmd), "/dev/null")
	c.Dir, c.Env = s.dir, s.env
	c.Stdin = strings.NewReader(docsPassphrase + "\n" + docsPassphrase + "\n")
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = 5 * time.Second
	out, err := c.CombinedOutput()
	text := strings.ReplaceAll(string(out), "\r\n", "\n")
	if ctx.Err() != nil {
		return fmt.Errorf("still running after %s (killed):\n%s", lineTimeout, tail(text))
	}
	if err != nil {
		return fmt.Errorf("%v:\n%s", err, tail(text))
	}
	if strings.Contains(written, "asks for a passphrase") &&
		!strings.Contains(strings.ReplaceAll(text, docsPassphrase, ""), "passphrase") {
		return fmt.Errorf("did not ask for a passphrase:\n%s", tail(text))
	}
	t.Logf("%s\n%s", cmd, tail(text))
	return nil
}

// background runs a line that ends in "&"; a coin-node it starts must answer before the next
// line runs.
func (s *shell) background(t *testing.T, cmd string) error {
	node := strings.Contains(cmd, "coin-node")
	if node {
		if err := waitFree(regtestRPC); err != nil {
			return err
		}
	}
	d := s.start(cmd + "\nwait $!")
	if node {
		return d.waitRPC(t, "http://"+regtestRPC)
	}
	return nil
}

// daemon runs an example that runs until it is stopped: it must do its job, then exit 0 on
// SIGTERM.
func (s *shell) daemon(t *testing.T, cmd, kind string) error {
	if kind == "node" {
		if err := waitFree(regtestRPC); err != nil {
			return err
		}
	}
	d := s.start("exec " + cmd)
	var err error
	switch kind {
	case "node":
		err = d.waitRPC(t, "http://"+regtestRPC)
	case "faucet":
		err = d.waitHTTP("http://127.0.0.1:8080/api/status")
	case "miner":
		err = d.waitOutput(regexp.MustCompile(`(?m)^[0-9a-f]{64}$`))
	}
	if err != nil {
		d.kill()
		return err
	}
	if code := d.stop(); code != 0 {
		return fmt.Errorf("exit %d after SIGTERM:\n%s", code, tail(d.out.String()))
	}
	t.Logf("%s\n%s", cmd, tail(d.out.String()))
	return nil
}

// daemon is a process a line started in the background.
type daemon struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	rpc  *rpcapi.Client
}

func (s *shell) start(body string) *daemon {
	t := s.owner
	d := &daemon{out: &syncBuffer{}, done: make(chan struct{})}
	d.cmd = exec.Command("bash", s.script(body))
	d.cmd.Dir, d.cmd.Env = s.dir, s.env
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.cmd.Wait(); close(d.done) }()
	t.Cleanup(d.kill)
	return d
}

func (d *daemon) exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

func (d *daemon) kill() {
	if !d.exited() {
		syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-d.done
	}
	if d.rpc != nil {
		d.rpc.Close()
	}
}

func (d *daemon) stop() int {
	syscall.Kill(d.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-d.done:
		return d.cmd.ProcessState.ExitCode()
	case <-time.After(30 * time.Second):
		d.kill()
		return -1
	}
}

func (d *daemon) until(what string, ok func() bool) error {
	deadline := time.Now().Add(60 * time.Second)
	for !ok() {
		if d.exited() {
			return fmt.Errorf("exited (%d) before %s:\n%s", d.cmd.ProcessState.ExitCode(), what, tail(d.out.String()))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s within 60s:\n%s", what, tail(d.out.String()))
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// waitRPC waits until the node d started answers on url; every node of the test starts
// with an empty chain, so a node at another height is another process's.
func (d *daemon) waitRPC(t *testing.T, url string) error {
	d.rpc = rpcapi.NewClient(url)
	var height int64 = -1
	err := d.until("answer on "+url, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		h, err := d.rpc.GetBlockCount(ctx)
		height = int64(h)
		return err == nil
	})
	if err == nil && height != 0 {
		return fmt.Errorf("a node at height %d answers on %s: another process has the port", height, url)
	}
	return err
}

// waitFree waits up to 30 s for nothing to listen on addr (another test's node going away).
func waitFree(addr string) error {
	for waited := 0; ; waited++ {
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			ln.Close()
			return nil
		}
		if waited == 30 {
			return fmt.Errorf("%s is in use by another process", addr)
		}
		time.Sleep(time.Second)
	}
}

func (d *daemon) waitHTTP(url string) error {
	return d.until("200 from "+url, func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

func (d *daemon) waitOutput(re *regexp.Regexp) error {
	return d.until("output matching "+re.String(), func() bool { return re.MatchString(d.out.String()) })
}

// startNode runs the regtest node the examples talk to, on the default RPC port.
func startNode(t *testing.T, bin string, env []string) *daemon {
	if err := waitFree(regtestRPC); err != nil {
		t.Fatal(err)
	}
	s := newShell(t, t.TempDir(), append(append([]string{}, env...), "HOME="+t.TempDir()))
	d := s.start(fmt.Sprintf("exec %s --network regtest --rpc-bind %s --p2p-port %d --data-dir %s",
		filepath.Join(bin, "coin-node"), regtestRPC, proctest.FreePort(t), t.TempDir()))
	if err := d.waitRPC(t, "http://"+regtestRPC); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d *daemon) mine(t *testing.T, n int, addr string) {
	if _, err := d.rpc.GenerateToAddress(context.Background(), n, addr); err != nil {
		t.Fatal(err)
	}
}

type walletJSON struct {
	Mnemonic string `json:"mnemonic"`
	Address  string `json:"address"`
}

func newWallet(t *testing.T, bin string, env []string) walletJSON {
	var w walletJSON
	out := mustRun(t, env, filepath.Join(bin, "coin-wallet"), "--network", "regtest", "new")
	if err := json.Unmarshal(out, &w); err != nil || w.Mnemonic == "" {
		t.Fatalf("coin-wallet new: %v %s", err, out)
	}
	return w
}

// signedTx is the hex of a transfer signed by the wallet of mnemonic and not broadcast, for
// the examples' tx.hex: coin-wallet send builds and signs it against the node through a proxy
// that refuses sendrawtransaction (keeping its argument) and forwards every other call.
func signedTx(t *testing.T, bin string, env []string, mnemonic, to string) string {
	var mu sync.Mutex
	var hex string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Method string            `json:"method"`
			Params []json.RawMessage `json:"params"`
			ID     json.RawMessage   `json:"id"`
		}
		if json.Unmarshal(body, &req) == nil && req.Method == "sendrawtransaction" && len(req.Params) > 0 {
			mu.Lock()
			json.Unmarshal(req.Params[0], &hex)
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","error":{"code":-26,"message":"kept by the docs test"},"id":%s}`, req.ID)
			return
		}
		resp, err := http.Post("http://"+regtestRPC, "application/json", bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	defer proxy.Close()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "m.txt"), []byte(mnemonic+"\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "p.txt"), []byte(docsPassphrase+"\n"), 0o600)
	wallet := filepath.Join(bin, "coin-wallet")
	common := []string{"--network", "regtest", "--wallet-dir", filepath.Join(dir, "w"), "--passphrase-file", filepath.Join(dir, "p.txt")}
	mustRun(t, env, wallet, append(common, "restore", "--mnemonic-file", filepath.Join(dir, "m.txt"))...)
	cmd := exec.Command(wallet, append(common, "--rpc", proxy.URL, "send", "--to", to, "--amount", "1")...)
	cmd.Env = append(append([]string{}, env...), "HOME="+dir)
	out, _ := cmd.CombinedOutput()
	mu.Lock()
	defer mu.Unlock()
	if hex == "" {
		t.Fatalf("coin-wallet send sent no transaction:\n%s", out)
	}
	return hex
}

// startFaucet runs the regtest faucet of the examples (no per-client limits) and returns its URL.
func startFaucet(t *testing.T, bin string, env []string, mnemonic string) string {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "faucet.txt"), []byte(mnemonic+"\n"), 0o600)
	addr := fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t))
	s := newShell(t, dir, append(append([]string{}, env...), "HOME="+t.TempDir()))
	d := s.start(fmt.Sprintf("exec %s --network regtest --rpc http://%s --mnemonic-file faucet.txt --listen %s --data-dir %s --claims-per-ip 0 --budget-per-hour 0 --access-log off",
		filepath.Join(bin, "coin-faucetd"), regtestRPC, addr, t.TempDir()))
	if err := d.waitHTTP("http://" + addr + "/api/status"); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}

// tail is the end of a line's output, for a failure message.
func tail(s string) string {
	sc := bufio.NewScanner(strings.NewReader(s))
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}

// syncBuffer is a bytes.Buffer safe for a process's writes and the test's reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
