// Keys and addresses, exactly as coin-wallet derives them (docs/protocol.md §4):
// BIP-39 seed (PBKDF2-HMAC-SHA512, 2048 rounds) → SLIP-0010 ed25519 at
// m/44'/COIN_TYPE'/account'/0'/index' (every level hardened) → Ed25519 public key →
// BLAKE3-256 pubkey hash → bech32m address (HRP "coin"/"tcoin", version symbol 0).

import { ed25519 } from '@noble/curves/ed25519.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { blake3 } from '@noble/hashes/blake3.js';
import { bech32m } from '@scure/base';
import { generateMnemonic as bip39Generate, mnemonicToSeedSync, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';

/** @typedef {{name: string, hrp: string, coinType: number, magic: Uint8Array}} Network */

const ascii = (/** @type {string} */ s) => new TextEncoder().encode(s);

/** The networks (lib/params): address HRP, SLIP-0044 coin type, 4-byte magic of the signed message. */
export const NETWORKS = Object.freeze({
  mainnet: Object.freeze({ name: 'mainnet', hrp: 'coin', coinType: 7777, magic: ascii('COIN') }),
  testnet: Object.freeze({ name: 'testnet', hrp: 'tcoin', coinType: 1, magic: ascii('TCON') }),
  regtest: Object.freeze({ name: 'regtest', hrp: 'tcoin', coinType: 1, magic: ascii('RCON') }),
});

/**
 * The network of a name.
 * @param {string | Network} n
 * @returns {Network}
 */
export function network(n) {
  if (typeof n !== 'string') return n;
  const net = NETWORKS[/** @type {keyof NETWORKS} */ (n)];
  if (!net) throw new Error(`unknown network ${n}: mainnet, testnet or regtest`);
  return net;
}

export const HARDENED = 0x80000000;

/**
 * A fresh 12-word BIP-39 English mnemonic (128 bits of entropy).
 * @returns {string}
 */
export function generateMnemonic() {
  return bip39Generate(wordlist, 128);
}

/**
 * The 64-byte BIP-39 seed of a mnemonic; the mnemonic's words must be valid (checksum
 * included). Whitespace is normalised as coin-wallet does.
 * @param {string} mnemonic
 * @param {string} [passphrase]
 * @returns {Uint8Array}
 */
export function mnemonicToSeed(mnemonic, passphrase = '') {
  const m = mnemonic.trim().split(/\s+/).join(' ');
  if (!validateMnemonic(m, wordlist)) throw new Error('invalid mnemonic (words or checksum)');
  return mnemonicToSeedSync(m, passphrase);
}

/**
 * SLIP-0010 ed25519 derivation of a path of hardened indexes ("m/44'/1'/0'/0'/0'").
 * @param {Uint8Array} seed
 * @param {string} path
 * @returns {{key: Uint8Array, chainCode: Uint8Array}}
 */
export function slip10Derive(seed, path) {
  const parts = path.split('/');
  if (parts[0] !== 'm') throw new Error(`path ${path} must start with m`);
  let I = hmac(sha512, ascii('ed25519 seed'), seed);
  let key = I.slice(0, 32), chainCode = I.slice(32);
  for (const p of parts.slice(1)) {
    if (!/^\d+'$/.test(p)) throw new Error(`path segment ${p}: ed25519 derives hardened segments only`);
    const index = Number(p.slice(0, -1));
    if (index >= HARDENED) throw new Error(`path segment ${p} is not below 2^31`);
    const data = new Uint8Array(37);
    data.set(key, 1);
    new DataView(data.buffer).setUint32(33, (index + HARDENED) >>> 0, false);
    I = hmac(sha512, chainCode, data);
    key = I.slice(0, 32);
    chainCode = I.slice(32);
  }
  return { key, chainCode };
}

/**
 * BLAKE3-256 of a public key: the pubkey hash that outputs pay.
 * @param {Uint8Array} publicKey
 * @returns {Uint8Array}
 */
export function pubkeyHash(publicKey) {
  return blake3(publicKey);
}

/**
 * The bech32m address of a pubkey hash.
 * @param {Uint8Array} pkh 32 bytes
 * @param {string | Network} net
 * @returns {string}
 */
export function encodeAddress(pkh, net) {
  if (pkh.length !== 32) throw new Error('a pubkey hash is 32 bytes');
  return bech32m.encode(network(net).hrp, [0, ...bech32m.toWords(pkh)], 90);
}

/**
 * The pubkey hash of an address of net (checks HRP, bech32m, version 0, 32 bytes).
 * @param {string} address
 * @param {string | Network} net
 * @returns {Uint8Array}
 */
export function decodeAddress(address, net) {
  const { prefix, words } = bech32m.decode(/** @type {`${string}1${string}`} */ (address), 90);
  if (prefix !== network(net).hrp) throw new Error(`address ${address} is not of network ${network(net).name}`);
  if (words[0] !== 0) throw new Error(`address ${address}: version ${words[0]}, want 0`);
  const pkh = bech32m.fromWords(words.slice(1));
  if (pkh.length !== 32) throw new Error(`address ${address}: ${pkh.length} bytes, want 32`);
  return Uint8Array.from(pkh);
}

/**
 * A key of a wallet: its private key (32-byte Ed25519 seed), public key, pubkey hash and
 * address.
 * @typedef {{privateKey: Uint8Array, publicKey: Uint8Array, pubkeyHash: Uint8Array, address: string, network: Network}} Key
 */

/**
 * The key of a 32-byte Ed25519 private key on net.
 * @param {Uint8Array} privateKey
 * @param {string | Network} net
 * @returns {Key}
 */
export function keyFromPrivate(privateKey, net) {
  const publicKey = ed25519.getPublicKey(privateKey);
  const pkh = pubkeyHash(publicKey);
  return { privateKey, publicKey, pubkeyHash: pkh, address: encodeAddress(pkh, net), network: network(net) };
}

/**
 * The key at m/44'/COIN_TYPE'/account'/0'/index' of a mnemonic: "the address of a
 * mnemonic" is account 0, index 0 (what the faucet acts for).
 * @param {string} mnemonic
 * @param {string | Network} net
 * @param {{account?: number, index?: number, passphrase?: string}} [opts]
 * @returns {Key}
 */
export function keyFromMnemonic(mnemonic, net, opts = {}) {
  const { account = 0, index = 0, passphrase = '' } = opts;
  const n = network(net);
  const { key } = slip10Derive(mnemonicToSeed(mnemonic, passphrase), `m/44'/${n.coinType}'/${account}'/0'/${index}'`);
  return keyFromPrivate(key, n);
}

/**
 * Ed25519 signature (RFC 8032) of msg.
 * @param {Uint8Array} msg
 * @param {Uint8Array} privateKey
 * @returns {Uint8Array}
 */
export function sign(msg, privateKey) {
  return ed25519.sign(msg, privateKey);
}

/**
 * Verifies an Ed25519 signature.
 * @param {Uint8Array} sig
 * @param {Uint8Array} msg
 * @param {Uint8Array} publicKey
 * @returns {boolean}
 */
export function verify(sig, msg, publicKey) {
  return ed25519.verify(sig, msg, publicKey);
}
