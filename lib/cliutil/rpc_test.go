package cliutil

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/cointoolkit/coin/lib/jsonrpc"
)

// credentials runs an app with RPCCredentialFlags and args, and returns what NodeCredentials
// made of nodeURL: the clean URL and the basic auth a server receives ("" without).
func credentials(t *testing.T, nodeURL string, args ...string) (string, string, error) {
	t.Helper()
	var seen string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); ok {
			seen = u + ":" + p
		}
		w.Write([]byte(`{"jsonrpc":"2.0","result":1,"id":1}`))
	}))
	defer srv.Close()
	var clean string
	var cerr error
	app := &cli.App{Name: "t", Flags: RPCCredentialFlags(), Action: func(c *cli.Context) error {
		u, opts, err := NodeCredentials(c, strings.Replace(nodeURL, "HOST", srv.Listener.Addr().String(), 1))
		if err != nil {
			cerr = err
			return nil
		}
		clean = u
		return jsonrpc.NewClient(u, opts...).Call(context.Background(), "x", nil, nil)
	}}
	if err := app.Run(append([]string{"t"}, args...)); err != nil {
		t.Fatal(err)
	}
	return strings.Replace(clean, srv.Listener.Addr().String(), "HOST", 1), seen, cerr
}

func TestNodeCredentials(t *testing.T) {
	pwFile := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pwFile, []byte("from-file\n"), 0o600)
	t.Setenv(EnvRPCPassword, "")
	os.Unsetenv(EnvRPCPassword)
	for _, c := range []struct {
		url   string
		args  []string
		clean string
		sent  string
	}{
		{"http://HOST", nil, "http://HOST", ""},
		{"http://alice:pw@HOST", nil, "http://HOST", "alice:pw"},
		{"http://HOST", []string{"--rpc-user", "alice", "--rpc-password-file", pwFile}, "http://HOST", "alice:from-file"},
		{"http://alice@HOST", []string{"--rpc-password-file", pwFile}, "http://HOST", "alice:from-file"},
		{"http://alice:pw@HOST", []string{"--rpc-user", "alice"}, "http://HOST", "alice:pw"},
	} {
		clean, sent, err := credentials(t, c.url, c.args...)
		if err != nil || clean != c.clean || sent != c.sent {
			t.Errorf("%s %v: %q sent %q, %v; want %q sent %q", c.url, c.args, clean, sent, err, c.clean, c.sent)
		}
	}
	t.Setenv(EnvRPCUser, "bob")
	t.Setenv(EnvRPCPasswordFile, pwFile)
	if _, sent, err := credentials(t, "http://HOST"); err != nil || sent != "bob:from-file" {
		t.Errorf("environment: sent %q, %v", sent, err)
	}
	os.Unsetenv(EnvRPCPasswordFile)
	t.Setenv(EnvRPCPassword, "from-env")
	if _, sent, err := credentials(t, "http://HOST"); err != nil || sent != "bob:from-env" {
		t.Errorf("%s: sent %q, %v", EnvRPCPassword, sent, err)
	}
	os.Unsetenv(EnvRPCUser)
	os.Unsetenv(EnvRPCPassword)
	for _, c := range []struct {
		url  string
		args []string
		want string
	}{
		{"http://HOST", []string{"--rpc-password-file", pwFile}, "needs --rpc-user"},
		{"http://HOST", []string{"--rpc-user", "alice"}, "no RPC password"},
		{"http://alice:pw@HOST", []string{"--rpc-user", "bob"}, "one user and --rpc-user another"},
		{"http://HOST", []string{"--rpc-user", "alice", "--rpc-password-file", pwFile + ".missing"}, "RPC password"},
	} {
		if _, _, err := credentials(t, c.url, c.args...); err == nil || !strings.Contains(err.Error(), c.want) ||
			strings.Contains(err.Error(), "from-file") {
			t.Errorf("%s %v: %v, want %q", c.url, c.args, err, c.want)
		}
	}
}
