// Package confile reads coin.conf, the configuration file every coin executable shares, and
// feeds it to an urfave/cli app as the defaults of its global options.
//
// # Overview
//
// The format is bitcoin.conf's: "key=value" lines whose keys are the long option names
// (network=regtest, rpc-bind=127.0.0.1:38332), "#" comments, and the sections [mainnet],
// [testnet] and [regtest], whose lines apply on that network only. A repeatable option
// (connect) is given once a line. Parse reads a file into entries; File.Values picks an
// option's values for a network.
//
// Apply (cli.go) is what cliutil.Conventions runs before every executable's action: it finds
// the file (--conf FILE, COIN_CONF, or ~/.coin/coin.conf when it exists), decides the network
// (--network or COIN_NETWORK, else the file's top "network", else the option's default), and
// sets every global option that neither the command line nor the environment set from the
// network's section, else from the top of the file. So the precedence is: command line,
// environment, the network's section, the top of the file, the default. A client with an
// --rpc option and none given connects to the file's rpc-bind, so one file serves the node
// and its clients. Each executable takes the keys it knows; a key that none of the six knows
// (KnownKeys, generated from their options) is a warning naming the file and line.
//
// Example (example.go) renders deploy/coin.conf.example from the options of the six
// executables ("gendoc conf" prints one executable's; Generate asks them all);
// scripts/genconf writes it and KnownKeys' list, and deploy's TestConfFresh fails when
// either is stale.
//
// # Errors
//
// A malformed line (no "=", an empty or ill-formed key, an unknown section or network, a
// non-repeatable option given twice in one section, a value its option does not parse) is a
// *LineError
// naming the file and line that matches ErrSyntax; cliutil turns it into a usage error (exit
// status 2). A --conf file that cannot be read is an error too; a missing default file is not.
package confile
