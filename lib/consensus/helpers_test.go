package consensus_test

import (
	"crypto/ed25519"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/types"
)

// ---------------------------------------------------------------------------------------------
// Rule-kind bookkeeping: every test that expects a rule violation goes through wantKind, which
// records the kind. After a full run (no -run/-skip filter) TestMain checks that every ErrorKind
// declared in errors.go was hit, except the kinds the chain state package produces.
// ---------------------------------------------------------------------------------------------

// elsewhere are the kinds this package declares but the chain state package produces; they are
// tested there (here only their Error string and RuleError matching are checked).
var elsewhere = map[consensus.ErrorKind]bool{
	consensus.ErrUnknownParent:   true,
	consensus.ErrInvalidAncestor: true,
	consensus.ErrDuplicateBlock:  true,
	consensus.ErrKnownInvalid:    true,
}

var (
	coveredMu sync.Mutex
	covered   = map[consensus.ErrorKind]bool{}
)

// wantKind fails unless err is a RuleError of exactly kind, and records kind as covered.
func wantKind(t testing.TB, err error, kind consensus.ErrorKind) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", kind)
	}
	if !errors.Is(err, kind) {
		t.Fatalf("got %v (%T), want %s", err, err, kind)
	}
	var re consensus.RuleError
	if !errors.As(err, &re) || !consensus.IsRuleError(err) {
		t.Fatalf("error %v is not a RuleError", err)
	}
	if re.Err != kind {
		t.Fatalf("RuleError kind %s, want %s", re.Err, kind)
	}
	if re.Description == "" || err.Error() != re.Description {
		t.Fatalf("RuleError text %q, description %q", err.Error(), re.Description)
	}
	coveredMu.Lock()
	covered[kind] = true
	coveredMu.Unlock()
}

// noErr fails on any error.
func noErr(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

// declaredKinds parses errors.go and returns the names of every ErrorKind constant.
func declaredKinds() ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if i < len(vs.Values) {
					if call, ok := vs.Values[i].(*ast.CallExpr); ok {
						if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "ErrorKind" {
							names = append(names, n.Name)
						}
					}
				}
			}
		}
	}
	sort.Strings(names)
	return names, nil
}

// allKinds maps every declared kind name to its value (kept in step with errors.go by
// TestAllKindsListed).
var allKinds = map[string]consensus.ErrorKind{
	"ErrBadTxVersion": consensus.ErrBadTxVersion, "ErrTxTooLarge": consensus.ErrTxTooLarge,
	"ErrNoInputs": consensus.ErrNoInputs, "ErrNoOutputs": consensus.ErrNoOutputs,
	"ErrTooManyInputs": consensus.ErrTooManyInputs, "ErrTooManyOutputs": consensus.ErrTooManyOutputs,
	"ErrZeroOutput": consensus.ErrZeroOutput, "ErrValueOverflow": consensus.ErrValueOverflow,
	"ErrDuplicateInput": consensus.ErrDuplicateInput, "ErrBadCoinbaseInputs": consensus.ErrBadCoinbaseInputs,
	"ErrBadCoinbasePayload": consensus.ErrBadCoinbasePayload, "ErrBadTransferPayload": consensus.ErrBadTransferPayload,
	"ErrUnexpectedCoinbase": consensus.ErrUnexpectedCoinbase,
	"ErrBadAgentPayload":    consensus.ErrBadAgentPayload, "ErrForeignInput": consensus.ErrForeignInput,
	"ErrInvalidScore": consensus.ErrInvalidScore, "ErrInvalidExpiry": consensus.ErrInvalidExpiry,
	"ErrSelfTarget": consensus.ErrSelfTarget, "ErrBadStake": consensus.ErrBadStake, "ErrBadEscrow": consensus.ErrBadEscrow,
	"ErrNotAnAgent": consensus.ErrNotAnAgent, "ErrAlreadyRegistered": consensus.ErrAlreadyRegistered,
	"ErrScoreTooLow": consensus.ErrScoreTooLow, "ErrAgentNotFound": consensus.ErrAgentNotFound,
	"ErrAlreadyVouched": consensus.ErrAlreadyVouched, "ErrContractNotFound": consensus.ErrContractNotFound,
	"ErrContractNotOpen": consensus.ErrContractNotOpen, "ErrContractExpired": consensus.ErrContractExpired,
	"ErrContractNotExpired": consensus.ErrContractNotExpired, "ErrContractNotFulfilled": consensus.ErrContractNotFulfilled,
	"ErrNotCounterparty": consensus.ErrNotCounterparty, "ErrNotInitiator": consensus.ErrNotInitiator,
	"ErrEscrowNotSpent": consensus.ErrEscrowNotSpent, "ErrRefundOutputs": consensus.ErrRefundOutputs,
	"ErrNotParticipant": consensus.ErrNotParticipant, "ErrAlreadyReviewed": consensus.ErrAlreadyReviewed,
	"ErrMissingInputs": consensus.ErrMissingInputs, "ErrImmatureCoinbase": consensus.ErrImmatureCoinbase,
	"ErrPubKeyMismatch": consensus.ErrPubKeyMismatch, "ErrBadSignature": consensus.ErrBadSignature,
	"ErrInsufficientFunds": consensus.ErrInsufficientFunds, "ErrNonFinal": consensus.ErrNonFinal,
	"ErrLockedOutput": consensus.ErrLockedOutput, "ErrBadBlockVersion": consensus.ErrBadBlockVersion,
	"ErrBlockTooLarge": consensus.ErrBlockTooLarge, "ErrNoTransactions": consensus.ErrNoTransactions,
	"ErrFirstTxNotCoinbase": consensus.ErrFirstTxNotCoinbase, "ErrMultipleCoinbases": consensus.ErrMultipleCoinbases,
	"ErrBadMerkleRoot": consensus.ErrBadMerkleRoot, "ErrDuplicateTx": consensus.ErrDuplicateTx,
	"ErrBadTarget": consensus.ErrBadTarget, "ErrBadProofOfWork": consensus.ErrBadProofOfWork,
	"ErrBadCoinbaseHeight": consensus.ErrBadCoinbaseHeight, "ErrBadCoinbaseValue": consensus.ErrBadCoinbaseValue,
	"ErrDoubleSpend": consensus.ErrDoubleSpend, "ErrWrongDifficulty": consensus.ErrWrongDifficulty,
	"ErrTimeTooOld": consensus.ErrTimeTooOld, "ErrTimeTooNew": consensus.ErrTimeTooNew,
	"ErrUnknownParent": consensus.ErrUnknownParent, "ErrInvalidAncestor": consensus.ErrInvalidAncestor,
	"ErrDuplicateBlock": consensus.ErrDuplicateBlock, "ErrKnownInvalid": consensus.ErrKnownInvalid,
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	full := true
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			full = false
		}
	}
	if code == 0 && full {
		names, err := declaredKinds()
		if err != nil {
			fmt.Fprintln(os.Stderr, "parse errors.go:", err)
			os.Exit(1)
		}
		var missing []string
		for _, n := range names {
			k, ok := allKinds[n]
			if !ok {
				missing = append(missing, n+" (not in allKinds)")
				continue
			}
			if !elsewhere[k] && !covered[k] {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: no test produced these rule kinds: %s\n", strings.Join(missing, ", "))
			code = 1
		}
	}
	os.Exit(code)
}

// ---------------------------------------------------------------------------------------------
// Keys, views and builders.
// ---------------------------------------------------------------------------------------------

// key is a deterministic ed25519 key pair with its pubkey hash.
type key struct {
	priv ed25519.PrivateKey
	pub  [32]byte
	pkh  types.Hash
}

func newKey(seed byte) key {
	s := make([]byte, ed25519.SeedSize)
	for i := range s {
		s[i] = seed
	}
	var k key
	k.priv = ed25519.NewKeyFromSeed(s)
	copy(k.pub[:], k.priv.Public().(ed25519.PublicKey))
	k.pkh = types.Blake3(k.pub[:])
	return k
}

var (
	alice = newKey(1)
	bob   = newKey(2)
	miner = newKey(3)
	carol = newKey(4)
)

// regtestMagic is the magic every test signs with unless it tests cross-network replay.
var regtestMagic = params.Regtest.Magic

// mapView is an in-memory UtxoView.
type mapView map[types.Outpoint]*consensus.UtxoEntry

func (v mapView) Utxo(op types.Outpoint) (*consensus.UtxoEntry, bool, error) {
	e, ok := v[op]
	return e, ok, nil
}

var errStorage = errors.New("storage: disk on fire")

// errView fails every lookup with errStorage.
type errView struct{}

func (errView) Utxo(types.Outpoint) (*consensus.UtxoEntry, bool, error) {
	return nil, false, errStorage
}

// op is a synthetic outpoint from a label.
func op(label string, index uint32) types.Outpoint {
	return types.Outpoint{TxID: types.Blake3([]byte(label)), Index: index}
}

// input spends o with k's public key (unsigned).
func input(o types.Outpoint, k key) types.TxInput {
	return types.TxInput{PrevTxID: o.TxID, PrevIndex: o.Index, PublicKey: k.pub}
}

// transfer is a one-output transfer spending ins (unsigned).
func transfer(ins []types.TxInput, outs ...types.TxOutput) *types.Transaction {
	return &types.Transaction{Version: consensus.TxVersion, Kind: types.KindTransfer, Inputs: ins, Outputs: outs}
}

// sign signs every input of tx with the matching key for magic.
func sign(tx *types.Transaction, magic [4]byte, keys ...key) *types.Transaction {
	msg := types.SigMessage(magic, tx.TxID())
	for i := range tx.Inputs {
		k := keys[0]
		if i < len(keys) {
			k = keys[i]
		}
		copy(tx.Inputs[i].Signature[:], ed25519.Sign(k.priv, msg))
	}
	return tx
}

// coinbase pays outs at height.
func coinbase(height uint64, outs ...types.TxOutput) *types.Transaction {
	return &types.Transaction{
		Version: consensus.TxVersion, Kind: types.KindCoinbase, Outputs: outs,
		Payload: types.CoinbasePayload{Height: height, Extra: []byte("test")}.Bytes(),
	}
}

// pay is an output of v to k.
func pay(v uint64, k key) types.TxOutput { return types.TxOutput{Value: v, PubKeyHash: k.pkh} }

// regtestLimit is the regtest pow limit, the easiest target.
var regtestLimit = params.Regtest.PowLimit

// newBlock builds a version-1 block at the regtest limit with a correct merkle root, mined.
func newBlock(txs ...*types.Transaction) *types.Block {
	b := &types.Block{
		Header: types.BlockHeader{
			Version: consensus.BlockVersion, PrevHash: types.Blake3([]byte("parent")),
			Timestamp: 1_767_300_000, DifficultyTarget: params.Regtest.PowLimitBits,
		},
		Transactions: txs,
	}
	fix(b)
	return b
}

// fix recomputes the merkle root and mines the block again.
func fix(b *types.Block) {
	b.Header.MerkleRoot = types.MerkleRoot(b.TxIDs())
	mine(b, true)
}

// mine searches nonces from 0 until the header's hash meets (good) or misses (!good) its target.
func mine(b *types.Block, good bool) {
	target, err := pow.TargetFromCompact(b.Header.DifficultyTarget, nil)
	if err != nil {
		panic(err)
	}
	tb := pow.TargetBytes(target)
	for n := uint64(0); ; n++ {
		b.Header.Nonce = n
		h := [32]byte(b.Header.Hash())
		if pow.HashMeetsTarget(&h, &tb) == good {
			return
		}
	}
}

// sanity runs CheckBlockSanity the way a node does.
func sanity(b *types.Block) ([]types.Hash, error) {
	return consensus.CheckBlockSanity(b, b.Hash(), b.SerializeSize(), regtestLimit)
}

// utxosOf is the UTXO map behind a test block input's view.
func utxosOf(in consensus.BlockInput) mapView {
	return in.View.(consensus.ValuedView).Utxos.(mapView)
}

// withValues gives a test block input's view another value model.
func withValues(in *consensus.BlockInput, m consensus.ValueModel) {
	v := in.View.(consensus.ValuedView)
	v.Values = m
	in.View = v
}
