package cliutil

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestGenDoc(t *testing.T) {
	app := &cli.App{Name: "coin-test", Usage: "a test", Flags: []cli.Flag{&cli.StringFlag{Name: "rpc", EnvVars: []string{"COIN_RPC"}}}}
	for kind, want := range map[string]string{"man": "coin-test", "bash": "complete -o bashdefault", "zsh": "#compdef coin-test"} {
		out, err := GenDoc(app, kind)
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("%s: %v %q", kind, err, out)
		}
	}
	if _, err := GenDoc(app, "fish"); err == nil {
		t.Fatal("unknown kind accepted")
	}
	root := t.TempDir()
	stale, _ := StaleDocs(app, root)
	if len(stale) != 3 {
		t.Fatalf("missing files not reported stale: %v", stale)
	}
	for path, kind := range DocFiles(app.Name) {
		out, _ := GenDoc(app, kind)
		os.MkdirAll(filepath.Join(root, filepath.Dir(path)), 0o755)
		os.WriteFile(filepath.Join(root, path), []byte(out), 0o644)
	}
	if stale, _ := StaleDocs(app, root); len(stale) != 0 {
		t.Fatalf("fresh files reported stale: %v", stale)
	}
}

func TestReadSecret(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pass")
	os.WriteFile(path, []byte("  hunter2\n"), 0o600)
	if s, err := ReadSecret(path, "", ""); err != nil || s != "hunter2" {
		t.Fatalf("file: %q %v", s, err)
	}
	t.Setenv("COIN_TEST_SECRET", "from-env ")
	if s, err := ReadSecret("", "COIN_TEST_SECRET", ""); err != nil || s != "from-env" {
		t.Fatalf("env: %q %v", s, err)
	}
	if _, err := ReadSecret(filepath.Join(t.TempDir(), "missing"), "", ""); err == nil {
		t.Fatal("missing file accepted")
	}
}

func TestExitError(t *testing.T) {
	err := Exitf(2, "rate limited: retry in %ds", 30)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 2 || err.Error() != "rate limited: retry in 30s" {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := PrintJSON(&b, map[string]int{"a": 1}); err != nil || b.String() != "{\n  \"a\": 1\n}\n" {
		t.Fatalf("%q", b.String())
	}
	if line, err := ReadLine(strings.NewReader("tcoin1abc\nrest")); err != nil || line != "tcoin1abc" {
		t.Fatal(line, err)
	}
	if _, err := ReadLine(strings.NewReader("\n")); err == nil {
		t.Fatal("empty input accepted")
	}
}

func TestManPage(t *testing.T) {
	app := Conventions(&cli.App{Name: "coin-test", Usage: "a test", Description: "Text.\n\nExamples:\n   coin-test --network regtest run\n   .dot",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "network", Value: "mainnet", EnvVars: []string{"COIN_NETWORK"}, Usage: "`NET`: mainnet or regtest"},
			&cli.StringFlag{Name: "rpc", Usage: "node URL"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Commands: []*cli.Command{{Name: "run", Usage: "run it", ArgsUsage: "[NAME]", Action: func(*cli.Context) error { return nil },
			Flags: []cli.Flag{&cli.StringFlag{Name: "to", Required: true, Usage: "destination `ADDRESS`"}}}},
	})
	out, err := GenDoc(app, "man")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`.TH COIN-TEST 1 `,
		`[\fB\-\-network\fR\ \fINET\fR]`, `[\fB\-\-rpc\fR\ \fIVALUE\fR]`, `[\fB\-\-json\fR]`,
		".TP\n\\fB\\-\\-network\\fR \\fINET\\fR\nNET: mainnet or regtest (default: mainnet; environment: COIN_NETWORK)\n",
		".SS \"run\"\n", `coin\-test [global options] run [options] [NAME]`,
		".TP\n\\fB\\-\\-to\\fR \\fIADDRESS\\fR\ndestination ADDRESS (required)\n",
		".EX\ncoin\\-test \\-\\-network regtest run\n\\&.dot\n.EE",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("man page lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"=[value]", `=""`, " 8\n", GlobalCategory} {
		if strings.Contains(out, bad) {
			t.Errorf("man page has %q:\n%s", bad, out)
		}
	}
}
