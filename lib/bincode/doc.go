// Package bincode is the strict bincode 2 "standard" encoder and decoder that every
// transaction, block and P2P payload of the coin uses.
//
// # Overview
//
// Integers u16, u32 and u64 are varints: a value below 251 is one byte; otherwise a marker
// byte 251, 252 or 253 is followed by the value as u16, u32 or u64 little endian. u8 and bool
// are one byte. Fixed arrays are raw bytes; vectors and byte strings are a varint length and
// then their elements. Enums are a varint (u32) discriminant and then the variant's fields.
//
// Writer appends to a byte slice and never fails. Reader keeps the first error it meets
// (sticky), so a decoder can read a whole struct and check Err once.
//
// # Errors
//
// The decoder is strict: ErrNonMinimal for a marker whose value fits a shorter form,
// ErrOverflow for a value larger than the target type, ErrBool for a bool other than 0 or 1,
// ErrTruncated when the input ends early, ErrLength for a length larger than the bytes left
// (checked before anything is allocated), and ErrTrailing when bytes remain after Finish.
package bincode
