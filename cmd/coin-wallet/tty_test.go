//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/wallet"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: the master (the test types on it and reads what the
// program writes to its terminal) and the slave (the program's controlling terminal).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("pty number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open pty slave: %v", err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// ttyOutput collects what the program writes to its terminal.
type ttyOutput struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *ttyOutput) String() string { o.mu.Lock(); defer o.mu.Unlock(); return o.buf.String() }

// waitFor waits until the terminal shows s n times.
func (o *ttyOutput) waitFor(t *testing.T, s string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(o.String(), s) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed %q %d times; it shows %q", s, n, o.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The README's line through the real executable: 'coin-wallet --wallet-dir w restore <
// wallet.json  # asks for a passphrase' reads the JSON of 'coin-wallet new' from standard
// input and asks for the passphrase (twice) on the terminal, /dev/tty; the wallet opens
// with what was typed. Without a terminal, and no --passphrase-file or
// COIN_WALLET_PASSPHRASE, it fails saying how to give one, and creates nothing.
func TestRestoreAsksPassphraseOnTTY(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs the executable")
	}
	bin := filepath.Join(proctest.Build(t, "./cmd/coin-wallet"), "coin-wallet")
	tmp := t.TempDir()
	// wallet.json as 'coin-wallet new > wallet.json' writes it.
	newOut, err := exec.Command(bin, "--network", "regtest", "new").Output()
	if err != nil {
		t.Fatal(err)
	}
	var nw struct{ Mnemonic, Address string }
	if err := json.Unmarshal(newOut, &nw); err != nil {
		t.Fatalf("new printed %q: %v", newOut, err)
	}
	walletJSON := filepath.Join(tmp, "wallet.json")
	if err := os.WriteFile(walletJSON, newOut, 0o600); err != nil {
		t.Fatal(err)
	}
	// The README's environment: COIN_NETWORK, and no passphrase in the environment.
	env := append(slicesWithout(os.Environ(), "COIN_WALLET_PASSPHRASE=", "COIN_WALLET_PASSPHRASE_FILE="), "COIN_NETWORK=regtest")

	restore := func(dir string, tty *os.File) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
		in, err := os.Open(walletJSON)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { in.Close() })
		cmd := exec.Command(bin, "--wallet-dir", dir, "restore")
		var out, errb bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env = in, &out, &errb, env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal but tty
		if tty != nil {
			cmd.ExtraFiles = []*os.File{tty}
			cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, 3
		}
		return cmd, &out, &errb
	}

	// No terminal at all: a clear error, nothing created.
	none := filepath.Join(tmp, "none")
	cmd, out, errb := restore(none, nil)
	err = cmd.Run()
	var xe *exec.ExitError
	if !errors.As(err, &xe) || xe.ExitCode() != 1 || out.Len() != 0 ||
		!strings.Contains(errb.String(), "--passphrase-file") || !strings.Contains(errb.String(), "COIN_WALLET_PASSPHRASE") ||
		strings.Contains(errb.String(), strings.Join(strings.Fields(nw.Mnemonic)[:3], " ")) {
		t.Fatalf("restore without a terminal: %v, stdout %q, stderr %q", err, out, errb)
	}
	if _, err := os.Stat(none); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("restore without a passphrase left %s behind: %v", none, err)
	}

	// With a controlling terminal: the passphrase is asked there.
	master, slave := openPTY(t)
	dir := filepath.Join(tmp, "w")
	cmd, out, errb = restore(dir, slave)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	var term ttyOutput
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			term.mu.Lock()
			term.buf.Write(b[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	const pass = "correct horse"
	term.waitFor(t, "wallet passphrase: ", 1)
	master.WriteString(pass + "\n")
	term.waitFor(t, "repeat the passphrase: ", 1)
	master.WriteString(pass + "\n")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("restore on a terminal: %v\nstdout %q\nstderr %q\nterminal %q", err, out, errb, term.String())
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("restore did not finish; terminal %q, stderr %q", term.String(), errb)
	}
	var res struct{ Address, WalletDir string }
	_ = json.Unmarshal(out.Bytes(), &res)
	want, _ := wallet.AddressFromMnemonic(nw.Mnemonic, params.Regtest, 0)
	if res.Address != want || res.Address != nw.Address {
		t.Fatalf("restore printed %q, want address %s", out, want)
	}
	// The wallet opens with the passphrase typed on the terminal (and not with another).
	s, err := wallet.Open(dir, params.Regtest)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Unlock("wrong"); !errors.Is(err, wallet.ErrWrongPassphrase) {
		t.Fatalf("unlock with a wrong passphrase: %v", err)
	}
	ring, err := s.Unlock(pass)
	if err != nil {
		t.Fatalf("unlock with the typed passphrase: %v", err)
	}
	ring.Wipe()
}

// slicesWithout drops the entries of env that start with one of the prefixes.
func slicesWithout(env []string, prefixes ...string) []string {
	var out []string
next:
	for _, e := range env {
		for _, p := range prefixes {
			if strings.HasPrefix(e, p) {
				continue next
			}
		}
		out = append(out, e)
	}
	return out
}
