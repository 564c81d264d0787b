package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// units are the systemd units and the executable each runs.
var units = map[string]string{"coin-node.service": "coin-node", "coin-faucetd.service": "coin-faucetd"}

// readUnit is the text of a unit, continuation lines joined.
func readUnit(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "systemd", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), "\\\n", " ")
}

// TestSystemdUnitsHardened: each unit runs its executable as the dedicated coin user with
// /etc/coin/coin.conf, its state under /var/lib/coin, and bitcoind.service's hardening (and
// ProtectSystem=strict rather than full); the options of its command line are the
// executable's (it accepts them with --help).
func TestSystemdUnitsHardened(t *testing.T) {
	bin := bins(t)
	for name, tool := range units {
		text := readUnit(t, name)
		for _, want := range []string{
			"User=coin", "Group=coin", "StateDirectory=coin/", "ProtectSystem=strict", "PrivateTmp=true",
			"NoNewPrivileges=true", "PrivateDevices=true", "MemoryDenyWriteExecute=true", "ProtectHome=true",
			"CapabilityBoundingSet=\n", "UMask=0077",
			"ExecStart=/usr/local/bin/" + tool + " --conf /etc/coin/coin.conf --data-dir /var/lib/coin/",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q", name, strings.TrimSpace(want))
			}
		}
		m := regexp.MustCompile(`(?m)^ExecStart=\S+ (.*)$`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("%s: no ExecStart", name)
		}
		args := strings.Fields(strings.ReplaceAll(m[1], "${CREDENTIALS_DIRECTORY}", "/run/credentials"))
		out, err := exec.Command(filepath.Join(bin, tool), append(args, "--help")...).CombinedOutput()
		if err != nil {
			t.Errorf("%s: %s %s --help: %v\n%s", name, tool, strings.Join(args, " "), err, out)
		}
	}
}

// TestSystemdAnalyzeVerify runs systemd-analyze verify on the units (with ExecStart pointing
// at freshly built executables, which it checks exist): any complaint fails the test.
func TestSystemdAnalyzeVerify(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (it comes with systemd): the units are not verified here")
	}
	bin := bins(t)
	dir := t.TempDir()
	var paths []string
	for name := range units {
		text := strings.ReplaceAll(readUnit(t, name), "/usr/local/bin/", bin+string(os.PathSeparator))
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	out, err := exec.Command(sa, append([]string{"verify", "--man=no"}, paths...)...).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}
