package types

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/cointoolkit/coin/lib/bincode"
	"lukechampine.com/blake3"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// sampleTx is a fixed two-input, two-output transfer signed for the testnet magic.
func sampleTx() *Transaction {
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))
	tx := &Transaction{Version: 1, Kind: KindTransfer, LockTime: 300}
	for i := 0; i < 2; i++ {
		in := TxInput{PrevIndex: uint32(i * 300)}
		in.PrevTxID = Blake3([]byte{byte(i)})
		copy(in.PublicKey[:], key.Public().(ed25519.PublicKey))
		tx.Inputs = append(tx.Inputs, in)
	}
	tx.Outputs = []TxOutput{{Value: 5_000_000_000, PubKeyHash: Blake3([]byte("alice"))}, {Value: 250, PubKeyHash: Blake3([]byte("bob"))}}
	sig := ed25519.Sign(key, SigMessage([4]byte{'T', 'C', 'O', 'N'}, tx.TxID()))
	for i := range tx.Inputs {
		copy(tx.Inputs[i].Signature[:], sig)
	}
	return tx
}

func sampleBlock() *Block {
	cb := &Transaction{Version: 1, Kind: KindCoinbase,
		Outputs: []TxOutput{{Value: 5_000_000_000, PubKeyHash: Blake3([]byte("miner"))}},
		Payload: CoinbasePayload{Height: 1234, Extra: []byte("golden")}.Bytes()}
	b := &Block{Header: BlockHeader{Version: 1, PrevHash: Blake3([]byte("parent")), Timestamp: 1_767_225_600,
		DifficultyTarget: 0x207fffff, Nonce: 0x0102030405060708}, Transactions: []*Transaction{cb, sampleTx()}}
	b.Header.MerkleRoot = MerkleRoot(b.TxIDs())
	return b
}

type golden struct {
	Hex        string `json:"hex"`
	TxID       string `json:"txid,omitempty"`
	Hash       string `json:"hash,omitempty"`
	HeaderHex  string `json:"header_fixed_hex,omitempty"`
	MerkleRoot string `json:"merkle_root,omitempty"`
}

func checkGolden(t *testing.T, name string, got golden) {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", "golden", name)
	if *update {
		b, _ := json.MarshalIndent(got, "", "  ")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./lib/types -update once to create it)", err)
	}
	var want golden
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("%s changed:\n got %+v\nwant %+v", name, got, want)
	}
}

func TestGoldenTransaction(t *testing.T) {
	tx := sampleTx()
	checkGolden(t, "transaction.json", golden{Hex: hex.EncodeToString(tx.Bytes()), TxID: tx.TxID().String()})
	if !ed25519.Verify(tx.Inputs[0].PublicKey[:], SigMessage([4]byte{'T', 'C', 'O', 'N'}, tx.TxID()), tx.Inputs[0].Signature[:]) {
		t.Fatal("signature over the golden txid does not verify")
	}
}

func TestGoldenBlock(t *testing.T) {
	b := sampleBlock()
	fixed := b.Header.FixedBytes()
	checkGolden(t, "block.json", golden{Hex: hex.EncodeToString(b.Bytes()), Hash: b.Hash().String(),
		HeaderHex: hex.EncodeToString(fixed[:]), MerkleRoot: b.Header.MerkleRoot.String()})
}

func TestTxRoundTripAndSize(t *testing.T) {
	tx := sampleTx()
	enc := tx.Bytes()
	if len(enc) != tx.SerializeSize() {
		t.Fatalf("SerializeSize %d, encoded %d", tx.SerializeSize(), len(enc))
	}
	dec, err := DecodeTransaction(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dec.Bytes(), enc) || dec.TxID() != tx.TxID() {
		t.Fatal("round trip differs")
	}
	b := sampleBlock()
	if len(b.Bytes()) != b.SerializeSize() {
		t.Fatal("block SerializeSize differs")
	}
}

func TestTxIDIgnoresWitness(t *testing.T) {
	tx := sampleTx()
	id := tx.TxID()
	tx.Inputs[1].Signature[5] ^= 0xff
	tx.Inputs[0].PublicKey[0] ^= 1
	if tx.TxID() != id {
		t.Fatal("txid depends on the witness")
	}
	tx.Outputs[0].Value++
	if tx.TxID() == id {
		t.Fatal("txid does not depend on the outputs")
	}
}

func TestWitnessHash(t *testing.T) {
	tx := sampleTx()
	if tx.WitnessHash() != Blake3(tx.Bytes()) {
		t.Fatal("WitnessHash is not BLAKE3 of the full bincode")
	}
	w := tx.WitnessHash()
	tx.Inputs[0].Signature[0] ^= 1
	if tx.WitnessHash() == w {
		t.Fatal("WitnessHash ignores the signature")
	}
}

func TestHeaderFixedLayout(t *testing.T) {
	h := sampleBlock().Header
	b := h.FixedBytes()
	if b[0] != 1 || !bytes.Equal(b[4:36], h.PrevHash[:]) || b[80] != 0x08 || b[87] != 0x01 || b[76] != 0xff || b[79] != 0x20 {
		t.Fatalf("layout: %x", b)
	}
	if HeaderFromFixed(&b) != h {
		t.Fatal("HeaderFromFixed is not the inverse")
	}
}

func TestDecodeErrors(t *testing.T) {
	enc := sampleTx().Bytes()
	if _, err := DecodeTransaction(append(enc, 0)); !errors.Is(err, bincode.ErrTrailing) {
		t.Fatalf("trailing: %v", err)
	}
	if _, err := DecodeTransaction(enc[:len(enc)-1]); err == nil {
		t.Fatal("truncated accepted")
	}
	bad := append([]byte{1, 9}, enc[2:]...)
	if _, err := DecodeTransaction(bad); !errors.Is(err, ErrUnknownKind) {
		t.Fatalf("unknown kind: %v", err)
	}
	// A huge input count must fail before allocating.
	bomb := []byte{1, 1, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f}
	if _, err := DecodeTransaction(bomb); !errors.Is(err, bincode.ErrLength) {
		t.Fatalf("bomb: %v", err)
	}
}

// merkleRef is RFC 6962's recursive definition, written independently of MerkleRoot.
func merkleRef(ids []Hash) Hash {
	if len(ids) == 1 {
		return blake3.Sum256(append([]byte{0}, ids[0][:]...))
	}
	k := 1
	for k*2 < len(ids) {
		k *= 2
	}
	l, r := merkleRef(ids[:k]), merkleRef(ids[k:])
	return blake3.Sum256(append(append([]byte{1}, l[:]...), r[:]...))
}

func TestMerkleRoot(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for n := 1; n <= 70; n++ {
		ids := make([]Hash, n)
		for i := range ids {
			rng.Read(ids[i][:])
		}
		if MerkleRoot(ids) != merkleRef(ids) {
			t.Fatalf("n=%d differs", n)
		}
	}
	// No duplication of odd nodes: [a,b,c] and [a,b,c,c] differ (CVE-2012-2459 class).
	a, b, c := Blake3([]byte("a")), Blake3([]byte("b")), Blake3([]byte("c"))
	if MerkleRoot([]Hash{a, b, c}) == MerkleRoot([]Hash{a, b, c, c}) {
		t.Fatal("odd node duplicated")
	}
	if MerkleRoot(nil) != blake3.Sum256(nil) {
		t.Fatal("empty root")
	}
}

func TestPayloadsRoundTrip(t *testing.T) {
	id, subj := Blake3([]byte("c")), Blake3([]byte("s"))
	if p, err := DecodeReviewPayload(ReviewPayload{id, subj, 9}.Bytes()); err != nil || p.Score != 9 || p.Subject != subj {
		t.Fatal("review", err)
	}
	if p, err := DecodeContractCreatePayload(ContractCreatePayload{subj, 1440}.Bytes()); err != nil || p.ExpiryBlocks != 1440 {
		t.Fatal("create", err)
	}
	if _, err := DecodeVouchPayload(append(VouchPayload{id}.Bytes(), 0)); err == nil {
		t.Fatal("trailing vouch payload accepted")
	}
	cb := CoinbasePayload{Height: 7, Extra: bytes.Repeat([]byte{1}, 65)}
	if _, err := DecodeCoinbasePayload(cb.Bytes()); err == nil {
		t.Fatal("65-byte extra accepted")
	}
}

func TestParseHash(t *testing.T) {
	h := Blake3([]byte("x"))
	if p, err := ParseHash(h.String()); err != nil || p != h {
		t.Fatal(err)
	}
	for _, s := range []string{"", "zz", h.String()[:63], h.String() + "0", "g" + h.String()[1:]} {
		if _, err := ParseHash(s); err == nil {
			t.Fatalf("%q accepted", s)
		}
	}
}

// bigBlock is a block of about 1 MiB of transfers.
func bigBlock() []byte {
	b := sampleBlock()
	for b.SerializeSize() < 1<<20-400 {
		b.Transactions = append(b.Transactions, sampleTx())
	}
	return b.Bytes()
}

func BenchmarkDecodeBlock1MiB(b *testing.B) {
	raw := bigBlock()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeBlock(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMerkleRoot4096(b *testing.B) {
	ids := make([]Hash, 4096)
	for i := range ids {
		ids[i] = Blake3([]byte{byte(i), byte(i >> 8)})
	}
	for b.Loop() {
		MerkleRoot(ids)
	}
}

func BenchmarkTxID(b *testing.B) {
	tx := sampleTx()
	b.ReportAllocs()
	for b.Loop() {
		tx.TxID()
	}
}

func BenchmarkWitnessHash(b *testing.B) {
	tx := sampleTx()
	b.ReportAllocs()
	for b.Loop() {
		tx.WitnessHash()
	}
}
