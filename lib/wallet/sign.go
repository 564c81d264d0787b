package wallet

import (
	"crypto/ed25519"
	"errors"
	"fmt"

	"github.com/cointoolkit/coin/lib/types"
)

// Sign fills every input's public key and signature, whatever the transaction's kind: the
// signed message (protocol §5) covers the txid, which covers kind, payload and outputs. keys
// must hold the key of each coin's signer (its PKH, or Signer when set); plan.Coins[i] is
// input i. One key's signature serves all its inputs, since every input signs the same
// message.
func Sign(plan *Plan, keys []Key, magic [4]byte) error {
	byPKH := make(map[types.Hash]*Key, len(keys))
	for i := range keys {
		byPKH[keys[i].PKH] = &keys[i]
	}
	if len(plan.Coins) != len(plan.Tx.Inputs) {
		return errors.New("sign: plan has a different number of coins and inputs")
	}
	msg := types.SigMessage(magic, plan.Tx.TxID())
	sigs := make(map[types.Hash][]byte, 1)
	for i := range plan.Coins {
		pkh := plan.Coins[i].signer()
		k, ok := byPKH[pkh]
		if !ok {
			return fmt.Errorf("sign: no key for input %d (pubkey hash %s)", i, pkh)
		}
		sig, ok := sigs[pkh]
		if !ok {
			sig = ed25519.Sign(k.Priv, msg)
			sigs[pkh] = sig
		}
		copy(plan.Tx.Inputs[i].PublicKey[:], k.Pub)
		copy(plan.Tx.Inputs[i].Signature[:], sig)
	}
	return nil
}
