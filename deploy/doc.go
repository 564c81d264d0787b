// Package deploy holds what an operator installs besides the executables: coin.conf.example
// (generated from the options by scripts/genconf) and the systemd units under systemd/. Its
// tests check them, and the operator-facing conventions every executable shares, through the
// real executables: one configuration file serving a node and coin-cli, and exit status 2 for
// every usage error. docs/operations.md explains the install.
//
// # Overview
//
// There is no code here, only files and their tests.
//
// # Errors
//
// None: nothing is exported.
package deploy
