//go:build linux

package cliutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// As a pod reads a Kubernetes Secret: the file is root's, mode 0440, group the pod's fsGroup,
// and the reader a non-root user in that group. A child process of this test, run as uid
// 10001 with group 2000, reads it; with the group taken away it is refused.
func TestSecretFileFromKubernetesSecret(t *testing.T) {
	if f := os.Getenv("COIN_TEST_READ_SECRET"); f != "" {
		if _, err := ReadMnemonic(f, "", ""); err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(3)
		}
		os.Exit(0)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a root-owned file and run a child as another user")
	}
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} { // t.TempDir's directories are 0700
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f := filepath.Join(dir, "mnemonic")
	if err := os.WriteFile(f, []byte(testWords+"\n"), 0o440); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(f, 0, 2000); err != nil {
		t.Fatal(err)
	}
	// The test binary itself, where the other user can run it.
	bin := filepath.Join(dir, "cliutil.test")
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(groups []uint32) (string, error) {
		cmd := exec.Command(bin, "-test.run", "^TestSecretFileFromKubernetesSecret$")
		cmd.Env = append(os.Environ(), "COIN_TEST_READ_SECRET="+f)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 10001, Gid: 10001, Groups: groups}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run([]uint32{2000}); err != nil {
		t.Fatalf("a member of the file's group could not read it: %v\n%s", err, out)
	}
	out, err := run(nil)
	if err == nil {
		t.Fatal("a user outside the file's group read a 0440 secret (the kernel should refuse, and so should the mode rule)")
	}
	t.Logf("outside the group: %s", out)
}
