package consensus

import (
	"errors"
	"fmt"

	"github.com/cointoolkit/coin/lib/reason"
)

// ErrorKind identifies one consensus rule. Its value is the rule's reason (lib/reason), the
// stable name the node's RPC sends as error.data.reason (protocol §11), and its Go name is
// Err followed by that reason's: one name per rule, with no table between them
// (lib/reason's tests fail when a kind and a reason do not pair up).
type ErrorKind reason.Reason

// Error is the kind's reason, so that an ErrorKind is usable with errors.Is. The message a
// user reads is the RuleError's Description, never the kind's text.
func (k ErrorKind) Error() string { return string(k) }

// Reason is the kind's stable name in the node's RPC errors (error.data.reason, protocol §11).
func (k ErrorKind) Reason() reason.Reason { return reason.Reason(k) }

// Is matches target by reason, so that errors.Is(err, reason.MissingInputs) holds for an
// error of kind ErrMissingInputs, as it does for the same error received over RPC.
func (k ErrorKind) Is(target error) bool { return reason.Match(k.Reason(), target) }

// The rules, one kind each.
const (
	// Transactions, context-free.
	ErrBadTxVersion       = ErrorKind(reason.BadTxVersion)
	ErrTxTooLarge         = ErrorKind(reason.TxTooLarge)
	ErrNoInputs           = ErrorKind(reason.NoInputs)
	ErrNoOutputs          = ErrorKind(reason.NoOutputs)
	ErrTooManyInputs      = ErrorKind(reason.TooManyInputs)
	ErrTooManyOutputs     = ErrorKind(reason.TooManyOutputs)
	ErrZeroOutput         = ErrorKind(reason.ZeroOutput)
	ErrValueOverflow      = ErrorKind(reason.ValueOverflow)
	ErrDuplicateInput     = ErrorKind(reason.DuplicateInput)
	ErrBadCoinbaseInputs  = ErrorKind(reason.BadCoinbaseInputs)
	ErrBadCoinbasePayload = ErrorKind(reason.BadCoinbasePayload)
	ErrBadTransferPayload = ErrorKind(reason.BadTransferPayload)
	ErrUnexpectedCoinbase = ErrorKind(reason.UnexpectedCoinbase)

	// Transactions against the chain.
	ErrMissingInputs     = ErrorKind(reason.MissingInputs)
	ErrImmatureCoinbase  = ErrorKind(reason.ImmatureCoinbase)
	ErrPubKeyMismatch    = ErrorKind(reason.PubKeyMismatch)
	ErrBadSignature      = ErrorKind(reason.BadSignature)
	ErrInsufficientFunds = ErrorKind(reason.InsufficientFunds)
	ErrNonFinal          = ErrorKind(reason.NonFinal)
	ErrLockedOutput      = ErrorKind(reason.LockedOutput)

	// Blocks, context-free.
	ErrBadBlockVersion    = ErrorKind(reason.BadBlockVersion)
	ErrBlockTooLarge      = ErrorKind(reason.BlockTooLarge)
	ErrNoTransactions     = ErrorKind(reason.NoTransactions)
	ErrFirstTxNotCoinbase = ErrorKind(reason.FirstTxNotCoinbase)
	ErrMultipleCoinbases  = ErrorKind(reason.MultipleCoinbases)
	ErrBadMerkleRoot      = ErrorKind(reason.BadMerkleRoot)
	ErrDuplicateTx        = ErrorKind(reason.DuplicateTx)
	ErrBadTarget          = ErrorKind(reason.BadTarget)
	ErrBadProofOfWork     = ErrorKind(reason.BadProofOfWork)

	// Blocks in context.
	ErrBadCoinbaseHeight = ErrorKind(reason.BadCoinbaseHeight)
	ErrBadCoinbaseValue  = ErrorKind(reason.BadCoinbaseValue)
	ErrDoubleSpend       = ErrorKind(reason.DoubleSpend)
	ErrWrongDifficulty   = ErrorKind(reason.WrongDifficulty)
	ErrTimeTooOld        = ErrorKind(reason.TimeTooOld)
	ErrTimeTooNew        = ErrorKind(reason.TimeTooNew)
	ErrUnknownParent     = ErrorKind(reason.UnknownParent)
	ErrInvalidAncestor   = ErrorKind(reason.InvalidAncestor)
	ErrDuplicateBlock    = ErrorKind(reason.DuplicateBlock)
	ErrKnownInvalid      = ErrorKind(reason.KnownInvalid)

	// Proof of Conduct, context-free (CheckAgentKind).
	ErrBadAgentPayload = ErrorKind(reason.BadAgentPayload)
	ErrForeignInput    = ErrorKind(reason.ForeignInput)
	ErrInvalidScore    = ErrorKind(reason.InvalidScore)
	ErrInvalidExpiry   = ErrorKind(reason.InvalidExpiry)
	ErrSelfTarget      = ErrorKind(reason.SelfTarget)
	ErrBadStake        = ErrorKind(reason.BadStake)
	ErrBadEscrow       = ErrorKind(reason.BadEscrow)

	// Proof of Conduct, against the conduct state (CheckConduct).
	ErrNotAnAgent           = ErrorKind(reason.NotAnAgent)
	ErrAlreadyRegistered    = ErrorKind(reason.AlreadyRegistered)
	ErrScoreTooLow          = ErrorKind(reason.ScoreTooLow)
	ErrAgentNotFound        = ErrorKind(reason.AgentNotFound)
	ErrAlreadyVouched       = ErrorKind(reason.AlreadyVouched)
	ErrContractNotFound     = ErrorKind(reason.ContractNotFound)
	ErrContractNotOpen      = ErrorKind(reason.ContractNotOpen)
	ErrContractExpired      = ErrorKind(reason.ContractExpired)
	ErrContractNotExpired   = ErrorKind(reason.ContractNotExpired)
	ErrContractNotFulfilled = ErrorKind(reason.ContractNotFulfilled)
	ErrNotCounterparty      = ErrorKind(reason.NotCounterparty)
	ErrNotInitiator         = ErrorKind(reason.NotInitiator)
	ErrEscrowNotSpent       = ErrorKind(reason.EscrowNotSpent)
	ErrRefundOutputs        = ErrorKind(reason.RefundOutputs)
	ErrNotParticipant       = ErrorKind(reason.NotParticipant)
	ErrAlreadyReviewed      = ErrorKind(reason.AlreadyReviewed)
)

// RuleError is a consensus rule violation: Err says which rule, Description says what
// happened in words a user can read.
type RuleError struct {
	Err         ErrorKind
	Description string
}

func (e RuleError) Error() string { return e.Description }

// Unwrap lets errors.Is match the ErrorKind.
func (e RuleError) Unwrap() error { return e.Err }

func ruleError(kind ErrorKind, format string, args ...any) error {
	return RuleError{Err: kind, Description: fmt.Sprintf(format, args...)}
}

// IsRuleError reports whether err is (or wraps) a RuleError.
func IsRuleError(err error) bool {
	var re RuleError
	return errors.As(err, &re)
}
