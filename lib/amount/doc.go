// Package amount owns the coin's unit and converts between subunits (1 COIN = 100,000,000)
// and decimal COIN text, exactly, without floating point.
//
// # Overview
//
// Coin (subunits per COIN) and MaxMoney (the 21,000,000 COIN supply cap) are defined here
// and only here (protocol §2): lib/consensus bounds amounts and sums with them, and the wallet,
// the faucet and the commands read them, without importing the consensus rules for a unit.
//
// Format gives "12.34500000" (always 8 fractional digits). Parse reads a decimal number's
// text ("1.5", "100", "0.00000001") into subunits, rejecting more than 8 fractional digits,
// signs, exponents, zero when not allowed, and values above the supply cap.
//
// # Errors
//
// Parse returns ErrSyntax, ErrPrecision, ErrRange or ErrZero (errors.Is-matchable).
package amount
