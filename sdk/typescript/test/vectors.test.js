// The SDK's keys against the official vectors in the repository's testdata/ (BIP-39,
// SLIP-0010 ed25519, bech32m, BLAKE3, RFC 8032) and coin-wallet's own derivations
// (testdata/wallet): an agent derives exactly the keys and addresses coin-wallet does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { blake3 } from '@noble/hashes/blake3.js';
import { bech32m } from '@scure/base';
import { mnemonicToSeed, slip10Derive, keyFromMnemonic, keyFromPrivate, sign, verify, bytesToHex, hexToBytes, NETWORKS } from '../src/index.js';
import { ed25519 } from '@noble/curves/ed25519.js';

const testdata = new URL('../../../testdata/', import.meta.url);
const load = (/** @type {string} */ p) => JSON.parse(readFileSync(new URL(p, testdata), 'utf8'));

test('BIP-39 seeds (passphrase TREZOR)', () => {
  const v = load('vectors/bip39_english.json').english;
  assert.equal(v.length, 24);
  for (const [, mnemonic, seed] of v) assert.equal(bytesToHex(mnemonicToSeed(mnemonic, 'TREZOR')), seed);
  assert.throws(() => mnemonicToSeed('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon'), /invalid mnemonic/);
});

test('SLIP-0010 ed25519', () => {
  const v = load('vectors/slip10_ed25519.json');
  assert.equal(v.length, 12);
  for (const c of v) {
    const { key, chainCode } = slip10Derive(hexToBytes(c.seed_hex), c.path);
    assert.equal(bytesToHex(key), c.private_hex, c.path);
    assert.equal(bytesToHex(chainCode), c.chain_code_hex, c.path);
    assert.equal('00' + bytesToHex(ed25519.getPublicKey(key)), c.public_hex, c.path);
  }
  assert.throws(() => slip10Derive(new Uint8Array(16), "m/0"), /hardened/);
});

test('bech32m checksums', () => {
  const v = load('vectors/bech32_bech32m.json').bech32m;
  for (const s of v.valid) assert.doesNotThrow(() => bech32m.decode(s, 90), s);
  for (const s of v.invalid) assert.throws(() => bech32m.decode(s, 90), JSON.stringify(s));
});

test('BLAKE3', () => {
  const v = load('vectors/blake3_test_vectors.json');
  for (const c of v.cases) {
    const input = Uint8Array.from({ length: c.input_len }, (_, i) => i % 251);
    assert.equal(bytesToHex(blake3(input)), c.hash.slice(0, 64), `length ${c.input_len}`);
  }
});

test('Ed25519 RFC 8032', () => {
  for (const c of load('vectors/ed25519_rfc8032.json')) {
    const sk = hexToBytes(c.secret_key_hex), msg = hexToBytes(c.message_hex);
    assert.equal(bytesToHex(ed25519.getPublicKey(sk)), c.public_key_hex, c.name);
    assert.equal(bytesToHex(sign(msg, sk)), c.signature_hex, c.name);
    assert.ok(verify(hexToBytes(c.signature_hex), msg, hexToBytes(c.public_key_hex)), c.name);
  }
});

test('coin-wallet derivations: keys, pubkey hashes, addresses', () => {
  const v = load('wallet/derivation_vectors.json');
  let n = 0;
  for (const c of v.cases) {
    // keyFromMnemonic for the first derivation of a case; the others from the seed (one
    // PBKDF2 per case keeps the test quick), along the same path keyFromMnemonic takes.
    const seed = mnemonicToSeed(c.mnemonic, c.passphrase);
    assert.equal(bytesToHex(seed), c.seed);
    for (const [i, d] of c.derivations.entries()) {
      const k = i === 0
        ? keyFromMnemonic(c.mnemonic, d.network, { account: d.account, index: d.index, passphrase: c.passphrase })
        : keyFromPrivate(slip10Derive(seed, `m/44'/${NETWORKS[d.network].coinType}'/${d.account}'/0'/${d.index}'`).key, d.network);
      assert.equal(k.network.name, d.network);
      assert.equal(bytesToHex(k.privateKey), d.private_key, d.path);
      assert.equal(bytesToHex(k.publicKey), d.public_key, d.path);
      assert.equal(bytesToHex(k.pubkeyHash), d.pubkey_hash, d.path);
      assert.equal(k.address, d.address, d.path);
      n++;
    }
  }
  assert.ok(n > 0);
});
