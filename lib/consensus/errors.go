package consensus

import (
	"errors"
	"fmt"

	"github.com/cointoolkit/coin/lib/reason"
)

// ErrorKind identifies one consensus rule.
type ErrorKind string

// Error makes an ErrorKind usable with errors.Is.
func (k ErrorKind) Error() string { return string(k) }

// Reason is the kind's stable name in the node's RPC errors (error.data.reason, protocol §11).
func (k ErrorKind) Reason() reason.Reason { return reasons[k] }

// Is matches target by reason, so that errors.Is(err, reason.MissingInputs) holds for an
// error of kind ErrMissingInputs, as it does for the same error received over RPC.
func (k ErrorKind) Is(target error) bool { return reason.Match(k.Reason(), target) }

// The rules, one kind each.
const (
	// Transactions, context-free.
	ErrTxVersion          = ErrorKind("ErrTxVersion")
	ErrTxTooLarge         = ErrorKind("ErrTxTooLarge")
	ErrNoInputs           = ErrorKind("ErrNoInputs")
	ErrNoOutputs          = ErrorKind("ErrNoOutputs")
	ErrTooManyInputs      = ErrorKind("ErrTooManyInputs")
	ErrTooManyOutputs     = ErrorKind("ErrTooManyOutputs")
	ErrZeroOutput         = ErrorKind("ErrZeroOutput")
	ErrValueOverflow      = ErrorKind("ErrValueOverflow")
	ErrDuplicateInput     = ErrorKind("ErrDuplicateInput")
	ErrCoinbaseInputs     = ErrorKind("ErrCoinbaseInputs")
	ErrCoinbasePayload    = ErrorKind("ErrCoinbasePayload")
	ErrTransferPayload    = ErrorKind("ErrTransferPayload")
	ErrUnexpectedCoinbase = ErrorKind("ErrUnexpectedCoinbase")

	// Transactions against the chain.
	ErrMissingInputs     = ErrorKind("ErrMissingInputs")
	ErrImmatureCoinbase  = ErrorKind("ErrImmatureCoinbase")
	ErrPubKeyMismatch    = ErrorKind("ErrPubKeyMismatch")
	ErrBadSignature      = ErrorKind("ErrBadSignature")
	ErrInsufficientFunds = ErrorKind("ErrInsufficientFunds")
	ErrNonFinal          = ErrorKind("ErrNonFinal")
	ErrSpendLocked       = ErrorKind("ErrSpendLocked")

	// Blocks, context-free.
	ErrBlockVersion       = ErrorKind("ErrBlockVersion")
	ErrBlockTooLarge      = ErrorKind("ErrBlockTooLarge")
	ErrNoTransactions     = ErrorKind("ErrNoTransactions")
	ErrFirstTxNotCoinbase = ErrorKind("ErrFirstTxNotCoinbase")
	ErrMultipleCoinbases  = ErrorKind("ErrMultipleCoinbases")
	ErrBadMerkleRoot      = ErrorKind("ErrBadMerkleRoot")
	ErrDuplicateTx        = ErrorKind("ErrDuplicateTx")
	ErrBadTarget          = ErrorKind("ErrBadTarget")
	ErrHighHash           = ErrorKind("ErrHighHash")

	// Blocks in context.
	ErrBadCoinbaseHeight = ErrorKind("ErrBadCoinbaseHeight")
	ErrBadCoinbaseValue  = ErrorKind("ErrBadCoinbaseValue")
	ErrDoubleSpend       = ErrorKind("ErrDoubleSpend")
	ErrWrongDifficulty   = ErrorKind("ErrWrongDifficulty")
	ErrTimeTooOld        = ErrorKind("ErrTimeTooOld")
	ErrTimeTooNew        = ErrorKind("ErrTimeTooNew")
	ErrUnknownParent     = ErrorKind("ErrUnknownParent")
	ErrInvalidAncestor   = ErrorKind("ErrInvalidAncestor")
	ErrDuplicateBlock    = ErrorKind("ErrDuplicateBlock")
	ErrKnownInvalid      = ErrorKind("ErrKnownInvalid")

	// Proof of Conduct, context-free (CheckAgentKind).
	ErrAgentPayload  = ErrorKind("ErrAgentPayload")
	ErrForeignInput  = ErrorKind("ErrForeignInput")
	ErrInvalidScore  = ErrorKind("ErrInvalidScore")
	ErrInvalidExpiry = ErrorKind("ErrInvalidExpiry")
	ErrSelfTarget    = ErrorKind("ErrSelfTarget")
	ErrBadStake      = ErrorKind("ErrBadStake")
	ErrBadEscrow     = ErrorKind("ErrBadEscrow")

	// Proof of Conduct, against the conduct state (CheckConduct).
	ErrNotAnAgent           = ErrorKind("ErrNotAnAgent")
	ErrAlreadyRegistered    = ErrorKind("ErrAlreadyRegistered")
	ErrScoreTooLow          = ErrorKind("ErrScoreTooLow")
	ErrAgentNotFound        = ErrorKind("ErrAgentNotFound")
	ErrAlreadyVouched       = ErrorKind("ErrAlreadyVouched")
	ErrContractNotFound     = ErrorKind("ErrContractNotFound")
	ErrContractNotOpen      = ErrorKind("ErrContractNotOpen")
	ErrContractExpired      = ErrorKind("ErrContractExpired")
	ErrContractNotExpired   = ErrorKind("ErrContractNotExpired")
	ErrContractNotFulfilled = ErrorKind("ErrContractNotFulfilled")
	ErrNotCounterparty      = ErrorKind("ErrNotCounterparty")
	ErrNotInitiator         = ErrorKind("ErrNotInitiator")
	ErrEscrowNotSpent       = ErrorKind("ErrEscrowNotSpent")
	ErrRefundOutputs        = ErrorKind("ErrRefundOutputs")
	ErrNotParticipant       = ErrorKind("ErrNotParticipant")
	ErrAlreadyReviewed      = ErrorKind("ErrAlreadyReviewed")
)

// reasons maps every kind to its reason; every kind has one of its own (reason_test.go in
// lib/reason checks both).
var reasons = map[ErrorKind]reason.Reason{
	ErrTxVersion:          reason.BadTxVersion,
	ErrTxTooLarge:         reason.TxTooLarge,
	ErrNoInputs:           reason.NoInputs,
	ErrNoOutputs:          reason.NoOutputs,
	ErrTooManyInputs:      reason.TooManyInputs,
	ErrTooManyOutputs:     reason.TooManyOutputs,
	ErrZeroOutput:         reason.ZeroOutput,
	ErrValueOverflow:      reason.ValueOverflow,
	ErrDuplicateInput:     reason.DuplicateInput,
	ErrCoinbaseInputs:     reason.BadCoinbaseInputs,
	ErrCoinbasePayload:    reason.BadCoinbasePayload,
	ErrTransferPayload:    reason.BadTransferPayload,
	ErrUnexpectedCoinbase: reason.UnexpectedCoinbase,

	ErrMissingInputs:     reason.MissingInputs,
	ErrImmatureCoinbase:  reason.ImmatureCoinbase,
	ErrPubKeyMismatch:    reason.PubKeyMismatch,
	ErrBadSignature:      reason.BadSignature,
	ErrInsufficientFunds: reason.InsufficientFunds,
	ErrNonFinal:          reason.NonFinal,
	ErrSpendLocked:       reason.LockedOutput,

	ErrBlockVersion:       reason.BadBlockVersion,
	ErrBlockTooLarge:      reason.BlockTooLarge,
	ErrNoTransactions:     reason.NoTransactions,
	ErrFirstTxNotCoinbase: reason.FirstTxNotCoinbase,
	ErrMultipleCoinbases:  reason.MultipleCoinbases,
	ErrBadMerkleRoot:      reason.BadMerkleRoot,
	ErrDuplicateTx:        reason.DuplicateTx,
	ErrBadTarget:          reason.BadTarget,
	ErrHighHash:           reason.BadProofOfWork,

	ErrBadCoinbaseHeight: reason.BadCoinbaseHeight,
	ErrBadCoinbaseValue:  reason.BadCoinbaseValue,
	ErrDoubleSpend:       reason.DoubleSpend,
	ErrWrongDifficulty:   reason.WrongDifficulty,
	ErrTimeTooOld:        reason.TimeTooOld,
	ErrTimeTooNew:        reason.TimeTooNew,
	ErrUnknownParent:     reason.UnknownParent,
	ErrInvalidAncestor:   reason.InvalidAncestor,
	ErrDuplicateBlock:    reason.DuplicateBlock,
	ErrKnownInvalid:      reason.KnownInvalid,

	ErrAgentPayload:  reason.BadAgentPayload,
	ErrForeignInput:  reason.ForeignInput,
	ErrInvalidScore:  reason.InvalidScore,
	ErrInvalidExpiry: reason.InvalidExpiry,
	ErrSelfTarget:    reason.SelfTarget,
	ErrBadStake:      reason.BadStake,
	ErrBadEscrow:     reason.BadEscrow,

	ErrNotAnAgent:           reason.NotAnAgent,
	ErrAlreadyRegistered:    reason.AlreadyRegistered,
	ErrScoreTooLow:          reason.ScoreTooLow,
	ErrAgentNotFound:        reason.AgentNotFound,
	ErrAlreadyVouched:       reason.AlreadyVouched,
	ErrContractNotFound:     reason.ContractNotFound,
	ErrContractNotOpen:      reason.ContractNotOpen,
	ErrContractExpired:      reason.ContractExpired,
	ErrContractNotExpired:   reason.ContractNotExpired,
	ErrContractNotFulfilled: reason.ContractNotFulfilled,
	ErrNotCounterparty:      reason.NotCounterparty,
	ErrNotInitiator:         reason.NotInitiator,
	ErrEscrowNotSpent:       reason.EscrowNotSpent,
	ErrRefundOutputs:        reason.RefundOutputs,
	ErrNotParticipant:       reason.NotParticipant,
	ErrAlreadyReviewed:      reason.AlreadyReviewed,
}

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
