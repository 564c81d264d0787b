package consensus_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/reason"
)

// TestAllKindsListed keeps the test's kind table in step with errors.go: every declared kind is
// in allKinds under its own name and its Error() is its reason (lib/reason's tests check that
// the name is the reason's).
func TestAllKindsListed(t *testing.T) {
	names, err := declaredKinds()
	noErr(t, err)
	if len(names) != len(allKinds) {
		t.Fatalf("errors.go declares %d kinds, the test knows %d", len(names), len(allKinds))
	}
	for _, n := range names {
		k, ok := allKinds[n]
		if !ok {
			t.Fatalf("kind %s is not in allKinds", n)
		}
		if k.Error() != string(k.Reason()) {
			t.Errorf("%s.Error() = %q, its reason is %q", n, k.Error(), k.Reason())
		}
	}
}

// TestKindsProducedHere checks, from the package's non-test source, that every kind outside
// the elsewhere set is referenced by this package's code, and that the elsewhere kinds are not
// (so the split between this package's tests and the chain state's tests is right).
func TestKindsProducedHere(t *testing.T) {
	files, err := filepath.Glob("*.go")
	noErr(t, err)
	used := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "errors.go" {
			continue
		}
		src, err := os.ReadFile(name)
		noErr(t, err)
		f, err := parser.ParseFile(fset, name, src, 0)
		noErr(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				if _, known := allKinds[id.Name]; known {
					used[id.Name] = true
				}
			}
			return true
		})
	}
	var wrong []string
	for name, k := range allKinds {
		if used[name] == elsewhere[k] {
			wrong = append(wrong, fmt.Sprintf("%s (used here: %v, listed as produced elsewhere: %v)", name, used[name], elsewhere[k]))
		}
	}
	sort.Strings(wrong)
	if len(wrong) > 0 {
		t.Fatalf("kind split is wrong:\n%s", strings.Join(wrong, "\n"))
	}
}

// TestKindsProducedElsewhere covers the kinds that lib/chainstate produces (ErrUnknownParent,
// ErrInvalidAncestor, ErrDuplicateBlock, ErrKnownInvalid): their rules are
// tested in the chain state package; here only the error plumbing is checked.
func TestKindsProducedElsewhere(t *testing.T) {
	tests := []struct {
		kind consensus.ErrorKind
		name string
		text string
	}{
		{consensus.ErrUnknownParent, "ErrUnknownParent", "unknown_parent"},       // tested in lib/chainstate
		{consensus.ErrInvalidAncestor, "ErrInvalidAncestor", "invalid_ancestor"}, // tested in lib/chainstate
		{consensus.ErrDuplicateBlock, "ErrDuplicateBlock", "duplicate_block"},    // tested in lib/chainstate
		{consensus.ErrKnownInvalid, "ErrKnownInvalid", "known_invalid"},          // tested in lib/chainstate
	}
	if len(tests) != len(elsewhere) {
		t.Fatalf("table has %d kinds, elsewhere has %d", len(tests), len(elsewhere))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !elsewhere[tc.kind] {
				t.Fatalf("%s missing from elsewhere", tc.name)
			}
			if tc.kind.Error() != tc.text {
				t.Fatalf("Error() = %q, want %q", tc.kind.Error(), tc.text)
			}
			err := error(consensus.RuleError{Err: tc.kind, Description: "something " + tc.name})
			if !errors.Is(err, tc.kind) {
				t.Fatal("errors.Is does not match the kind")
			}
			if !consensus.IsRuleError(err) {
				t.Fatal("IsRuleError is false")
			}
			if err.Error() != "something "+tc.name {
				t.Fatalf("Error() = %q", err.Error())
			}
			wrapped := fmt.Errorf("connect block: %w", err)
			if !errors.Is(wrapped, tc.kind) || !consensus.IsRuleError(wrapped) {
				t.Fatal("wrapped RuleError does not match")
			}
			// A different kind does not match.
			if errors.Is(err, consensus.ErrBadProofOfWork) {
				t.Fatal("matches an unrelated kind")
			}
		})
	}
}

func TestRuleErrorPlumbing(t *testing.T) {
	if consensus.IsRuleError(nil) || consensus.IsRuleError(errStorage) {
		t.Fatal("IsRuleError true for a non-rule error")
	}
	// A bare kind is an error, but not a RuleError.
	if consensus.IsRuleError(consensus.ErrBadProofOfWork) {
		t.Fatal("a bare ErrorKind is not a RuleError")
	}
	var re consensus.RuleError
	err := fmt.Errorf("outer: %w", consensus.RuleError{Err: consensus.ErrDoubleSpend, Description: "d"})
	if !errors.As(err, &re) || re.Err != consensus.ErrDoubleSpend || re.Description != "d" {
		t.Fatalf("errors.As gave %+v", re)
	}
	if errors.Unwrap(consensus.RuleError{Err: consensus.ErrNoInputs}) != consensus.ErrNoInputs {
		t.Fatal("Unwrap does not return the kind")
	}
}

// TestEveryKindHasAReason: every kind has a reason of its own, which it matches with
// errors.Is, as a RuleError of that kind does (the wire names are checked in lib/reason).
func TestEveryKindHasAReason(t *testing.T) {
	owner := map[reason.Reason]string{}
	for name, k := range allKinds {
		r := k.Reason()
		if r == "" {
			t.Errorf("%s has no reason", name)
			continue
		}
		if other, dup := owner[r]; dup {
			t.Errorf("%s and %s share the reason %q", other, name, r)
		}
		owner[r] = name
		err := fmt.Errorf("wrapped: %w", consensus.RuleError{Err: k, Description: "d"})
		if !errors.Is(err, r) || reason.Of(err) != r {
			t.Errorf("%s: a RuleError does not match its reason %q", name, r)
		}
	}
}
