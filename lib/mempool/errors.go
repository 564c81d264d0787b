package mempool

import (
	"errors"
	"fmt"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/policy"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/types"
)

// ErrorKind identifies one mempool policy rule. Its value is the rule's reason (lib/reason),
// the stable name the node's RPC sends as error.data.reason (protocol §11), and its Go name is
// Err followed by that reason's: one name per rule, with no table between them (lib/reason's
// tests fail when a kind and a reason do not pair up). Refusals by a consensus rule carry the
// consensus.ErrorKind instead.
type ErrorKind reason.Reason

// Error is the kind's reason, so that an ErrorKind is usable with errors.Is. The message a
// user reads is the RejectError's.
func (k ErrorKind) Error() string { return string(k) }

// Reason is the kind's stable name in the node's RPC errors (error.data.reason, protocol §11).
func (k ErrorKind) Reason() reason.Reason { return reason.Reason(k) }

// Is matches target by reason, so that errors.Is(err, reason.AlreadyInChain) holds for an
// error of kind ErrAlreadyInChain, as it does for the same error received over RPC.
func (k ErrorKind) Is(target error) bool { return reason.Match(k.Reason(), target) }

// The policy rules, one kind each, usable with errors.Is.
const (
	ErrAlreadyInMempool  = ErrorKind(reason.AlreadyInMempool)
	ErrAlreadyInChain    = ErrorKind(reason.AlreadyInChain)
	ErrConflict          = ErrorKind(reason.Conflict)
	ErrFeeTooLow         = ErrorKind(reason.FeeTooLow)
	ErrDust              = ErrorKind(reason.Dust)
	ErrMempoolFull       = ErrorKind(reason.MempoolFull)
	ErrCoinbaseInMempool = ErrorKind(reason.CoinbaseInMempool)
)

// RejectError is the pool's refusal of a transaction. Kind is the rule that refused it: one
// of the policy kinds above, or the consensus.ErrorKind of Err. The other fields are the
// detail the rule knows; each says which kinds set it. errors.Is and errors.As reach Kind
// (and Err's consensus.RuleError), so callers branch on the kind and never on the text.
type RejectError struct {
	Kind reason.Kind
	// Err is the failed consensus check's error (a consensus.RuleError, or one wrapping it)
	// when Kind is a consensus rule's; nil for a policy rule.
	Err error

	// Input and SpentBy (ErrConflict): the input whose output the pool transaction SpentBy
	// spends already.
	Input   int
	SpentBy types.Hash
	// Output and Value (ErrDust): the output below policy.DustLimit and its value.
	Output int
	Value  uint64
	// Fee, MinFee and Size (ErrFeeTooLow): the transaction's fee, the minimum relay fee for
	// its Size in bytes.
	Fee    uint64
	MinFee uint64
	Size   int
}

// Error is the refusal's message, which the node's RPC sends as is (docs/rpc-errors.md): the
// rule's words, then the detail.
func (e *RejectError) Error() string {
	switch e.Kind {
	case ErrAlreadyInMempool:
		return "transaction already in mempool"
	case ErrAlreadyInChain:
		return "transaction already in block chain"
	case ErrConflict:
		return fmt.Sprintf("conflicts with a mempool transaction (input %d is spent by %s)", e.Input, e.SpentBy)
	case ErrFeeTooLow:
		return fmt.Sprintf("insufficient fee: fee %d is below the minimum relay fee %d (%d bytes at %d per byte)",
			e.Fee, e.MinFee, e.Size, policy.MinRelayFeePerByte)
	case ErrDust:
		return fmt.Sprintf("dust output: output %d of %d subunits is below %d", e.Output, e.Value, policy.DustLimit)
	case ErrMempoolFull:
		return "mempool full: fee rate too low to enter a full pool"
	case ErrCoinbaseInMempool:
		return "coinbase transaction not allowed in the mempool"
	}
	msg := "<no detail>"
	if e.Err != nil {
		msg = e.Err.Error()
	}
	switch e.Kind {
	case consensus.ErrMissingInputs:
		return msg // "missing inputs: ..." names the rule already
	case consensus.ErrNonFinal:
		return "non-final transaction: " + msg
	}
	return "invalid transaction: " + msg
}

// Unwrap gives Err, whose chain holds the consensus kind, or the policy kind.
func (e *RejectError) Unwrap() error {
	if e.Err != nil {
		return e.Err
	}
	return e.Kind
}

// refuse is the refusal by policy rule kind (the detail, if any, is set by the caller).
func refuse(kind ErrorKind) *RejectError { return &RejectError{Kind: kind} }

// ruleRefusal is the refusal for err, the error of a consensus check: a *RejectError of the
// rule's kind, or err unchanged when it is no rule's (a storage failure is no refusal).
func ruleRefusal(err error) error {
	var re consensus.RuleError
	if !errors.As(err, &re) {
		return err
	}
	return &RejectError{Kind: re.Err, Err: err}
}
