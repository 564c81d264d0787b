// Package cliutil is the output and error conventions shared by every coin executable:
// JSON on stdout when it is piped, tables on a terminal, errors on stderr with non-zero
// exit codes, and secrets read from stdin, a file or a terminal prompt, never argv.
//
// # Overview
//
// Executables return errors from their actions; main calls Exit(Run(newApp(), os.Args)):
// Run lets an optional-value option take its value in the next word (--log-file PATH, args.go)
// and Exit prints the error and exits with its code. An ExitError carries a specific exit
// code (ExitUsage, 2, for every usage error: UsageError, BadUsage; bitcoin-cli style |N| for
// RPC errors, ...); any other error prints "error: ..." and exits 1.
//
// Conventions (conventions.go) gives every app the shared command-line habits, the
// configuration file among them: --conf FILE (COIN_CONF, default ~/.coin/coin.conf) is read
// by lib/confile before any command runs and sets every global option that the command line
// and the environment left unset.
//
// Tools that call the node share the credential options (rpc.go): RPCCredentialFlags adds
// --rpc-user and --rpc-password-file, and NodeCredentials takes the credentials off the --rpc
// URL and out of those options, giving the URL to print and log and the client options that
// send them.
//
// # Errors
//
// ReadSecret fails when no secret source is available (no file, no env var, no terminal).
package cliutil

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/olekukonko/tablewriter"
	"golang.org/x/term"
)

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// StdoutIsTerminal reports whether standard output is a terminal.
func StdoutIsTerminal() bool { return IsTerminal(os.Stdout) }

// PrintJSON writes v as 2-space-indented JSON and a newline.
func PrintJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// PrintTable writes rows under header as a text table.
func PrintTable(w io.Writer, header []string, rows [][]string) error {
	t := tablewriter.NewTable(w)
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return err
	}
	return t.Render()
}

// ExitError is an error with a process exit code. Message lines go to stderr as they are.
type ExitError struct {
	Code    int
	Message string
	Err     error // the cause, when there is one (errors.Is and As see through)
}

func (e *ExitError) Error() string { return e.Message }

// Unwrap is the cause.
func (e *ExitError) Unwrap() error { return e.Err }

// Exitf builds an ExitError.
func Exitf(code int, format string, args ...any) error {
	return &ExitError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Exit prints err to stderr and exits: the ExitError's code and message as they are, or
// "error: <err>" with status 1. A nil err exits 0.
func Exit(err error) {
	if err == nil {
		os.Exit(0)
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Message != "" {
			fmt.Fprintln(os.Stderr, strings.TrimRight(ee.Message, "\n"))
		}
		os.Exit(ee.Code)
	}
	fmt.Fprintln(os.Stderr, "error: "+err.Error())
	os.Exit(1)
}

// ReadSecret gets a secret (a passphrase or a mnemonic) from, in order: the file at path
// (if path is not empty; "-" is stdin), the environment variable env (if not empty), or a
// terminal prompt without echo. The secret is trimmed of surrounding white space.
func ReadSecret(path, env, prompt string) (string, error) {
	switch {
	case path == "-":
		return ReadLine(os.Stdin)
	case path != "":
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("read secret file: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	if env != "" {
		if v, ok := os.LookupEnv(env); ok {
			return strings.TrimSpace(v), nil
		}
	}
	if !IsTerminal(os.Stdin) {
		return "", errors.New("no secret given: use a file option, the " + env + " environment variable or a terminal")
	}
	fmt.Fprint(os.Stderr, prompt)
	b, err := term.ReadPassword(int(os.Stdin.Fd()))
	fmt.Fprintln(os.Stderr)
	if err != nil {
		return "", fmt.Errorf("read from terminal: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// ReadLine reads one line (up to 64 KiB) from r, trimmed.
func ReadLine(r io.Reader) (string, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, 64<<10), 4096)
	line, err := br.ReadString('\n')
	if err != nil && err != io.EOF {
		return "", err
	}
	line = strings.TrimSpace(line)
	if line == "" {
		return "", errors.New("nothing on standard input")
	}
	return line, nil
}

// ReadAll reads all of r (up to 1 MiB), trimmed.
func ReadAll(r io.Reader) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
