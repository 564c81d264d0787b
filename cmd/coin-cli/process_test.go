package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The binary is built once, on first use, into a directory TestMain removes.
var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

func coinCLI(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			buildErr = err
			return
		}
		if binDir, buildErr = os.MkdirTemp("", "coin-cli-test"); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, appName)
		out, err := exec.Command(goTool, "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = errors.New(err.Error() + ": " + string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("building coin-cli: %v", buildErr)
	}
	return binPath
}

func cleanupBinary() {
	if binDir != "" {
		os.RemoveAll(binDir)
	}
}

// runBinary runs the built coin-cli as a process.
func runBinary(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(coinCLI(t), args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// TestProcess runs the real executable against a JSON-RPC server made of lib/jsonrpc's
// Server with a few fake methods, and checks what a shell script would see.
func TestProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	f := newFakeNode(t)
	for _, tc := range []struct {
		name   string
		stdin  string
		args   []string
		stdout string
		code   int
		stderr string
	}{
		{"integer bare", "", []string{"--rpc", f.URL, "getblockcount"}, "42\n", 0, ""},
		{"string raw", "", []string{"--rpc", f.URL, "getblockhash", "0"}, hash0 + "\n", 0, ""},
		{"object indented", "", []string{"--rpc", f.URL, "getblock", hash0}, block0JSON, 0, ""},
		{"array of objects piped is JSON", "", []string{"--rpc", f.URL, "getutxosbyaddress", addr1}, utxosJSON, 0, ""},
		{"--table", "", []string{"--rpc", f.URL, "--table", "getutxosbyaddress", addr1}, utxosTable, 0, ""},
		{"null prints nothing", "", []string{"--rpc", f.URL, "call", "nothing"}, "", 0, ""},
		{"-stdin", "00ab\n", []string{"-rpc", f.URL, "-stdin", "sendrawtransaction"}, "txid-of-00AB\n", 0, ""},
		{"RPC error", "", []string{"--rpc", f.URL, "getblock", strings.Repeat("0", 64)}, "", 1,
			"error code: -1\nerror message:\nblock not found\n"},
		{"method not found", "", []string{"--rpc", f.URL, "gettxoutsetinfo"}, "", 32601 & 0xff, // 89
			"error code: -32601\nerror message:\nMethod not found\n"},
		{"invalid params", "", []string{"--rpc", f.URL, "call", "getblockhash", "true"}, "", 32602 & 0xff, // 90
			"error code: -32602\nerror message:\ninvalid parameter 1 (height): expected non-negative integer, got boolean\n"},
		{"client-side error", "", []string{"--rpc", f.URL, "getblockhash", "x"}, "", 1,
			"error: getblockhash: argument 1 (height): \"x\" is not a non-negative integer\n"},
		{"usage error", "", []string{"--rpc", f.URL, "getblockhash"}, "", 2,
			"error: too few arguments for getblockhash: got 0, want 1\nusage: coin-cli [global options] getblockhash <height>\n(see 'coin-cli getblockhash --help')\n"},
	} {
		r := runBinary(t, tc.stdin, tc.args...)
		if r.stdout != tc.stdout || r.code != tc.code || r.stderr != tc.stderr {
			t.Errorf("%s: got exit %d\nstdout %q\nstderr %q\nwant exit %d\nstdout %q\nstderr %q",
				tc.name, r.code, r.stdout, r.stderr, tc.code, tc.stdout, tc.stderr)
		}
	}

	// A refused connection explains its two causes.
	u := closedURL()
	r := runBinary(t, "", "--rpc", u, "getblockcount")
	if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "error: cannot connect to the node at "+u+": connection refused.\n") ||
		!strings.Contains(r.stderr, "--rpc-bind") || !strings.Contains(r.stderr, "regtest 38332") {
		t.Errorf("refused: %+v", r)
	}

	// Help works without a node.
	r = runBinary(t, "", "--rpc", u, "getblock", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "coin-cli getblock $(coin-cli getblockhash 0)") {
		t.Errorf("getblock --help: %+v", r)
	}
}

// TestProcessShell checks the habit the string output exists for: h=$(coin-cli getblockhash 0).
func TestProcessShell(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	f := newFakeNode(t)
	cmd := exec.Command(sh, "-c", `set -e; h=$("$CLI" getblockhash 0); "$CLI" getblock "$h" >/dev/null; echo "$h"; "$CLI" getblock ff || echo "status $?"`)
	cmd.Env = append(os.Environ(), "CLI="+coinCLI(t), "COIN_RPC="+f.URL)
	out, err := cmd.CombinedOutput()
	want := hash0 + "\nerror code: -1\nerror message:\nblock not found\nstatus 1\n"
	if err != nil || string(out) != want {
		t.Errorf("shell: %v\n%s\nwant\n%s", err, out, want)
	}
}
