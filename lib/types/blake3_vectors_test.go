package types

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"lukechampine.com/blake3"
)

// TestBLAKE3Vectors runs the official BLAKE3 test vectors (testdata/vectors) through the
// hash every txid, merkle node and pubkey hash uses, and through the extended output.
func TestBLAKE3Vectors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vectors", "blake3_test_vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Key   string `json:"key"`
		Cases []struct {
			InputLen  int    `json:"input_len"`
			Hash      string `json:"hash"`
			KeyedHash string `json:"keyed_hash"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Cases) != 35 {
		t.Fatalf("%d cases, want 35", len(v.Cases))
	}
	for _, c := range v.Cases {
		in := make([]byte, c.InputLen)
		for i := range in {
			in[i] = byte(i % 251)
		}
		if got := Blake3(in); hex.EncodeToString(got[:]) != c.Hash[:64] {
			t.Errorf("input_len %d: hash %x, want %s", c.InputLen, got, c.Hash[:64])
		}
		xof := make([]byte, len(c.Hash)/2)
		h := blake3.New(32, nil)
		h.Write(in)
		h.XOF().Read(xof)
		if hex.EncodeToString(xof) != c.Hash {
			t.Errorf("input_len %d: extended output differs", c.InputLen)
		}
		kh := blake3.New(32, []byte(v.Key))
		kh.Write(in)
		if hex.EncodeToString(kh.Sum(nil)) != c.KeyedHash[:64] {
			t.Errorf("input_len %d: keyed hash differs", c.InputLen)
		}
	}
}
