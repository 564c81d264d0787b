package consensus

import (
	"github.com/cointoolkit/coin/lib/types"
	"github.com/hdevalence/ed25519consensus"
)

// Batch verification (protocol §4). Under the ZIP 215 rules a batch of signatures verifies if and
// only if each of them verifies alone (up to the 2^-128 chance that random coefficients hide
// an invalid one), so a block, a mempool burst or a download can be checked in batches and
// still accept exactly what single verification accepts. A batch of n signatures costs a
// quarter to a half of n single verifications: one multi-scalar multiplication over all the
// R and A points replaces n double-scalar multiplications.
//
// A batch that fails says only that some signature in it is invalid: its signatures are then
// verified one by one, so the error names the first invalid input (kind ErrBadSignature, with
// the txid and the input index) exactly as single verification would.

// BatchSize is the most signatures verified in one batch. Past a few dozen the saving per
// signature levels off (BenchmarkVerifyBatch: from about 0.4 of a single verification at 8
// to about a quarter at 32 to 128 with a few keys, half with a key per signature), larger
// batches get slower again as the multiplication's tables leave the cache, and a failed batch
// costs its signatures again one by one.
const BatchSize = 64

// minParallelBatch is the smallest batch worth its own worker when workers outnumber full
// batches.
const minParallelBatch = 16

// VerifyBatch checks checks on the calling goroutine, in batches of at most BatchSize, and
// returns nil or the error of the lowest-indexed invalid signature.
func VerifyBatch(checks []SigCheck) error {
	return VerifyParallel(checks, 1)
}

// VerifyTransactions checks every input signature of txs (txids[i] is the id of txs[i]) in
// batches on up to workers goroutines (0: every CPU). It returns nil when every signature is
// valid; otherwise a slice as long as txs holding, for each transaction with an invalid
// signature, the error of its first invalid input (nil for the others).
func VerifyTransactions(txs []*types.Transaction, txids []types.Hash, magic [4]byte, workers int) []error {
	n := 0
	for _, tx := range txs {
		n += len(tx.Inputs)
	}
	checks := make([]SigCheck, 0, n)
	owner := make([]int32, 0, n)
	for i, tx := range txs {
		checks = SigChecks(tx, txids[i], magic, checks)
		for range tx.Inputs {
			owner = append(owner, int32(i))
		}
	}
	bad := verifyChecks(checks, workers, true)
	if bad == nil {
		return nil
	}
	errs := make([]error, len(txs))
	for i, err := range bad {
		if err != nil && errs[owner[i]] == nil {
			errs[owner[i]] = err
		}
	}
	return errs
}

// verifyOne checks one batch. When the batch fails it verifies the signatures one by one and
// reports each invalid one to bad (in index order, stopping after the first unless all),
// relative to the start of checks. It reports whether every signature is valid.
func verifyOne(checks []SigCheck, all bool, bad func(i int, err error)) bool {
	switch len(checks) {
	case 0:
		return true
	case 1:
		if err := checks[0].Verify(); err != nil {
			bad(0, err)
			return false
		}
		return true
	}
	if batchVerify(checks) {
		return true
	}
	// Some signature is invalid (a batch of valid ZIP 215 signatures always verifies): find
	// which with single verification, the rule the batch stands for.
	ok := true
	for i := range checks {
		if err := checks[i].Verify(); err != nil {
			bad(i, err)
			ok = false
			if !all {
				break
			}
		}
	}
	return ok
}

// batchVerify reports whether every signature of checks is valid under ZIP 215: one
// multi-scalar multiplication over the whole batch with ed25519consensus's BatchVerifier,
// which accepts exactly the signatures its single verification accepts (a batch of valid
// signatures always verifies; any invalid one makes it fail, and verifyOne then names it).
func batchVerify(checks []SigCheck) bool {
	v := ed25519consensus.NewPreallocatedBatchVerifier(len(checks))
	for i := range checks {
		c := &checks[i]
		v.Add(c.PublicKey[:], c.Message, c.Signature[:])
	}
	return v.Verify()
}
