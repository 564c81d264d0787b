package confile

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// EnvConf is the environment variable of --conf.
const EnvConf = "COIN_CONF"

// FlagName is the name of the option that names the file.
const FlagName = "conf"

// ErrBadValue is what the error of a line whose value its option does not parse matches.
var ErrBadValue = errors.New("bad value in configuration file")

// Flag is --conf FILE, the option every executable takes (cliutil.Conventions adds it).
func Flag() cli.Flag {
	return &cli.StringFlag{Name: FlagName, EnvVars: []string{EnvConf},
		Usage: "read options from the configuration `FILE` (key=value lines, [mainnet]/[testnet]/[regtest] sections: docs/operations.md); " +
			"the command line and the environment override it",
		DefaultText: "~/.coin/coin.conf when it exists"}
}

// DefaultPath is ~/.coin/coin.conf ("" without a home directory).
func DefaultPath() string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".coin", "coin.conf")
}

// Load reads the configuration file named by path (from --conf or COIN_CONF; it must exist)
// or, when path is "", the default file if it exists. It returns nil and no error when
// there is no file to read.
func Load(path string) (*File, error) {
	if path == "" {
		def := DefaultPath()
		if def == "" {
			return nil, nil
		}
		if _, err := os.Stat(def); errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		path = def
	}
	return Read(path)
}

// notKeys are options that are no configuration: they act on the command line only.
var notKeys = map[string]bool{"help": true, "h": true, "version": true, "v": true,
	"generate-bash-completion": true, FlagName: true}

// Options are the choices Apply cannot read from the context itself.
type Options struct {
	// Network, when not "", is the network given on the command line where urfave/cli did
	// not parse it (after a command that parses no flags).
	Network string
	// Warn gets the warnings (nil: none).
	Warn io.Writer
}

// Apply sets the options flags (the global options of the app of c, its root context) from
// f where neither the command line nor the environment set them: from the network's section
// when it gives the option, else from the top of the file. An app with an "rpc" option and
// no "rpc-bind" one that got no --rpc takes http://RPC-BIND from the file (an unspecified
// host, 0.0.0.0 or [::], becomes loopback). Keys that no coin executable takes (KnownKeys)
// are warnings to o.Warn.
func Apply(c *cli.Context, flags []cli.Flag, f *File, o Options) error {
	own := map[string]cli.Flag{}
	for _, fl := range flags {
		for _, n := range fl.Names() {
			if !notKeys[fl.Names()[0]] && len(n) > 1 { // -a, -t: shorthands, not keys
				own[n] = fl
			}
		}
	}
	known := KnownKeys()
	for _, e := range f.Entries {
		if own[e.Key] == nil && !known[e.Key] && o.Warn != nil {
			fmt.Fprintf(o.Warn, "warning: %s:%d: unknown key %q: no coin executable takes it (ignored)\n", f.Path, e.Line, e.Key)
		}
	}
	net := o.Network
	if net == "" {
		if _, ok := own["network"]; ok && c.IsSet("network") {
			net = c.String("network")
		} else if e, ok := f.Network(); ok {
			net = e.Value
		} else if _, ok := own["network"]; ok {
			net = c.String("network") // the default
		}
	}
	for _, fl := range flags {
		name := fl.Names()[0]
		if notKeys[name] || c.IsSet(name) {
			continue
		}
		entries := f.values(keyNames(fl), net)
		if len(entries) == 0 {
			continue
		}
		if len(entries) > 1 && !repeatable(fl) {
			a, b := entries[0], entries[len(entries)-1]
			return &LineError{Path: f.Path, Line: b.Line, Err: ErrSyntax,
				Msg: fmt.Sprintf("%s given again (line %d too): it takes one value", b.Key, a.Line)}
		}
		for _, e := range entries {
			if err := c.Set(name, e.Value); err != nil {
				return &LineError{Path: f.Path, Line: e.Line, Err: ErrBadValue,
					Msg: fmt.Sprintf("invalid value %q for %s: %v", e.Value, e.Key, err)}
			}
		}
	}
	if rpc, ok := own["rpc"]; ok && own["rpc-bind"] == nil && !c.IsSet(rpc.Names()[0]) {
		if entries := f.values([]string{"rpc-bind"}, net); len(entries) > 0 {
			e := entries[len(entries)-1]
			u, err := clientURL(e.Value)
			if err != nil {
				return &LineError{Path: f.Path, Line: e.Line, Err: ErrBadValue, Msg: fmt.Sprintf("rpc-bind %q: %v", e.Value, err)}
			}
			if err := c.Set(rpc.Names()[0], u); err != nil {
				return &LineError{Path: f.Path, Line: e.Line, Err: ErrBadValue, Msg: fmt.Sprintf("rpc-bind %q: %v", e.Value, err)}
			}
		}
	}
	return nil
}

// keyNames are the keys of an option: its names but the one-letter shorthands.
func keyNames(f cli.Flag) []string {
	var out []string
	for _, n := range f.Names() {
		if len(n) > 1 {
			out = append(out, n)
		}
	}
	return out
}

// values are the entries of any of keys (an option's name and aliases) for network net.
func (f *File) values(keys []string, net string) []Entry {
	var top, sec []Entry
	for _, k := range keys {
		for _, e := range f.Entries {
			if e.Key != k {
				continue
			}
			switch e.Section {
			case "":
				top = append(top, e)
			case net:
				sec = append(sec, e)
			}
		}
	}
	byLine := func(a, b Entry) int { return a.Line - b.Line }
	if net != "" && len(sec) > 0 {
		return slices.SortedFunc(slices.Values(sec), byLine)
	}
	return slices.SortedFunc(slices.Values(top), byLine)
}

// clientURL is the URL a client calls for the node's listen address bind.
func clientURL(bind string) (string, error) {
	host, port, err := net.SplitHostPort(bind)
	if err != nil {
		return "", err
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

// repeatable reports whether an option takes several values, one per line.
func repeatable(f cli.Flag) bool {
	switch f.(type) {
	case *cli.StringSliceFlag, *cli.IntSliceFlag, *cli.Int64SliceFlag, *cli.Float64SliceFlag,
		*cli.UintSliceFlag, *cli.Uint64SliceFlag:
		return true
	}
	return false
}

// knownKeysFile is the generated list of the options of the six executables: one line per
// key, "KEY TOOL,TOOL..." (scripts/genconf writes it; deploy's TestConfFresh fails when it is
// stale).
//
//go:embed known_keys.txt
var knownKeysFile string

// KnownKeys is the set of keys (long option names and their aliases) that at least one coin
// executable takes from the configuration file.
func KnownKeys() map[string]bool {
	m := map[string]bool{}
	for _, line := range strings.Split(knownKeysFile, "\n") {
		if k, _, _ := strings.Cut(strings.TrimSpace(line), " "); k != "" && !strings.HasPrefix(k, "#") {
			m[k] = true
		}
	}
	return m
}
