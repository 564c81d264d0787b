// Package rpcauth is the node's RPC credential format, Bitcoin Core's rpcauth: a line
// "USER:SALT$HASH" where HASH is hex(HMAC-SHA256(key = SALT, message = PASSWORD)). The node
// keeps only such lines (--rpc-auth), never a password; coin-cli rpcauth makes them, as
// Bitcoin Core's share/rpcauth/rpcauth.py does.
//
// # Overview
//
// Generate makes a line and a fresh random password for a user; Parse reads a line into an
// Entry; Entries.Verify checks the user and password of an HTTP Basic header against every
// entry in constant time (no early exit, crypto/subtle and hmac.Equal comparisons), so that
// the time of a refusal tells nothing about which part was wrong.
//
// # Errors
//
// Parse returns an error wrapping ErrMalformed that says which part of the line is wrong.
// Generate fails only when the system's random source does.
package rpcauth
