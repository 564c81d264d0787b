package reason_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/reason"
)

// kindTable is every kind the node reports, with the reason it is sent under. The reasons
// are part of the RPC interface: changing one here is changing what clients see.
var kindTable = []struct {
	kind reason.Kind
	want string
}{
	// consensus.ErrorKind
	{consensus.ErrTxVersion, "bad_tx_version"},
	{consensus.ErrTxTooLarge, "tx_too_large"},
	{consensus.ErrNoInputs, "no_inputs"},
	{consensus.ErrNoOutputs, "no_outputs"},
	{consensus.ErrTooManyInputs, "too_many_inputs"},
	{consensus.ErrTooManyOutputs, "too_many_outputs"},
	{consensus.ErrZeroOutput, "zero_output"},
	{consensus.ErrValueOverflow, "value_overflow"},
	{consensus.ErrDuplicateInput, "duplicate_input"},
	{consensus.ErrCoinbaseInputs, "bad_coinbase_inputs"},
	{consensus.ErrCoinbasePayload, "bad_coinbase_payload"},
	{consensus.ErrTransferPayload, "bad_transfer_payload"},
	{consensus.ErrUnexpectedCoinbase, "unexpected_coinbase"},
	{consensus.ErrMissingInputs, "missing_inputs"},
	{consensus.ErrImmatureCoinbase, "immature_coinbase"},
	{consensus.ErrPubKeyMismatch, "pubkey_mismatch"},
	{consensus.ErrBadSignature, "bad_signature"},
	{consensus.ErrInsufficientFunds, "insufficient_funds"},
	{consensus.ErrNonFinal, "non_final"},
	{consensus.ErrSpendLocked, "locked_output"},
	{consensus.ErrBlockVersion, "bad_block_version"},
	{consensus.ErrBlockTooLarge, "block_too_large"},
	{consensus.ErrNoTransactions, "no_transactions"},
	{consensus.ErrFirstTxNotCoinbase, "first_tx_not_coinbase"},
	{consensus.ErrMultipleCoinbases, "multiple_coinbases"},
	{consensus.ErrBadMerkleRoot, "bad_merkle_root"},
	{consensus.ErrDuplicateTx, "duplicate_tx"},
	{consensus.ErrBadTarget, "bad_target"},
	{consensus.ErrHighHash, "bad_proof_of_work"},
	{consensus.ErrBadCoinbaseHeight, "bad_coinbase_height"},
	{consensus.ErrBadCoinbaseValue, "bad_coinbase_value"},
	{consensus.ErrDoubleSpend, "double_spend"},
	{consensus.ErrAgentPayload, "bad_agent_payload"},
	{consensus.ErrForeignInput, "foreign_input"},
	{consensus.ErrInvalidScore, "invalid_score"},
	{consensus.ErrInvalidExpiry, "invalid_expiry"},
	{consensus.ErrSelfTarget, "self_target"},
	{consensus.ErrBadStake, "bad_stake"},
	{consensus.ErrBadEscrow, "bad_escrow"},
	{consensus.ErrNotAnAgent, "not_an_agent"},
	{consensus.ErrAlreadyRegistered, "already_registered"},
	{consensus.ErrScoreTooLow, "score_too_low"},
	{consensus.ErrAgentNotFound, "agent_not_found"},
	{consensus.ErrAlreadyVouched, "already_vouched"},
	{consensus.ErrContractNotFound, "contract_not_found"},
	{consensus.ErrContractNotOpen, "contract_not_open"},
	{consensus.ErrContractExpired, "contract_expired"},
	{consensus.ErrContractNotExpired, "contract_not_expired"},
	{consensus.ErrContractNotFulfilled, "contract_not_fulfilled"},
	{consensus.ErrNotCounterparty, "not_counterparty"},
	{consensus.ErrNotInitiator, "not_initiator"},
	{consensus.ErrEscrowNotSpent, "escrow_not_spent"},
	{consensus.ErrRefundOutputs, "refund_outputs"},
	{consensus.ErrNotParticipant, "not_participant"},
	{consensus.ErrAlreadyReviewed, "already_reviewed"},
	{consensus.ErrWrongDifficulty, "wrong_difficulty"},
	{consensus.ErrTimeTooOld, "time_too_old"},
	{consensus.ErrTimeTooNew, "time_too_new"},
	{consensus.ErrUnknownParent, "unknown_parent"},
	{consensus.ErrInvalidAncestor, "invalid_ancestor"},
	{consensus.ErrDuplicateBlock, "duplicate_block"},
	{consensus.ErrKnownInvalid, "known_invalid"},

	// mempool.ErrorKind
	{mempool.ErrAlreadyInPool, "already_in_mempool"},
	{mempool.ErrAlreadyInChain, "already_in_chain"},
	{mempool.ErrConflict, "conflict"},
	{mempool.ErrInsufficientFee, "fee_too_low"},
	{mempool.ErrDust, "dust"},
	{mempool.ErrPoolFull, "mempool_full"},
	{mempool.ErrCoinbase, "coinbase_in_mempool"},

	// The node's own kinds.
	{reason.HeightOutOfRange, "height_out_of_range"},
	{reason.BlockNotFound, "block_not_found"},
	{reason.TxNotFound, "tx_not_found"},
	{reason.DecodeFailed, "decode_failed"},
	{reason.InvalidAddress, "invalid_address"},
	{reason.Syncing, "syncing"},
	{reason.ClusterNotFound, "cluster_not_found"},
	{reason.StaleTemplate, "stale_template"},
	{reason.RegtestOnly, "regtest_only"},
	{reason.UnknownCommand, "unknown_command"},
	{reason.SolveFailed, "solve_failed"},
	{reason.TooLongChain, "too_long_mempool_chain"},
	{reason.P2PDisabled, "p2p_disabled"},
	{reason.NodeNotConnected, "node_not_connected"},
	{reason.NodeAlreadyAdded, "node_already_added"},
	{reason.NodeNotAdded, "node_not_added"},
	{reason.InvalidSubnet, "invalid_subnet"},
	{reason.AlreadyBanned, "already_banned"},
	{reason.NotBanned, "not_banned"},
	{reason.ResultTooLarge, "result_too_large"},
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// TestKindReasons checks every kind's reason: present, snake_case, as the table says, and
// no two kinds sharing one.
func TestKindReasons(t *testing.T) {
	owner := map[reason.Reason]string{}
	for _, tc := range kindTable {
		name := fmt.Sprintf("%T(%s)", tc.kind, tc.kind.Error())
		got := tc.kind.Reason()
		if got == "" {
			t.Errorf("%s has no reason", name)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("%s: reason %q, want %q", name, got, tc.want)
		}
		if !snakeCase.MatchString(string(got)) {
			t.Errorf("%s: reason %q is not snake_case", name, got)
		}
		if other, dup := owner[got]; dup {
			t.Errorf("%s and %s share the reason %q", other, name, got)
		}
		owner[got] = name
	}
}

// TestTableHasEveryKind keeps kindTable complete: every kind declared in consensus's and
// mempool's errors.go and every Reason declared here is in it, and nothing else is.
func TestTableHasEveryKind(t *testing.T) {
	inTable := map[string]bool{}
	for _, tc := range kindTable {
		inTable[fmt.Sprintf("%T %s", tc.kind, tc.kind.Error())] = true
	}
	var declared []string
	for _, name := range declaredKinds(t, "../consensus/errors.go", "ErrorKind") {
		declared = append(declared, fmt.Sprintf("%T %s", consensus.ErrorKind(""), name))
	}
	for _, text := range declaredKinds(t, "../mempool/errors.go", "ErrorKind") {
		declared = append(declared, fmt.Sprintf("%T %s", mempool.ErrorKind(""), text))
	}
	for _, r := range declaredKinds(t, "reason.go", "Reason") {
		if k := reason.Reason(r); k.Reason() == k && !usedByARule(k) {
			declared = append(declared, fmt.Sprintf("%T %s", k, r))
		}
	}
	for _, d := range declared {
		if !inTable[d] {
			t.Errorf("%s is declared but not in the table", d)
		}
		delete(inTable, d)
	}
	for d := range inTable {
		t.Errorf("%s is in the table but not declared", d)
	}
	// Every declared Reason is some kind's.
	for _, r := range declaredKinds(t, "reason.go", "Reason") {
		found := false
		for _, tc := range kindTable {
			found = found || string(tc.kind.Reason()) == r
		}
		if !found {
			t.Errorf("reason %q belongs to no kind", r)
		}
	}
}

func usedByARule(r reason.Reason) bool {
	for _, tc := range kindTable {
		if _, own := tc.kind.(reason.Reason); !own && tc.kind.Reason() == r {
			return true
		}
	}
	return false
}

// declaredKinds lists the constants of file that are typ("...") calls or typed typ with a
// string value: for the consensus kinds their names (their value is their name, which
// consensus's own tests check), for the mempool kinds and Reasons their string values.
func declaredKinds(t *testing.T, file, typ string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if i >= len(vs.Values) {
					continue
				}
				var lit *ast.BasicLit
				switch v := vs.Values[i].(type) {
				case *ast.CallExpr: // typ("...")
					if id, ok := v.Fun.(*ast.Ident); ok && id.Name == typ && len(v.Args) == 1 {
						lit, _ = v.Args[0].(*ast.BasicLit)
					}
				case *ast.BasicLit: // Name typ = "..."
					if id, ok := vs.Type.(*ast.Ident); ok && id.Name == typ {
						lit = v
					}
				}
				if lit == nil || lit.Kind != token.STRING {
					continue
				}
				val, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				if typ == "ErrorKind" && file == "../consensus/errors.go" {
					val = n.Name
				}
				out = append(out, val)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s constants found in %s", typ, file)
	}
	return out
}

// TestMatchByReason: a kind matches its own reason and the other kinds with that reason,
// and nothing else; an empty reason matches nothing.
func TestMatchByReason(t *testing.T) {
	for _, tc := range kindTable {
		r := tc.kind.Reason()
		if !errors.Is(tc.kind, r) || !errors.Is(r, tc.kind) {
			t.Errorf("%v and its reason %q do not match", tc.kind, r)
		}
		wrapped := fmt.Errorf("outer: %w", tc.kind)
		if !errors.Is(wrapped, tc.kind) || reason.Of(wrapped) != r {
			t.Errorf("wrapped %v: Is/Of fail (Of = %q)", tc.kind, reason.Of(wrapped))
		}
	}
	if errors.Is(consensus.ErrHighHash, reason.DoubleSpend) || errors.Is(mempool.ErrConflict, consensus.ErrDoubleSpend) {
		t.Fatal("kinds of different reasons match")
	}
	if reason.Match("", reason.Reason("")) || reason.Of(errors.New("plain")) != "" || reason.Of(nil) != "" {
		t.Fatal("an empty reason matches")
	}
	rule := fmt.Errorf("mempool: %w", consensus.RuleError{Err: consensus.ErrMissingInputs, Description: "missing inputs: x"})
	if reason.Of(rule) != reason.MissingInputs || !errors.Is(rule, reason.MissingInputs) {
		t.Fatalf("a wrapped RuleError has reason %q", reason.Of(rule))
	}
	rej := &mempool.RejectError{Err: mempool.ErrAlreadyInChain}
	if reason.Of(rej) != reason.AlreadyInChain || !errors.Is(rej, reason.AlreadyInChain) || errors.Is(rej, reason.AlreadyInMempool) {
		t.Fatalf("a RejectError has reason %q", reason.Of(rej))
	}
}

// TestDocsListEveryReason keeps docs/rpc-errors.md complete: every reason is in its tables.
func TestDocsListEveryReason(t *testing.T) {
	doc, err := os.ReadFile("../../docs/rpc-errors.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range kindTable {
		if !strings.Contains(string(doc), "| `"+string(tc.kind.Reason())+"` |") {
			t.Errorf("docs/rpc-errors.md has no row for %q", tc.kind.Reason())
		}
	}
}
