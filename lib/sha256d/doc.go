// Package sha256d is the hot loop of the CPU miner: it hashes block headers
// with double SHA-256 for consecutive nonces and reports the first that meets
// a proof-of-work target.
//
// # Overview
//
// A block header is 88 bytes: version (u32 LE) ‖ prev_hash [32] ‖
// merkle_root [32] ‖ timestamp (u64 LE) ‖ difficulty_target (u32 LE) ‖
// nonce (u64 LE at offset 80). Its hash is SHA256(SHA256(header)), and it
// meets a target when the hash, read as a big-endian 256-bit number, is
// less than or equal to the target (also 32 bytes, big-endian).
//
// The first 64 bytes do not change while a miner runs through nonces, so
// their SHA-256 state, the midstate ([Midstate]), is computed once per
// template. Per nonce there are then exactly two compressions: the second
// 64-byte block of the header (merkle_root[28:32], timestamp, target, nonce
// and padding) from the midstate, and the single block of the outer hash.
// The first four rounds of the second block see only words that do not
// depend on the nonce, so they are done once per template as well, and the
// padding words are folded into constants.
//
// [NewScanner] prepares a template and target; [Scanner.Scan] hashes a range
// of nonces in order and returns the first solution with its hash. It
// allocates nothing and makes no interface or indirect call per nonce. Each
// nonce is first tested on the hash's first 32-bit word against the target's
// bytes 0..3; only nonces that pass are compared in full.
// A Scanner belongs to one goroutine; run one per core for parallel mining
// ([Benchmark] does so to measure a machine).
//
// [Hash] is the plain reference, crypto/sha256 applied twice to the 88
// bytes; the tests check every kernel against it.
//
// Kernels: on amd64 CPUs with the SHA extensions (and SSSE3, SSE4.1) Scan
// uses an assembly kernel (see Performance); elsewhere, or with the purego
// build tag, a pure-Go kernel. [KernelName] tells which is in use and
// [ForcePortable] forces the pure-Go one for tests and benchmarks. Both give
// bit-identical hashes.
//
// # Errors
//
// Nothing in the package returns an error: headers and targets are
// fixed-size arrays, so every input is valid. "No solution in this range"
// is Scan's found=false. The nonce does not wrap: Scan stops after nonce
// 2^64-1, and hashed (the number of nonces examined) then tells how far it
// got; a caller that exhausts the nonce space must change the template
// (timestamp or merkle root) and start again.
//
// # Performance
//
// The reference is one stream of SHA-256 compressions on the same core
// (openssl speed -evp sha256, 16 KiB blocks, ÷64 bytes), halved for two
// compressions per nonce. On the CPUs measured (PERFORMANCE.md), the
// SHA256RNDS2 instruction, which does two rounds, has a latency of about
// 4 cycles but can start every 2 cycles, so a single hash, being one long
// dependency chain through its state, keeps the SHA unit busy at most half
// of the time. The assembly kernel hashes N independent nonces ("streams")
// at once and issues their round pairs round-robin, so while one stream
// waits for its previous SHA256RNDS2 the others use the unit: throughput
// approaches one SHA256RNDS2 per 2 cycles, about twice the single-stream
// reference, and the loop is bound by the 62 SHA256RNDS2 each nonce needs.
//
// Interleaving is limited by registers: the SHA instructions are encoded
// only for X0..X15 and take W+K implicitly in X0. The kernel therefore keeps
// only each stream's two state registers, plus the newest message words on
// which the schedule recurrence depends, in registers, and passes all other
// message words and W+K through an aligned stack area. Each message-schedule
// step is emitted a couple of blocks ahead of the rounds that need it,
// between round pairs, so the schedule's own latency chain overlaps the
// rounds; computing the whole schedule first, in a separate phase, was twice
// as slow because in-order dispatch then waits on long dependent chains.
// Kernels for 2, 3 and 4 streams are generated (gen_shani.go); 4 was
// fastest and is the default, and more do not fit in the registers.
package sha256d
