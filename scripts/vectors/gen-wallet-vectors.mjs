// Independent generator of wallet derivation vectors for coin-wallet.
//
// It computes, with JavaScript libraries that share no code with the Go
// implementation (npm: bip39, ed25519-hd-key, @noble/hashes, bech32):
//
//   mnemonic --BIP-39 PBKDF2--> seed --SLIP-0010 ed25519 m/44'/COIN_TYPE'/account'/0'/index'-->
//   key --Ed25519--> public key --BLAKE3-256--> pubkey hash --bech32m(HRP, [0] ++ words)--> address
//
// COIN_TYPE is 7777 with HRP "coin" on mainnet and 1 with HRP "tcoin" on
// testnet and regtest (protocol §4). The output is deterministic: the mnemonics
// come from fixed entropies, so running it again must reproduce
// testdata/wallet/derivation_vectors.json byte for byte (npm run check-vectors).
//
// Usage: npm install && npm run vectors
import * as bip39 from 'bip39';
import { derivePath, getPublicKey } from 'ed25519-hd-key';
import { blake3 } from '@noble/hashes/blake3.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { bech32m } from 'bech32';

const networks = [
  { name: 'mainnet', hrp: 'coin', coinType: 7777 },
  { name: 'testnet', hrp: 'tcoin', coinType: 1 },
];

// Entropies: the all-zero and all-0x7f/0xff ones of the BIP-39 test vectors,
// then entropies derived from a fixed label, 12 and 24 words.
const entropies = [
  '00000000000000000000000000000000',
  '7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f',
  'ffffffffffffffffffffffffffffffff',
];
for (let i = 0; i < 6; i++) {
  entropies.push(bytesToHex(sha256(utf8ToBytes(`coin wallet vector ${i}`))).slice(0, 32));
}
for (let i = 0; i < 2; i++) {
  entropies.push(bytesToHex(sha256(utf8ToBytes(`coin wallet vector 24 ${i}`))));
}

const cases = [];
entropies.forEach((entropy, n) => {
  const mnemonic = bip39.entropyToMnemonic(entropy);
  // One case in four uses a BIP-39 passphrase.
  const passphrase = n % 4 === 3 ? 'TREZOR' : '';
  const seed = bip39.mnemonicToSeedSync(mnemonic, passphrase).toString('hex');
  const derivations = [];
  for (const net of networks) {
    for (const [account, index] of [[0, 0], [0, 1], [0, 2], [1, 0], [0, 1000]]) {
      const path = `m/44'/${net.coinType}'/${account}'/0'/${index}'`;
      const { key } = derivePath(path, seed);
      const pub = getPublicKey(key, false);
      const pkh = blake3(pub);
      const address = bech32m.encode(net.hrp, [0, ...bech32m.toWords(pkh)], 90);
      derivations.push({
        network: net.name,
        account,
        index,
        path,
        private_key: bytesToHex(key),
        public_key: bytesToHex(pub),
        pubkey_hash: bytesToHex(pkh),
        address,
      });
    }
  }
  cases.push({ mnemonic, passphrase, seed, derivations });
});

const out = {
  source: 'scripts/vectors/gen-wallet-vectors.mjs with npm bip39 3.1.2, ed25519-hd-key 2.0.0, @noble/hashes 2.4.0 (blake3), bech32 2.0.0 (bech32m)',
  description: "BIP-39 seed, SLIP-0010 ed25519 key at m/44'/COIN_TYPE'/account'/0'/index', BLAKE3-256 pubkey hash and bech32m address; COIN_TYPE 7777/HRP coin on mainnet, 1/tcoin on testnet and regtest",
  cases,
};
process.stdout.write(JSON.stringify(out, null, 2) + '\n');
