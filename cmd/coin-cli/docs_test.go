package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/cliutil/cliutiltest"
	"github.com/cointoolkit/coin/lib/proctest"
)

// TestGlobalFlagsEverywhere: every global option reaches every command (the methods take
// theirs out of their arguments) given before it, after it or in its environment variable.
func TestGlobalFlagsEverywhere(t *testing.T) {
	cliutiltest.GlobalFlags(t, newApp, cliutiltest.Commands(newApp(), nil), nil)
}

// TestBashCompletion sources the generated completion scripts in bash and completes
// options with the real executables: "--" and "--net" after the executable, and options
// after a command (the global ones included).
func TestBashCompletion(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	bin := proctest.Build(t, "./cmd/coin-cli", "./cmd/coin-wallet")
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool  string
		words []string
		want  []string
		not   []string
	}{
		{"coin-cli", []string{"--"}, []string{"--network", "--rpc", "--rpcwait-timeout", "--table"}, nil},
		{"coin-cli", []string{"--net"}, []string{"--network"}, []string{"--rpc"}},
		{"coin-cli", []string{"getblock"}, []string{"getblockcount", "getblockhash"}, []string{"stop"}},
		{"coin-wallet", []string{"--"}, []string{"--network", "--wallet-dir", "--passphrase-file"}, nil},
		{"coin-wallet", []string{"send", "--"}, []string{"--to", "--amount", "--network", "--passphrase-file"}, nil},
		{"coin-wallet", []string{"create", "--pass"}, []string{"--passphrase-file"}, []string{"--network"}},
	} {
		script := filepath.Join(root, "completions", c.tool+".bash")
		words := append([]string{filepath.Join(bin, c.tool)}, c.words...)
		fn := "_" + strings.ReplaceAll(c.tool, "-", "_") + "_complete"
		sh := fmt.Sprintf(`source %q; COMP_WORDS=(%s); COMP_CWORD=%d; %s; printf '%%s\n' "${COMPREPLY[@]}"`,
			script, shellWords(words), len(words)-1, fn)
		out, err := exec.Command("bash", "-c", sh).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", c.tool, c.words, err, out)
		}
		got := strings.Fields(string(out))
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("%s %v<TAB>: %v lacks %s", c.tool, c.words, got, w)
			}
		}
		for _, w := range c.not {
			if slices.Contains(got, w) {
				t.Errorf("%s %v<TAB>: %v has %s", c.tool, c.words, got, w)
			}
		}
	}
}

func shellWords(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
