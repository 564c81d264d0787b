//go:build linux

package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/wallet"
)

// TestFaucetdReadsKubernetesSecret runs coin-faucetd as the chart's faucet pod does: as uid
// 10001 (runAsUser, runAsGroup and fsGroup 10001 in the chart's values), its mnemonic the
// file of a Secret volume, which Kubernetes gives to root with the pod's fsGroup and mode
// 0440 whenever fsGroup is set. The faucet starts and answers; the same file readable by
// others (0444) is refused with the chmod to run.
func TestFaucetdReadsKubernetesSecret(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a root-owned Secret file and run coin-faucetd as another user")
	}
	n := startNode(t)
	m, addr, _ := wallet.NewMnemonic(12, params.Regtest)
	n.generate(t, 101, addr)

	// A tree the pod's user can walk: the executable, the Secret's file, its data volume.
	root, err := os.MkdirTemp("", "coin-k8s-secret-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "coin-faucetd")
	exe, err := os.ReadFile(filepath.Join(buildBinaries(t), "coin-faucetd"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(root, "mnemonic")
	if err := os.WriteFile(secret, []byte(m+"\n"), 0o440); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(secret, 0, 10001); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(root, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(data, 10001, 10001); err != nil {
		t.Fatal(err)
	}

	run := func() (*exec.Cmd, *proctest.Buffer, string) {
		listen := fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t))
		cmd := exec.Command(bin, "--network", "regtest", "--rpc", n.URL(), "--listen", listen, "--data-dir", data,
			"--mnemonic-file", secret)
		cmd.Env = []string{"HOME=" + root}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 10001, Gid: 10001, Groups: []uint32{10001}}}
		out := &proctest.Buffer{}
		cmd.Stdout, cmd.Stderr = out, out
		return cmd, out, "http://" + listen
	}

	cmd, out, url := run()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
		}
	})
	for deadline := time.Now().Add(30 * time.Second); ; {
		select {
		case err := <-exited:
			t.Fatalf("coin-faucetd with a root:10001 0440 mnemonic file exited: %v\n%s", err, out.String())
		default:
		}
		if resp, err := http.Get(url + "/api/status"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("coin-faucetd does not answer\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if strings.Contains(out.String(), strings.Join(strings.Fields(m)[:3], " ")) {
		t.Fatal("the mnemonic reached the log")
	}

	// Readable by others too: refused, whoever owns it.
	if err := os.Chmod(secret, 0o444); err != nil {
		t.Fatal(err)
	}
	cmd2, out2, _ := run()
	if err := cmd2.Run(); err == nil || !strings.Contains(out2.String(), "chmod 600 "+secret) {
		t.Fatalf("a 0444 Secret file: %v\n%s", err, out2.String())
	}
}
