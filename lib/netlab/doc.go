// Package netlab runs a network of real coin-node processes, each in its own Linux network
// namespace with its own address, joined through a hub namespace by a user-space forwarder
// (AF_PACKET) that gives every link a one-way delay, jitter and loss with source addresses
// intact, and can cut regions apart. On it, the lab mines, sends transfers, kills and
// restarts nodes, plays an eclipse attacker and a bad peer, reads what happened from the
// nodes' JSON logs, and writes the figures and CDF plots of docs/network.md.
//
// It needs root, iproute2 and ethtool (Supported says why not). New builds a lab, Close
// removes everything it made (also on SIGINT and SIGTERM), and CleanStale removes what a
// crashed run left (namespaces named coinlab-<pid>- whose pid is gone). bench/netlab drives
// it: make netlab and the reduced lab of make test.
package netlab
