package consensus_test

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/hdevalence/ed25519consensus"
)

// sigCase is one (public key, message, signature) triple of a vector file.
type sigCase struct {
	pub [32]byte
	sig [64]byte
	msg []byte
}

func (c *sigCase) check(i int) consensus.SigCheck {
	return consensus.SigCheck{PublicKey: &c.pub, Signature: &c.sig, Message: c.msg,
		TxID: types.Blake3([]byte(fmt.Sprint("case", i))), Input: i}
}

func checksOf(cases []sigCase) []consensus.SigCheck {
	out := make([]consensus.SigCheck, len(cases))
	for i := range cases {
		out[i] = cases[i].check(i)
	}
	return out
}

func unhex(t testing.TB, s string, n int) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil || (n > 0 && len(b) != n) {
		t.Fatalf("bad hex %q (%d bytes, want %d): %v", s, len(b), n, err)
	}
	return b
}

// zip215Cases reads testdata/zip215_small_order.json, a copy of the project's shared vector
// file (its README gives the source: ZIP 215's test-vector construction).
func zip215Cases(t testing.TB) []sigCase {
	t.Helper()
	raw, err := os.ReadFile("testdata/zip215_small_order.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Message string `json:"message_utf8"`
		Cases   []struct {
			PublicKey string `json:"public_key"`
			Signature string `json:"signature"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	cases := make([]sigCase, len(f.Cases))
	for i, c := range f.Cases {
		copy(cases[i].pub[:], unhex(t, c.PublicKey, 32))
		copy(cases[i].sig[:], unhex(t, c.Signature, 64))
		cases[i].msg = []byte(f.Message)
	}
	return cases
}

// rfc8032Cases reads the RFC 8032 section 7.1 vectors from the repository's testdata/vectors
// (as lib/keys does).
func rfc8032Cases(t testing.TB) []sigCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vectors", "ed25519_rfc8032.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vs []struct {
		Public    string `json:"public_key_hex"`
		Message   string `json:"message_hex"`
		Signature string `json:"signature_hex"`
	}
	if err := json.Unmarshal(raw, &vs); err != nil {
		t.Fatal(err)
	}
	cases := make([]sigCase, len(vs))
	for i, v := range vs {
		copy(cases[i].pub[:], unhex(t, v.Public, 32))
		copy(cases[i].sig[:], unhex(t, v.Signature, 64))
		cases[i].msg = unhex(t, v.Message, -1)
	}
	return cases
}

// TestZIP215SmallOrderVectors: all 196 cases are valid, single and in batches of every size
// the verifiers use, sequential and parallel; crypto/ed25519 (cofactorless, strict encodings)
// rejects some of them, which is why protocol §4 names ZIP 215.
func TestZIP215SmallOrderVectors(t *testing.T) {
	cases := zip215Cases(t)
	if len(cases) != 196 {
		t.Fatalf("%d cases, want 196", len(cases))
	}
	checks := checksOf(cases)
	stdRejects := 0
	for i := range checks {
		if err := checks[i].Verify(); err != nil {
			t.Errorf("case %d: single verification: %v", i, err)
		}
		if !ed25519.Verify(cases[i].pub[:], cases[i].msg, cases[i].sig[:]) {
			stdRejects++
		}
	}
	if stdRejects == 0 {
		t.Error("crypto/ed25519 accepts every ZIP 215 case: the vectors would not show why the rule exists")
	}
	t.Logf("crypto/ed25519 rejects %d of %d ZIP 215 cases", stdRejects, len(cases))
	noErr(t, consensus.VerifyBatch(checks))
	for _, workers := range []int{0, 1, 2, 3, 8} {
		noErr(t, consensus.VerifyParallel(checks, workers))
	}
	for _, size := range []int{2, 3, 7, 16, 64, 65} {
		for start := 0; start < len(checks); start += size {
			noErr(t, consensus.VerifyBatch(checks[start:min(start+size, len(checks))]))
		}
	}
}

// TestRFC8032Vectors: the RFC 8032 signatures verify single and as a batch (also mixed with the
// ZIP 215 cases); any flipped bit of one makes single and batch verification both name it.
func TestRFC8032Vectors(t *testing.T) {
	cases := rfc8032Cases(t)
	if len(cases) != 5 {
		t.Fatalf("%d cases, want 5", len(cases))
	}
	checks := checksOf(cases)
	for i := range checks {
		noErr(t, checks[i].Verify())
	}
	noErr(t, consensus.VerifyBatch(checks))
	mixed := append(zip215Cases(t), cases...)
	noErr(t, consensus.VerifyParallel(checksOf(mixed), 2))

	for i := range cases {
		for _, bit := range []int{0, 255, 256, 511} { // R, then S
			bad := append([]sigCase(nil), cases...)
			bad[i].sig[bit/8] ^= 1 << (bit % 8)
			bc := checksOf(bad)
			single := bc[i].Verify()
			wantKind(t, single, consensus.ErrBadSignature)
			err := consensus.VerifyBatch(bc)
			if err == nil || err.Error() != single.Error() {
				t.Fatalf("vector %d, bit %d: batch %v, single %v", i, bit, err, single)
			}
		}
	}
}

// signedChecks is n checks over distinct messages signed by a few keys.
func signedChecks(n int) []consensus.SigCheck {
	keys := []key{alice, bob, carol, miner}
	checks := make([]consensus.SigCheck, n)
	for i := range checks {
		k := keys[i%len(keys)]
		txid := types.Blake3([]byte(fmt.Sprint("tx", i/3)))
		msg := types.SigMessage(regtestMagic, txid)
		var sig [64]byte
		copy(sig[:], ed25519.Sign(k.priv, msg))
		pub := k.pub
		checks[i] = consensus.SigCheck{PublicKey: &pub, Signature: &sig, Message: msg, TxID: txid, Input: i % 3}
	}
	return checks
}

// corrupt returns a copy of checks whose signatures at bad are invalid (S changed).
func corrupt(checks []consensus.SigCheck, bad ...int) []consensus.SigCheck {
	out := append([]consensus.SigCheck(nil), checks...)
	for _, i := range bad {
		sig := *out[i].Signature
		sig[40] ^= 0x10
		out[i].Signature = &sig
	}
	return out
}

// TestBatchFallbackNamesInput: when a batch fails, the signatures are verified one by one and
// the error is single verification's for the lowest-indexed invalid input (same kind, txid and
// input index), whatever the batch boundaries and the number of workers.
func TestBatchFallbackNamesInput(t *testing.T) {
	const n = 300
	good := signedChecks(n)
	noErr(t, consensus.VerifyParallel(good, 1))
	noErr(t, consensus.VerifyParallel(good, 0))
	for _, bad := range [][]int{{0}, {1}, {63}, {64}, {65}, {150}, {n - 1}, {70, 20}, {299, 5, 200}, {128, 129, 130}} {
		checks := corrupt(good, bad...)
		first := n
		for _, i := range bad {
			first = min(first, i)
		}
		want := checks[first].Verify()
		wantKind(t, want, consensus.ErrBadSignature)
		wantText := fmt.Sprintf("transaction %s: input %d: invalid signature", checks[first].TxID, checks[first].Input)
		if want.Error() != wantText {
			t.Fatalf("single verification says %q, want %q", want, wantText)
		}
		for _, workers := range []int{1, 2, 3, 7, 0} {
			for round := 0; round < 3; round++ {
				err := consensus.VerifyParallel(checks, workers)
				wantKind(t, err, consensus.ErrBadSignature)
				if err.Error() != want.Error() {
					t.Fatalf("bad %v, workers %d: got %q, want %q", bad, workers, err, want)
				}
			}
		}
		err := consensus.VerifyBatch(checks)
		if err == nil || err.Error() != want.Error() {
			t.Fatalf("VerifyBatch: bad %v: got %v, want %v", bad, err, want)
		}
	}
	if err := consensus.VerifyParallel(nil, 0); err != nil {
		t.Fatal(err)
	}
}

// TestVerifySignaturesBatchedInputs: a transaction with several inputs is verified as a batch;
// the error names its first invalid input, as single verification does.
func TestVerifySignaturesBatchedInputs(t *testing.T) {
	var ins []types.TxInput
	for i := 0; i < 5; i++ {
		ins = append(ins, input(op("multi", uint32(i)), alice))
	}
	tx := sign(transfer(ins, pay(100, bob)), regtestMagic, alice)
	txid := tx.TxID()
	noErr(t, consensus.VerifySignatures(tx, txid, regtestMagic))
	tx.Inputs[3].Signature[33] ^= 1
	tx.Inputs[4].Signature[0] ^= 1
	err := consensus.VerifySignatures(tx, txid, regtestMagic)
	wantKind(t, err, consensus.ErrBadSignature)
	if want := fmt.Sprintf("transaction %s: input 3: invalid signature", txid); err.Error() != want {
		t.Fatalf("got %q, want %q", err, want)
	}
}

// TestVerifyTransactions: one verdict per transaction, each naming its own first invalid input,
// with the transactions' signatures verified together.
func TestVerifyTransactions(t *testing.T) {
	var txs []*types.Transaction
	var ids []types.Hash
	for i := 0; i < 150; i++ {
		ins := []types.TxInput{input(op(fmt.Sprint("vt", i), 0), alice)}
		if i%10 == 0 {
			ins = append(ins, input(op(fmt.Sprint("vt", i), 1), bob), input(op(fmt.Sprint("vt", i), 2), carol))
		}
		tx := sign(transfer(ins, pay(100, bob)), regtestMagic, alice, bob, carol)
		txs = append(txs, tx)
		ids = append(ids, tx.TxID())
	}
	for _, workers := range []int{1, 2, 0} {
		if errs := consensus.VerifyTransactions(txs, ids, regtestMagic, workers); errs != nil {
			t.Fatalf("workers %d: all valid, got %v", workers, errs)
		}
	}
	badIn := map[int]int{3: 0, 40: 2, 41: 0, 149: 0, 100: 1}
	for i, in := range badIn {
		txs[i].Inputs[in].Signature[50] ^= 4
	}
	txs[40].Inputs[1].Signature[50] ^= 4 // tx 40: inputs 1 and 2 bad, 1 is named
	badIn[40] = 1
	for _, workers := range []int{1, 2, 0} {
		errs := consensus.VerifyTransactions(txs, ids, regtestMagic, workers)
		if len(errs) != len(txs) {
			t.Fatalf("workers %d: %d verdicts for %d transactions", workers, len(errs), len(txs))
		}
		for i, err := range errs {
			in, bad := badIn[i]
			if !bad {
				if err != nil {
					t.Fatalf("workers %d: valid transaction %d: %v", workers, i, err)
				}
				continue
			}
			wantKind(t, err, consensus.ErrBadSignature)
			if want := fmt.Sprintf("transaction %s: input %d: invalid signature", ids[i], in); err.Error() != want {
				t.Fatalf("workers %d: got %q, want %q", workers, err, want)
			}
		}
	}
}

// A large block with one bad signature: CheckBlockConnect's error names it, on one worker and on
// every CPU, with and without a cache that knows the other transactions.
func TestCheckBlockConnectBatchNamesBadInput(t *testing.T) {
	in := bigConnectInput(t, 200)
	noErr(t, func() error { _, err := consensus.CheckBlockConnect(in); return err }())
	bad := 137
	tx := in.Block.Transactions[bad]
	tx.Inputs[0].Signature[45] ^= 2
	want := fmt.Sprintf("transaction %s: input 0: invalid signature", in.TxIDs[bad])
	for _, workers := range []int{1, 0} {
		in.SigWorkers = workers
		_, err := consensus.CheckBlockConnect(in)
		wantKind(t, err, consensus.ErrBadSignature)
		if err.Error() != want {
			t.Fatalf("workers %d: got %q, want %q", workers, err, want)
		}
	}
	c := consensus.NewSigCache(0)
	preverifyBlock(t, c, in.Block, in.Magic)
	if c.Len() != 199 || c.Has(consensus.SigCacheKey(tx)) {
		t.Fatalf("preverify cached %d (bad one: %v), want the 199 good ones", c.Len(), c.Has(consensus.SigCacheKey(tx)))
	}
	in.SigCache = c
	_, err := consensus.CheckBlockConnect(in)
	if err == nil || err.Error() != want {
		t.Fatalf("with the cache: got %v, want %q", err, want)
	}
}

// FuzzBatchAgreesWithSingle builds up to 24 signatures (keys and messages from the input; one,
// two, three or all different keys, since the batch shares one term per key),
// mutates some of them (flipped bits in R, S or A; small-order A and R with S = 0, which
// ZIP 215 accepts; S + L, which it rejects; random A and R encodings; another message), and
// checks that batch verification (sequential, parallel and ed25519consensus's own batch
// verifier) agrees with single verification: everything valid, or the same error for the
// lowest-indexed invalid input.
func FuzzBatchAgreesWithSingle(f *testing.F) {
	small := zip215SmallOrder(f)
	f.Add([]byte("seed"), []byte("msg"), []byte{}, uint8(5))
	f.Add([]byte("seed"), []byte("msg"), []byte{1, 0, 7}, uint8(9))
	f.Add([]byte("k"), []byte(""), []byte{0, 2, 3, 1, 2, 200}, uint8(23))  // small order, twice
	f.Add([]byte("k"), []byte("m"), []byte{0, 3, 0, 4, 4, 19}, uint8(12))  // S + L, random R
	f.Add([]byte("k"), []byte("m"), []byte{2, 6, 9, 3, 1, 255}, uint8(70)) // flipped bits in S, A
	f.Fuzz(func(t *testing.T, seed, msg, muts []byte, n uint8) {
		count := int(n%24) + 1
		nkeys := count
		if kk := int(n/24) % 4; kk < 3 {
			nkeys = kk + 1
		}
		cases := make([]sigCase, count)
		for j := range cases {
			h := types.Blake3(append(append([]byte(nil), seed...), byte(j%nkeys)))
			priv := ed25519.NewKeyFromSeed(h[:])
			cases[j].msg = append(append([]byte(nil), msg...), byte(j))
			copy(cases[j].pub[:], priv.Public().(ed25519.PublicKey))
			copy(cases[j].sig[:], ed25519.Sign(priv, cases[j].msg))
		}
		for k := 0; k+3 <= len(muts) && k < 3*16; k += 3 {
			c := &cases[int(muts[k])%count]
			op, v := muts[k+1], muts[k+2]
			switch op % 7 {
			case 0: // small-order A and R, S = 0: valid under ZIP 215
				c.pub = small[int(v)%len(small)]
				copy(c.sig[:32], small[(int(v)/len(small)+int(op))%len(small)][:])
				clear(c.sig[32:])
			case 1: // a flipped bit of R
				c.sig[int(v)%32] ^= 1 << (op / 7 % 8)
			case 2: // a flipped bit of S
				c.sig[32+int(v)%32] ^= 1 << (op / 7 % 8)
			case 3: // a flipped bit of A
				c.pub[int(v)%32] ^= 1 << (op / 7 % 8)
			case 4: // S + L: non-canonical, invalid
				addL(c.sig[32:])
			case 5: // a random encoding of R (most are not points)
				h := types.Blake3([]byte{op, v})
				copy(c.sig[:32], h[:])
			case 6: // another message
				c.msg = append(c.msg, v)
			}
		}
		checks := checksOf(cases)
		var first error
		valid := 0
		for i := range checks {
			err := checks[i].Verify()
			if err == nil {
				valid++
			} else if first == nil {
				first = err
			}
		}
		same := func(name string, err error) {
			if (err == nil) != (first == nil) || (err != nil && err.Error() != first.Error()) {
				t.Fatalf("%s: %v, single verification: %v (%d of %d valid)", name, err, first, valid, count)
			}
		}
		same("VerifyBatch", consensus.VerifyBatch(checks))
		same("VerifyParallel(2)", consensus.VerifyParallel(checks, 2))
		same("VerifyParallel(5)", consensus.VerifyParallel(checks, 5))
		bv := ed25519consensus.NewBatchVerifier()
		for i := range cases {
			bv.Add(cases[i].pub[:], cases[i].msg, cases[i].sig[:])
		}
		if bv.Verify() != (first == nil) {
			t.Fatalf("ed25519consensus batch: %v, single verification: %v", bv.Verify(), first)
		}
	})
}

// zip215SmallOrder is the 14 small-order encodings of the ZIP 215 vector file.
func zip215SmallOrder(t testing.TB) [][32]byte {
	raw, err := os.ReadFile("testdata/zip215_small_order.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Encodings []string `json:"small_order_encodings"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	out := make([][32]byte, len(f.Encodings))
	for i, e := range f.Encodings {
		copy(out[i][:], unhex(t, e, 32))
	}
	if len(out) != 14 {
		t.Fatalf("%d small-order encodings, want 14", len(out))
	}
	return out
}

// addL adds the group order L to the little-endian 256-bit s (mod 2^256).
func addL(s []byte) {
	l := [32]byte{0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
		31: 0x10}
	carry := 0
	for i := range s {
		v := int(s[i]) + int(l[i]) + carry
		s[i], carry = byte(v), v>>8
	}
}
