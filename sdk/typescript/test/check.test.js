// Never signing blind: checkUnsigned refuses every unsigned transaction that is not what was
// asked (a faucet that answers a transaction paying someone else gets an error, not a
// signature), and the bincode round-trips.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  KIND, COIN, NETWORKS, TxCheckError, checkUnsigned, encodeTransaction, decodeTransaction, txid, sigMessage, formatCoin,
  keyFromMnemonic, generateMnemonic, bytesToHex, payload,
} from '../src/index.js';

const net = NETWORKS.regtest;
const me = keyFromMnemonic(generateMnemonic(), net);
const you = keyFromMnemonic(generateMnemonic(), net);

/** An honest faucet's answer to "send 2 COIN to you": output 0 pays you, change to me. */
function honest(mut = (/** @type {any} */ tx) => tx) {
  const tx = mut({
    version: 1, kind: KIND.transfer, lockTime: 0n, payload: new Uint8Array(),
    inputs: [{ prevTxid: new Uint8Array(32).fill(7), prevIndex: 1, publicKey: new Uint8Array(32), signature: new Uint8Array(64) }],
    outputs: [{ value: 2n * COIN, pubkeyHash: you.pubkeyHash }, { value: 7n * COIN, pubkeyHash: me.pubkeyHash }],
  });
  const id = txid(tx);
  return {
    unsigned_tx: bytesToHex(encodeTransaction(tx)), txid: id, sign: bytesToHex(sigMessage(net.magic, id)),
    fee: formatCoin(1n * COIN - 2n * COIN + 2n * COIN - 1n * COIN + 500n), inputs: [{ txid: '07'.repeat(32), index: 1, value: formatCoin(9n * COIN + 500n) }],
  };
}
const want = { kind: KIND.transfer, leading: [{ value: 2n * COIN, pubkeyHash: you.pubkeyHash }], actor: me.pubkeyHash, maxFee: COIN / 100n };

test('an honest transaction passes, and its bincode round-trips', () => {
  const u = honest();
  const { tx, message } = checkUnsigned(u, want, net.magic);
  assert.equal(bytesToHex(encodeTransaction(decodeTransaction(u.unsigned_tx))), u.unsigned_tx);
  assert.equal(bytesToHex(message), u.sign);
  assert.equal(tx.outputs[0].value, 2n * COIN);
});

test('tampered transactions are refused', () => {
  const cases = {
    'change to someone else': honest((tx) => { tx.outputs[1].pubkeyHash = you.pubkeyHash; return tx; }),
    'payment to someone else': honest((tx) => { tx.outputs[0].pubkeyHash = me.pubkeyHash; return tx; }),
    'a smaller payment': honest((tx) => { tx.outputs[0].value -= 1n; return tx; }),
    'another kind': honest((tx) => { tx.kind = KIND.vouch; tx.payload = payload.vouch(you.pubkeyHash); return tx; }),
    'a lock time': honest((tx) => { tx.lockTime = 5n; return tx; }),
    'an extra output to someone else': honest((tx) => { tx.outputs.push({ value: COIN, pubkeyHash: you.pubkeyHash }); return tx; }),
    'a pre-set signature': honest((tx) => { tx.inputs[0].signature[3] = 1; return tx; }),
  };
  for (const [name, u] of Object.entries(cases)) {
    assert.throws(() => checkUnsigned(u, want, net.magic), TxCheckError, name);
  }
  // The bytes changed after the txid was computed: the txid no longer follows.
  const u = honest();
  const tampered = { ...u, unsigned_tx: bytesToHex(encodeTransaction(decodeTransaction(honest((tx) => { tx.outputs[0].value += 1n; return tx; }).unsigned_tx))) };
  assert.throws(() => checkUnsigned(tampered, want, net.magic), /txid/);
  // The message of another network, a fee above the maximum, input values that do not add up.
  assert.throws(() => checkUnsigned({ ...u, sign: bytesToHex(sigMessage(NETWORKS.mainnet.magic, u.txid)) }, want, net.magic), /message/);
  assert.throws(() => checkUnsigned(u, { ...want, maxFee: 100n }, net.magic), /fee/);
  assert.throws(() => checkUnsigned({ ...u, fee: '0.00000001' }, want, net.magic), /fee/);
  // Garbage.
  assert.throws(() => checkUnsigned({ ...u, unsigned_tx: u.unsigned_tx + '00' }, want, net.magic), /trailing/);
  assert.throws(() => checkUnsigned({ ...u, unsigned_tx: u.unsigned_tx.slice(0, 20) }, want, net.magic), TxCheckError);
});
