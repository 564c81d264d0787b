// Transactions: strict bincode (docs/protocol.md §3, §5), the txid, the signed message, and
// the check of a faucet's unsigned transaction against what was asked (§9.5). A client
// never signs a transaction it has not decoded and compared with its request.

import { blake3 } from '@noble/hashes/blake3.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';

export { bytesToHex, hexToBytes };

/** Transaction kinds (protocol §5). */
export const KIND = Object.freeze({
  coinbase: 0, transfer: 1, agent_register: 2, vouch: 3, contract_create: 4,
  contract_fulfil: 5, contract_refund: 6, review: 7,
});
const KIND_NAMES = Object.keys(KIND);

/** 1 COIN in subunits. */
export const COIN = 100_000_000n;
/** The stake of an agent registration (protocol §9). */
export const AGENT_STAKE = 50n * COIN;
/** The default contract expiry in blocks. */
export const DEFAULT_EXPIRY = 1440;

/** Every signed message starts with these 10 bytes. */
export const SIG_PREFIX = new TextEncoder().encode('COIN-TX-V1');

/**
 * @typedef {{prevTxid: Uint8Array, prevIndex: number, publicKey: Uint8Array, signature: Uint8Array}} TxInput
 * @typedef {{value: bigint, pubkeyHash: Uint8Array}} TxOutput
 * @typedef {{version: number, kind: number, inputs: TxInput[], outputs: TxOutput[], lockTime: bigint, payload: Uint8Array}} Transaction
 */

/** The error of a malformed or unexpected transaction. */
export class TxCheckError extends Error {
  /** @param {string} msg */
  constructor(msg) {
    super(msg);
    this.name = 'TxCheckError';
  }
}

class Reader {
  /** @param {Uint8Array} b */
  constructor(b) { this.b = b; this.off = 0; }
  /** @param {number} n */
  take(n) {
    if (n < 0 || n > this.b.length - this.off) throw new TxCheckError(`bincode: unexpected end of input at byte ${this.off}`);
    const s = this.b.subarray(this.off, this.off + n);
    this.off += n;
    return s;
  }
  /** A minimal varint of at most max (bigint). @param {bigint} max */
  varint(max) {
    const m = this.take(1)[0];
    let v, min;
    const dv = (/** @type {number} */ n) => { const s = this.take(n); return new DataView(s.buffer, s.byteOffset, n); };
    if (m < 251) { v = BigInt(m); min = 0n; }
    else if (m === 251) { v = BigInt(dv(2).getUint16(0, true)); min = 251n; }
    else if (m === 252) { v = BigInt(dv(4).getUint32(0, true)); min = 65536n; }
    else if (m === 253) { v = dv(8).getBigUint64(0, true); min = 4294967296n; }
    else throw new TxCheckError(`bincode: invalid varint marker ${m}`);
    if (v < min) throw new TxCheckError('bincode: non-minimal varint');
    if (v > max) throw new TxCheckError('bincode: integer overflows its type');
    return v;
  }
  u32() { return Number(this.varint(0xffffffffn)); }
  u64() { return this.varint(0xffffffffffffffffn); }
  /** A vector length whose elements of at least minElem bytes fit the rest. @param {number} minElem */
  len(minElem) {
    const n = this.u64();
    if (n * BigInt(minElem) > BigInt(this.b.length - this.off)) throw new TxCheckError('bincode: length exceeds remaining input');
    return Number(n);
  }
}

class Writer {
  constructor() { /** @type {number[]} */ this.out = []; }
  /** @param {bigint | number} v */
  varint(v) {
    v = BigInt(v);
    const put = (/** @type {number} */ n, /** @type {number} */ marker) => {
      this.out.push(marker);
      for (let i = 0; i < n; i++) { this.out.push(Number(v & 0xffn)); v >>= 8n; }
    };
    if (v < 251n) this.out.push(Number(v));
    else if (v <= 0xffffn) put(2, 251);
    else if (v <= 0xffffffffn) put(4, 252);
    else put(8, 253);
  }
  /** @param {Uint8Array} b */
  raw(b) { for (const x of b) this.out.push(x); }
  bytes() { return Uint8Array.from(this.out); }
}

/**
 * Decodes exactly one transaction (strict bincode: no trailing bytes, known kind).
 * @param {Uint8Array | string} b bytes or hex
 * @returns {Transaction}
 */
export function decodeTransaction(b) {
  const r = new Reader(typeof b === 'string' ? hexToBytes(b) : b);
  const version = r.u32();
  const kind = r.u32();
  if (kind >= KIND_NAMES.length) throw new TxCheckError(`unknown transaction kind ${kind}`);
  const inputs = [];
  for (let i = 0, n = r.len(129); i < n; i++) {
    inputs.push({ prevTxid: r.take(32).slice(), prevIndex: r.u32(), publicKey: r.take(32).slice(), signature: r.take(64).slice() });
  }
  const outputs = [];
  for (let i = 0, n = r.len(33); i < n; i++) outputs.push({ value: r.u64(), pubkeyHash: r.take(32).slice() });
  const lockTime = r.u64();
  const payload = r.take(r.len(1)).slice();
  if (r.off !== r.b.length) throw new TxCheckError(`bincode: ${r.b.length - r.off} trailing bytes`);
  return { version, kind, inputs, outputs, lockTime, payload };
}

/**
 * The transaction's bincode; without witness, every input's public key and signature are
 * left out (the form the txid hashes).
 * @param {Transaction} tx
 * @param {boolean} [witness]
 */
export function encodeTransaction(tx, witness = true) {
  const w = new Writer();
  w.varint(tx.version);
  w.varint(tx.kind);
  w.varint(tx.inputs.length);
  for (const i of tx.inputs) {
    w.raw(i.prevTxid);
    w.varint(i.prevIndex);
    if (witness) { w.raw(i.publicKey); w.raw(i.signature); }
  }
  w.varint(tx.outputs.length);
  for (const o of tx.outputs) { w.varint(o.value); w.raw(o.pubkeyHash); }
  w.varint(tx.lockTime);
  w.varint(tx.payload.length);
  w.raw(tx.payload);
  return w.bytes();
}

/**
 * The txid: BLAKE3-256 of the witness-stripped bincode, in hex.
 * @param {Transaction} tx
 */
export function txid(tx) {
  return bytesToHex(blake3(encodeTransaction(tx, false)));
}

/**
 * The message every input signs: "COIN-TX-V1" ‖ magic ‖ txid.
 * @param {Uint8Array} magic 4 bytes
 * @param {string} id txid hex
 */
export function sigMessage(magic, id) {
  const m = new Uint8Array(SIG_PREFIX.length + 4 + 32);
  m.set(SIG_PREFIX);
  m.set(magic, SIG_PREFIX.length);
  m.set(hexToBytes(id), SIG_PREFIX.length + 4);
  return m;
}

/**
 * Parses a decimal COIN amount ("1.5", 1.5) into subunits exactly.
 * @param {string | number | bigint} v
 */
export function parseCoin(v) {
  if (typeof v === 'bigint') return v;
  const s = String(v);
  const m = /^(\d+)(?:\.(\d{1,8}))?$/.exec(s);
  if (!m) throw new Error(`amount ${s}: a decimal COIN amount with at most 8 decimals`);
  return BigInt(m[1]) * COIN + BigInt((m[2] ?? '').padEnd(8, '0'));
}

/**
 * Formats subunits as decimal COIN with 8 decimals (as the faucet answers amounts).
 * @param {bigint} v
 */
export function formatCoin(v) {
  return `${v / COIN}.${(v % COIN).toString().padStart(8, '0')}`;
}

const eq = (/** @type {Uint8Array} */ a, /** @type {Uint8Array} */ b) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * What a client asked for, to compare an unsigned transaction with: its kind, the exact
 * payload, the outputs that must come first (the payment, stake or escrow), the inputs that
 * must come first (a contract's escrow), and the acting address's pubkey hash (every other
 * output is change to it).
 * @typedef {{kind: number, payload?: Uint8Array, leading?: TxOutput[], escrow?: string, actor: Uint8Array, maxFee: bigint}} Expectation
 */

/**
 * @typedef {{unsigned_tx: string, txid: string, sign: string, fee: string, inputs: {txid: string, index: number, value: string}[]}} UnsignedTx
 */

/**
 * Checks an unsigned answer before signing, and returns its decoded transaction and the
 * message to sign. Throws TxCheckError when anything differs from what was asked: the txid
 * or message do not follow from the bytes, a key or signature is already set, the kind or
 * payload differ, an output pays someone else, the fee is above maxFee or does not add up.
 * @param {UnsignedTx} u
 * @param {Expectation} want
 * @param {Uint8Array} magic
 * @returns {{tx: Transaction, message: Uint8Array}}
 */
export function checkUnsigned(u, want, magic) {
  const tx = decodeTransaction(u.unsigned_tx);
  const id = txid(tx);
  if (u.txid !== id) throw new TxCheckError(`the faucet says txid ${u.txid}, the transaction's is ${id}`);
  const message = sigMessage(magic, id);
  if (u.sign !== bytesToHex(message)) throw new TxCheckError('the message to sign is not "COIN-TX-V1" ‖ magic ‖ txid of this network');
  if (tx.version !== 1) throw new TxCheckError(`version ${tx.version}, want 1`);
  if (tx.kind !== want.kind) throw new TxCheckError(`a ${KIND_NAMES[tx.kind]} transaction, asked for a ${KIND_NAMES[want.kind]}`);
  if (tx.lockTime !== 0n) throw new TxCheckError(`lock time ${tx.lockTime}, asked for none`);
  if (!eq(tx.payload, want.payload ?? new Uint8Array())) throw new TxCheckError('the payload is not the one asked for');
  if (tx.inputs.length === 0 || tx.inputs.length !== u.inputs.length) throw new TxCheckError('the inputs listed are not the transaction\'s');
  tx.inputs.forEach((i, n) => {
    if (i.publicKey.some((x) => x) || i.signature.some((x) => x)) throw new TxCheckError(`input ${n} already has a key or signature`);
    if (bytesToHex(i.prevTxid) !== u.inputs[n].txid || i.prevIndex !== u.inputs[n].index) throw new TxCheckError(`input ${n} is not the one listed`);
  });
  if (want.escrow !== undefined && (bytesToHex(tx.inputs[0].prevTxid) !== want.escrow || tx.inputs[0].prevIndex !== 0)) {
    throw new TxCheckError('input 0 is not the escrow of the contract');
  }
  const leading = want.leading ?? [];
  if (tx.outputs.length < leading.length) throw new TxCheckError('outputs are missing');
  tx.outputs.forEach((o, n) => {
    if (n < leading.length) {
      if (o.value !== leading[n].value || !eq(o.pubkeyHash, leading[n].pubkeyHash)) {
        throw new TxCheckError(`output ${n} pays ${formatCoin(o.value)} COIN to another pubkey hash or amount than asked`);
      }
    } else if (!eq(o.pubkeyHash, want.actor)) {
      throw new TxCheckError(`output ${n} pays ${formatCoin(o.value)} COIN to someone else than the acting address`);
    }
  });
  let inSum = 0n;
  for (const i of u.inputs) inSum += parseCoin(i.value);
  const outSum = tx.outputs.reduce((s, o) => s + o.value, 0n);
  const fee = parseCoin(u.fee);
  if (inSum - outSum !== fee) throw new TxCheckError(`the fee ${u.fee} is not the inputs less the outputs`);
  if (fee > want.maxFee) throw new TxCheckError(`the fee ${u.fee} COIN is above the most allowed, ${formatCoin(want.maxFee)}`);
  return { tx, message };
}

/** Payload builders (protocol §5). */
export const payload = {
  /** @param {Uint8Array} target */
  vouch: (target) => target.slice(),
  /** @param {Uint8Array} counterparty @param {number} expiry */
  contractCreate: (counterparty, expiry) => { const w = new Writer(); w.raw(counterparty); w.varint(expiry); return w.bytes(); },
  /** @param {string} contractId */
  contractRef: (contractId) => hexToBytes(contractId),
  /** @param {string} contractId @param {Uint8Array} subject @param {number} score */
  review: (contractId, subject, score) => { const w = new Writer(); w.raw(hexToBytes(contractId)); w.raw(subject); w.out.push(score); return w.bytes(); },
};
