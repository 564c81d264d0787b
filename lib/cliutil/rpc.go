package cliutil

import (
	"errors"
	"fmt"
	"net/url"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/cointoolkit/coin/lib/jsonrpc"
)

// Environment variables of the node credentials.
const (
	EnvRPCUser         = "COIN_RPC_USER"
	EnvRPCPasswordFile = "COIN_RPC_PASSWORD_FILE"
	EnvRPCPassword     = "COIN_RPC_PASSWORD"
)

// RPCCredentialFlags are --rpc-user and --rpc-password-file, the node credentials every
// tool that calls the node accepts besides credentials in its --rpc URL. The password is
// never an argument: it comes from the file, the COIN_RPC_PASSWORD environment variable or
// a terminal prompt.
func RPCCredentialFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "rpc-user", EnvVars: []string{EnvRPCUser},
			Usage: "`USER` of the node's --rpc-auth credentials (the password comes from --rpc-password-file, " + EnvRPCPassword + " or a prompt)"},
		&cli.StringFlag{Name: "rpc-password-file", EnvVars: []string{EnvRPCPasswordFile},
			Usage: "read the node RPC password from `FILE` (- for standard input)"},
	}
}

// NodeCredentials takes the credentials off a node URL (http://USER:PASSWORD@HOST:PORT) and
// adds those of RPCCredentialFlags. It returns the URL without credentials, which is safe to
// print and log, and the client options that send them (none without credentials).
func NodeCredentials(c *cli.Context, nodeURL string) (string, []jsonrpc.ClientOption, error) {
	u, err := url.Parse(nodeURL)
	if err != nil {
		return "", nil, fmt.Errorf("node URL: %w", err)
	}
	var user, pass string
	hasPass := false
	if u.User != nil {
		user = u.User.Username()
		pass, hasPass = u.User.Password()
		u.User = nil
	}
	clean := u.String()
	flagUser, file := c.String("rpc-user"), c.String("rpc-password-file")
	switch {
	case flagUser != "" && user != "" && flagUser != user:
		return "", nil, errors.New("the --rpc URL names one user and --rpc-user another: give one")
	case flagUser != "":
		user = flagUser
	}
	if user == "" {
		if file != "" {
			return "", nil, errors.New("--rpc-password-file needs --rpc-user (or a user in the --rpc URL)")
		}
		return clean, nil, nil
	}
	if !hasPass || file != "" {
		if !hasPass && file == "" && os.Getenv(EnvRPCPassword) == "" && !IsTerminal(os.Stdin) {
			return "", nil, fmt.Errorf("no RPC password for user %q: give --rpc-password-file, %s or %s", user,
				EnvRPCPasswordFile, EnvRPCPassword)
		}
		if pass, err = ReadSecret(file, EnvRPCPassword, "RPC password for "+user+": "); err != nil {
			return "", nil, fmt.Errorf("RPC password: %w", err)
		}
	}
	return clean, []jsonrpc.ClientOption{jsonrpc.WithBasicAuth(user, pass)}, nil
}
