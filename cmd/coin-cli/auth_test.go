package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/rpcauth"
	"github.com/cointoolkit/coin/lib/rpcserver"
)

func TestRPCAuthCommand(t *testing.T) {
	r := runApp(t, "", "rpcauth", "--json", "alice")
	var out struct{ User, Password, RPCAuth string }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 0 {
		t.Fatalf("rpcauth --json: %v %+v", err, r)
	}
	e, err := rpcauth.Parse(out.RPCAuth)
	if err != nil || out.User != "alice" || !e.Verify("alice", out.Password) {
		t.Fatalf("rpcauth --json gave %+v (%v)", out, err)
	}
	r = runApp(t, "", "rpcauth", "bob")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 4 || !strings.HasPrefix(lines[1], "--rpc-auth 'bob:") {
		t.Fatalf("rpcauth: %+v", r)
	}
	e, err = rpcauth.Parse(strings.Trim(strings.TrimPrefix(lines[1], "--rpc-auth "), "'"))
	if err != nil || !e.Verify("bob", lines[3]) {
		t.Fatalf("rpcauth text output does not verify: %v\n%s", err, r.stdout)
	}
	if r := runApp(t, "", "rpcauth"); r.code != 2 || !strings.Contains(r.stderr, "user name") {
		t.Fatalf("rpcauth without user: %+v", r)
	}
	if r := runApp(t, "", "rpcauth", "a:b"); r.code != 2 {
		t.Fatalf("rpcauth a:b: %+v", r)
	}
}

// TestCredentials: coin-cli against the node's access checks (lib/rpcserver) with --rpc-auth:
// credentials from the URL, from --rpc-user and --rpc-password-file, and from the environment;
// a missing or wrong one is explained without showing the password.
func TestCredentials(t *testing.T) {
	line, pass, err := rpcauth.Generate("alice")
	if err != nil {
		t.Fatal(err)
	}
	es, _ := rpcauth.ParseAll([]string{line})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	hs, err := rpcserver.Listen(rpcserver.HTTPConfig{Bind: "127.0.0.1:0", Auth: es, AuthFailureDelay: -1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	rpc := jsonrpc.NewServer(jsonrpc.Options{Logger: quiet})
	rpc.Register(jsonrpc.Method{Name: "getblockcount", Handler: func(context.Context, jsonrpc.Params) (any, error) { return 42, nil }})
	go hs.Serve(rpc)
	defer hs.Close()
	addr := hs.Addr().String()
	pwFile := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pwFile, []byte(pass+"\n"), 0o600)
	badFile := filepath.Join(t.TempDir(), "bad")
	os.WriteFile(badFile, []byte("WRONGPASS\n"), 0o600)

	for _, c := range []struct {
		name string
		args []string
		want string // stdout, or a part of stderr when the exit is 1
		code int
	}{
		{"URL credentials", []string{"--rpc", "http://alice:" + pass + "@" + addr}, "42\n", 0},
		{"password file", []string{"--rpc", addr, "--rpc-user", "alice", "--rpc-password-file", pwFile}, "42\n", 0},
		{"no credentials", []string{"--rpc", addr}, "wants credentials (HTTP 401)", 1},
		{"wrong URL password", []string{"--rpc", "http://alice:WRONGPASS@" + addr}, `refused the credentials of user "alice" (HTTP 401)`, 1},
		{"wrong password file", []string{"--rpc", addr, "--rpc-user", "alice", "--rpc-password-file", badFile}, `user "alice"`, 1},
		{"wrong user", []string{"--rpc", "http://mallory:" + pass + "@" + addr}, `user "mallory"`, 1},
	} {
		r := runApp(t, "", append(c.args, "getblockcount")...)
		if r.code != c.code || (c.code == 0 && r.stdout != c.want) || (c.code != 0 && !strings.Contains(r.stderr, c.want)) {
			t.Errorf("%s: %+v, want exit %d with %q", c.name, r, c.code, c.want)
		}
		if strings.Contains(r.stderr+r.stdout, "WRONGPASS") || strings.Contains(r.stderr, pass) {
			t.Errorf("%s: a password is printed: %+v", c.name, r)
		}
	}
	t.Setenv("COIN_RPC", "http://"+addr)
	t.Setenv("COIN_RPC_USER", "alice")
	t.Setenv("COIN_RPC_PASSWORD_FILE", pwFile)
	if r := runApp(t, "", "getblockcount"); r.code != 0 || r.stdout != "42\n" {
		t.Errorf("credentials from the environment: %+v", r)
	}
}
