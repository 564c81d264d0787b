package consensus

import (
	"errors"
	"math/big"
	"slices"

	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/types"
)

// CheckProofOfWork checks the header's compact target against powLimit and its hash
// against the target.
func CheckProofOfWork(h *types.BlockHeader, hash types.Hash, powLimit *big.Int) error {
	err := pow.CheckProofOfWork(hash, h.DifficultyTarget, powLimit)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pow.ErrHighHash):
		return ruleError(ErrBadProofOfWork, "invalid proof of work: block hash %s is above the target", hash)
	default:
		return ruleError(ErrBadTarget, "invalid proof of work: difficulty target 0x%08x: %v", h.DifficultyTarget, err)
	}
}

// CheckBlockSanity applies the rules that need only the block: version, size, proof of work,
// coinbase position, merkle root, unique txids and every transaction's sanity. It returns
// the txids so callers need not compute them again.
func CheckBlockSanity(b *types.Block, hash types.Hash, size int, powLimit *big.Int) ([]types.Hash, error) {
	if b.Header.Version != BlockVersion {
		return nil, ruleError(ErrBadBlockVersion, "unsupported block version %d", b.Header.Version)
	}
	if size > MaxBlockSize {
		return nil, ruleError(ErrBlockTooLarge, "block of %d bytes exceeds %d", size, MaxBlockSize)
	}
	if err := CheckProofOfWork(&b.Header, hash, powLimit); err != nil {
		return nil, err
	}
	if len(b.Transactions) == 0 {
		return nil, ruleError(ErrNoTransactions, "block has no transactions")
	}
	if !b.Transactions[0].IsCoinbase() {
		return nil, ruleError(ErrFirstTxNotCoinbase, "first transaction is not a coinbase")
	}
	for i, tx := range b.Transactions[1:] {
		if tx.IsCoinbase() {
			return nil, ruleError(ErrMultipleCoinbases, "transaction %d is a second coinbase", i+1)
		}
	}
	ids := b.TxIDs()
	if root := types.MerkleRoot(ids); root != b.Header.MerkleRoot {
		return nil, ruleError(ErrBadMerkleRoot, "merkle root %s does not match the transactions (%s)", b.Header.MerkleRoot, root)
	}
	sorted := slices.Clone(ids)
	slices.SortFunc(sorted, func(a, b types.Hash) int { return slices.Compare(a[:], b[:]) })
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return nil, ruleError(ErrDuplicateTx, "transaction %s appears twice", sorted[i])
		}
	}
	for i, tx := range b.Transactions {
		if err := CheckTransactionSanity(tx, tx.SerializeSize()); err != nil {
			re := err.(RuleError)
			re.Description = "transaction " + ids[i].String() + ": " + re.Description
			return nil, re
		}
	}
	return ids, nil
}

// MedianTime is the median of up to 11 timestamps (those of the blocks before a new one).
func MedianTime(timestamps []uint64) uint64 {
	if len(timestamps) == 0 {
		return 0
	}
	s := slices.Clone(timestamps)
	slices.Sort(s)
	return s[len(s)/2]
}

// HeaderContext is what the chain knows about a header's place: the expected target
// (from the retarget rule), the median time past of its 11 predecessors, and the node's clock.
type HeaderContext struct {
	Height         uint64
	ExpectedTarget uint32
	MedianTimePast uint64
	Now            uint64
	// MaxFutureDrift is the network's limit on a timestamp ahead of Now, in seconds (0:
	// MaxFutureDrift, 15 minutes).
	MaxFutureDrift uint64
}

// CheckHeaderContext checks the target and timestamp of a header in its place.
func CheckHeaderContext(h *types.BlockHeader, c HeaderContext) error {
	if h.DifficultyTarget != c.ExpectedTarget {
		return ruleError(ErrWrongDifficulty, "difficulty target 0x%08x, expected 0x%08x at height %d",
			h.DifficultyTarget, c.ExpectedTarget, c.Height)
	}
	if h.Timestamp <= c.MedianTimePast {
		return ruleError(ErrTimeTooOld, "block timestamp %d is not after the median time past %d", h.Timestamp, c.MedianTimePast)
	}
	drift := c.MaxFutureDrift
	if drift == 0 {
		drift = MaxFutureDrift
	}
	if h.Timestamp > c.Now+drift {
		return ruleError(ErrTimeTooNew, "block timestamp %d is more than %d s ahead of the clock (%d)", h.Timestamp, drift, c.Now)
	}
	return nil
}

// CheckCoinbaseHeight checks that the coinbase payload names the block's height.
func CheckCoinbaseHeight(cb *types.Transaction, height uint64) error {
	p, err := types.DecodeCoinbasePayload(cb.Payload)
	if err != nil {
		return ruleError(ErrBadCoinbasePayload, "invalid coinbase payload: %v", err)
	}
	if p.Height != height {
		return ruleError(ErrBadCoinbaseHeight, "coinbase names height %d in a block at height %d", p.Height, height)
	}
	return nil
}

// CheckCoinbaseValue checks that the coinbase pays at most subsidy + fees + release and
// returns what it leaves unpaid (burned).
func CheckCoinbaseValue(cb *types.Transaction, height, fees, pool uint64) (burned uint64, err error) {
	paid, err := SumOutputs(func(i int) uint64 { return cb.Outputs[i].Value }, len(cb.Outputs))
	if err != nil {
		return 0, err
	}
	limit, err := MaxCoinbaseValue(height, fees, pool)
	if err != nil {
		return 0, err
	}
	if paid > limit {
		return 0, ruleError(ErrBadCoinbaseValue, "coinbase pays %d, more than subsidy + fees + release = %d", paid, limit)
	}
	return limit - paid, nil
}
