package types

import "crypto/ed25519"

// SignInputs fills every input of tx with key's public key and its signature of
// SigMessage(magic, txid): the whole transaction spends outputs of one key. The txid does not
// cover signatures, so one signature serves every input. lib/wallet signs with several keys.
func SignInputs(tx *Transaction, key ed25519.PrivateKey, magic [4]byte) {
	pub := key.Public().(ed25519.PublicKey)
	for i := range tx.Inputs {
		copy(tx.Inputs[i].PublicKey[:], pub)
	}
	sig := ed25519.Sign(key, SigMessage(magic, tx.TxID()))
	for i := range tx.Inputs {
		copy(tx.Inputs[i].Signature[:], sig)
	}
}
