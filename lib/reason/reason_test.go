package reason_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
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
	{consensus.ErrBadTxVersion, "bad_tx_version"},
	{consensus.ErrTxTooLarge, "tx_too_large"},
	{consensus.ErrNoInputs, "no_inputs"},
	{consensus.ErrNoOutputs, "no_outputs"},
	{consensus.ErrTooManyInputs, "too_many_inputs"},
	{consensus.ErrTooManyOutputs, "too_many_outputs"},
	{consensus.ErrZeroOutput, "zero_output"},
	{consensus.ErrValueOverflow, "value_overflow"},
	{consensus.ErrDuplicateInput, "duplicate_input"},
	{consensus.ErrBadCoinbaseInputs, "bad_coinbase_inputs"},
	{consensus.ErrBadCoinbasePayload, "bad_coinbase_payload"},
	{consensus.ErrBadTransferPayload, "bad_transfer_payload"},
	{consensus.ErrUnexpectedCoinbase, "unexpected_coinbase"},
	{consensus.ErrMissingInputs, "missing_inputs"},
	{consensus.ErrImmatureCoinbase, "immature_coinbase"},
	{consensus.ErrPubKeyMismatch, "pubkey_mismatch"},
	{consensus.ErrBadSignature, "bad_signature"},
	{consensus.ErrInsufficientFunds, "insufficient_funds"},
	{consensus.ErrNonFinal, "non_final"},
	{consensus.ErrLockedOutput, "locked_output"},
	{consensus.ErrBadBlockVersion, "bad_block_version"},
	{consensus.ErrBlockTooLarge, "block_too_large"},
	{consensus.ErrNoTransactions, "no_transactions"},
	{consensus.ErrFirstTxNotCoinbase, "first_tx_not_coinbase"},
	{consensus.ErrMultipleCoinbases, "multiple_coinbases"},
	{consensus.ErrBadMerkleRoot, "bad_merkle_root"},
	{consensus.ErrDuplicateTx, "duplicate_tx"},
	{consensus.ErrBadTarget, "bad_target"},
	{consensus.ErrBadProofOfWork, "bad_proof_of_work"},
	{consensus.ErrBadCoinbaseHeight, "bad_coinbase_height"},
	{consensus.ErrBadCoinbaseValue, "bad_coinbase_value"},
	{consensus.ErrDoubleSpend, "double_spend"},
	{consensus.ErrBadAgentPayload, "bad_agent_payload"},
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
	{mempool.ErrAlreadyInMempool, "already_in_mempool"},
	{mempool.ErrAlreadyInChain, "already_in_chain"},
	{mempool.ErrConflict, "conflict"},
	{mempool.ErrFeeTooLow, "fee_too_low"},
	{mempool.ErrDust, "dust"},
	{mempool.ErrMempoolFull, "mempool_full"},
	{mempool.ErrCoinbaseInMempool, "coinbase_in_mempool"},

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

// notRules are the reasons that name no consensus or mempool rule: the node's own kinds,
// which the RPC layer reports itself (a lookup that found nothing, a node that is syncing, a
// method served on regtest only, ...) and for which the Reason is the kind. Every other
// reason is exactly one rule kind's.
var notRules = map[string]bool{
	"HeightOutOfRange": true, "BlockNotFound": true, "TxNotFound": true, "DecodeFailed": true,
	"InvalidAddress": true, "Syncing": true, "ClusterNotFound": true, "StaleTemplate": true,
	"RegtestOnly": true, "UnknownCommand": true, "SolveFailed": true, "P2PDisabled": true,
	"NodeNotConnected": true, "NodeAlreadyAdded": true, "NodeNotAdded": true, "InvalidSubnet": true, "AlreadyBanned": true, "NotBanned": true,
	"ResultTooLarge": true,
	// Reserved: sent by other nodes' mempools (a chain of unconfirmed ancestors longer than
	// they relay), which this node's pool does not limit, so no mempool kind has it.
	"TooLongChain": true,
}

// ruleDirs are the packages that declare rule kinds (type ErrorKind).
var ruleDirs = []string{"../consensus", "../mempool"}

// TestOneNamePerRule: every rule kind is declared as ErrKind = ErrorKind(reason.Kind), with
// the reason's Go name after Err, and every reason is exactly one rule kind's or one of
// notRules. It fails when a kind has no reason (a string of its own, or a reason not
// declared here), when two kinds share a reason, when a kind's name drifted from its
// reason's, and when a reason has no kind.
func TestOneNamePerRule(t *testing.T) {
	reasons := declaredReasons(t)
	kindOf := map[string]string{} // reason name -> kind
	for _, dir := range ruleDirs {
		for _, k := range declaredKinds(t, dir) {
			where := k.pkg + "." + k.name
			if k.reason == "" {
				t.Errorf("%s is not ErrorKind(reason.X): it has no reason of lib/reason", where)
				continue
			}
			if _, ok := reasons[k.reason]; !ok {
				t.Errorf("%s is ErrorKind(reason.%s), which lib/reason does not declare", where, k.reason)
				continue
			}
			if k.name != "Err"+k.reason {
				t.Errorf("%s is ErrorKind(reason.%s): its name is not Err%s", where, k.reason, k.reason)
			}
			if other, dup := kindOf[k.reason]; dup {
				t.Errorf("%s and %s share reason.%s", other, where, k.reason)
			}
			kindOf[k.reason] = where
		}
	}
	if len(kindOf) == 0 {
		t.Fatal("no rule kinds found")
	}
	for name := range reasons {
		kind, isKind := kindOf[name]
		switch {
		case isKind && notRules[name]:
			t.Errorf("reason.%s is listed in notRules but is the reason of %s", name, kind)
		case !isKind && !notRules[name]:
			t.Errorf("reason.%s belongs to no rule kind (declare one, or list it in notRules with why)", name)
		}
	}
	for name := range notRules {
		if _, ok := reasons[name]; !ok {
			t.Errorf("notRules lists reason.%s, which is not declared", name)
		}
	}
}

// TestTableHasEveryKind keeps kindTable complete: every rule kind declared in consensus and
// mempool and every Reason declared here is in it, and nothing else is.
func TestTableHasEveryKind(t *testing.T) {
	reasons := declaredReasons(t)
	inTable := map[string]bool{}
	for _, tc := range kindTable {
		inTable[fmt.Sprintf("%T %s", tc.kind, tc.kind.Error())] = true
	}
	var declared []string
	for _, dir := range ruleDirs {
		for _, k := range declaredKinds(t, dir) {
			typ := fmt.Sprintf("%T", consensus.ErrorKind(""))
			if k.pkg == "mempool" {
				typ = fmt.Sprintf("%T", mempool.ErrorKind(""))
			}
			declared = append(declared, typ+" "+reasons[k.reason])
		}
	}
	for name := range notRules {
		declared = append(declared, fmt.Sprintf("%T %s", reason.Reason(""), reasons[name]))
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
}

// declaredReasons maps the name of every Reason constant of reason.go to its value.
func declaredReasons(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range constants(t, "reason.go") {
		id, ok := c.spec.Type.(*ast.Ident)
		lit, isLit := c.value.(*ast.BasicLit)
		if !ok || id.Name != "Reason" || !isLit || lit.Kind != token.STRING {
			t.Errorf("reason.go: constant %s is not Name Reason = \"...\"", c.name)
			continue
		}
		v, err := strconv.Unquote(lit.Value)
		if err != nil {
			t.Fatal(err)
		}
		out[c.name] = v
	}
	if len(out) == 0 {
		t.Fatal("no Reason constants found in reason.go")
	}
	return out
}

// ruleKind is one ErrorKind constant of a rule package: its name and the lib/reason constant
// it is made of ("" when it is made of anything else).
type ruleKind struct{ pkg, name, reason string }

// declaredKinds lists the ErrorKind constants of the non-test files of dir: constants whose
// value is a conversion ErrorKind(...) or whose declared type is ErrorKind.
func declaredKinds(t *testing.T, dir string) []ruleKind {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []ruleKind
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		for _, c := range constants(t, file) {
			typed := false
			if id, ok := c.spec.Type.(*ast.Ident); ok && id.Name == "ErrorKind" {
				typed = true
			}
			var arg ast.Expr
			if call, ok := c.value.(*ast.CallExpr); ok && len(call.Args) == 1 {
				if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "ErrorKind" {
					typed, arg = true, call.Args[0]
				}
			}
			if !typed {
				continue
			}
			k := ruleKind{pkg: c.pkg, name: c.name}
			if sel, ok := arg.(*ast.SelectorExpr); ok && c.spec.Type == nil {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "reason" {
					k.reason = sel.Sel.Name
				}
			}
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no ErrorKind constants found in %s", dir)
	}
	return out
}

// constant is one named constant of a file, with its spec and value (nil when implicit).
type constant struct {
	pkg, name string
	spec      *ast.ValueSpec
	value     ast.Expr
}

func constants(t *testing.T, file string) []constant {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []constant
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				c := constant{pkg: f.Name.Name, name: n.Name, spec: vs}
				if i < len(vs.Values) {
					c.value = vs.Values[i]
				}
				out = append(out, c)
			}
		}
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
	if errors.Is(consensus.ErrBadProofOfWork, reason.DoubleSpend) || errors.Is(mempool.ErrConflict, consensus.ErrDoubleSpend) {
		t.Fatal("kinds of different reasons match")
	}
	if reason.Match("", reason.Reason("")) || reason.Of(errors.New("plain")) != "" || reason.Of(nil) != "" {
		t.Fatal("an empty reason matches")
	}
	rule := fmt.Errorf("mempool: %w", consensus.RuleError{Err: consensus.ErrMissingInputs, Description: "missing inputs: x"})
	if reason.Of(rule) != reason.MissingInputs || !errors.Is(rule, reason.MissingInputs) {
		t.Fatalf("a wrapped RuleError has reason %q", reason.Of(rule))
	}
	rej := &mempool.RejectError{Kind: mempool.ErrAlreadyInChain}
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
