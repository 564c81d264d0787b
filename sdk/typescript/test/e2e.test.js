// Against a real coin-faucetd (and its coin-node): COIN_FAUCET_URL names it, on
// COIN_NETWORK (default regtest). sdk_test.go starts both and runs this; without the variable
// these tests are skipped.
//
// A whole contract (register both, create, fulfil, review both ways) with no mnemonic ever
// sent to the faucet, scored exactly as the same contract done the mnemonic way; a tampered
// answer is refused before anything is signed or submitted; the event stream resumes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Agent, FaucetError, TxCheckError, generateMnemonic, decodeTransaction, encodeTransaction, txid, sigMessage, bytesToHex, NETWORKS,
} from '../src/index.js';

const faucet = process.env.COIN_FAUCET_URL;
const net = process.env.COIN_NETWORK ?? 'regtest';
const skip = faucet ? false : 'COIN_FAUCET_URL is not set (sdk_test.go sets it)';

/** The fetch of an agent that records every request body it sends. */
function recording() {
  /** @type {{url: string, body: string}[]} */
  const sent = [];
  /** @type {typeof fetch} */
  const f = async (url, init) => { sent.push({ url: String(url), body: String(init?.body ?? '') }); return fetch(url, init); };
  return { sent, f };
}

/** A mnemonic-way call (the spec's form): the mnemonic in the body. */
async function withMnemonic(path, body) {
  const res = await fetch(faucet + path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body).replace(/"score":"(\d+)"/, '"score":$1').replace(/"value_coin":"([\d.]+)"/, '"value_coin":$1') });
  const data = await res.json();
  assert.equal(res.status, 200, `${path}: ${JSON.stringify(data)}`);
  return data;
}

test('a whole contract without a mnemonic scores as the mnemonic way', { skip }, async () => {
  const ma = generateMnemonic(), mb = generateMnemonic();
  const ra = recording(), rb = recording();
  const a = new Agent({ faucet, mnemonic: ma, network: net, fetch: ra.f });
  const b = new Agent({ faucet, mnemonic: mb, network: net, fetch: rb.f });
  const mc = generateMnemonic(), md = generateMnemonic();
  const c = new Agent({ faucet, mnemonic: mc, network: net }), d = new Agent({ faucet, mnemonic: md, network: net });
  for (const x of [a, b, c, d]) await x.claim();

  // The SDK: public key, local checks and signature, /api/tx/submit.
  const reg = await a.register();
  assert.equal(reg.address, a.address);
  assert.equal(reg.conduct_score, 500);
  await b.register();
  const cr = await a.createContract(b.address, '2.5');
  assert.equal(cr.initiator, a.address);
  assert.equal(cr.counterparty, b.address);
  assert.equal(cr.value_coin, '2.50000000');
  const fr = await b.fulfil(cr.contract_id);
  assert.equal(fr.status, 'fulfilled');
  const rab = await a.review(cr.contract_id, b.address, 9);
  const rba = await b.review(cr.contract_id, a.address, 3);

  // The mnemonic way, for c and d.
  await withMnemonic('/api/agent/register', { mnemonic: mc });
  await withMnemonic('/api/agent/register', { mnemonic: md });
  const cr2 = await withMnemonic('/api/agent/contract/create', { mnemonic: mc, counterparty: d.address, value_coin: '2.5' });
  await withMnemonic('/api/agent/contract/fulfil', { mnemonic: md, contract_id: cr2.contract_id });
  const rcd = await withMnemonic('/api/agent/review', { mnemonic: mc, subject_address: d.address, score: '9', contract_id: cr2.contract_id });
  const rdc = await withMnemonic('/api/agent/review', { mnemonic: md, subject_address: c.address, score: '3', contract_id: cr2.contract_id });

  assert.equal(rab.new_conduct_score, rcd.new_conduct_score);
  assert.equal(rba.new_conduct_score, rdc.new_conduct_score);
  assert.equal(rab.new_conduct_score, 587);
  const [pa, pb, pc, pd] = await Promise.all([a.profile(), b.profile(), c.profile(), d.profile()]);
  for (const [x, y] of [[pa, pc], [pb, pd]]) {
    for (const f of ['conduct_score', 'tier', 'contracts_completed', 'reviews_received', 'average_review_score']) assert.equal(x[f], y[f], f);
  }
  const dir = await a.directory({ limit: 100 });
  assert.ok(dir.agents.some((/** @type {any} */ e) => e.address === b.address && e.conduct_score === 587));

  // Not one request of a or b carried a mnemonic, a private key or a seed.
  for (const [m, r, x] of [[ma, ra, a], [mb, rb, b]]) {
    const priv = bytesToHex(x.key.privateKey);
    for (const s of r.sent) {
      assert.ok(!s.body.includes(m.split(' ')[0] + ' ') && !s.body.includes('mnemonic') && !s.body.includes(priv), `${s.url} sent ${s.body}`);
    }
    assert.ok(r.sent.some((s) => s.url.endsWith('/api/tx/submit')));
  }

  // A send, checked and signed the same way.
  const sent = await a.send(c.address, '1.25');
  assert.equal(sent.from, a.address);
  assert.equal(sent.to, c.address);
  assert.equal(sent.amount, '1.25000000');
});

test('a faucet that tampers with the transaction gets no signature', { skip }, async () => {
  const other = new Agent({ faucet, mnemonic: generateMnemonic(), network: net });
  let submitted = false;
  /** A faucet in the middle: it answers a transfer whose payment goes to `other`, with a consistent txid and message. */
  /** @type {typeof fetch} */
  const evil = async (url, init) => {
    if (String(url).endsWith('/api/tx/submit')) submitted = true;
    const res = await fetch(url, init);
    if (!String(url).endsWith('/api/wallet/send') || res.status !== 200) return res;
    const u = await res.json();
    const tx = decodeTransaction(u.unsigned_tx);
    tx.outputs[0].pubkeyHash = other.key.pubkeyHash;
    const id = txid(tx);
    const forged = { ...u, unsigned_tx: bytesToHex(encodeTransaction(tx)), txid: id, sign: bytesToHex(sigMessage(NETWORKS[net].magic, id)) };
    return new Response(JSON.stringify(forged), { status: 200, headers: { 'Content-Type': 'application/json' } });
  };
  const a = new Agent({ faucet, mnemonic: generateMnemonic(), network: net, fetch: evil });
  const to = new Agent({ faucet, mnemonic: generateMnemonic(), network: net });
  await a.claim();
  await assert.rejects(a.send(to.address, '1'), (err) => err instanceof TxCheckError && /output 0/.test(err.message));
  assert.equal(submitted, false);
  // And the faucet's own refusals come back with their codes.
  await assert.rejects(a.vouch(to.address), (err) => err instanceof FaucetError && err.code === 'not_an_agent' && err.status === 400);
});

test('the event stream, resumed after the last id', { skip }, async () => {
  const a = new Agent({ faucet, mnemonic: generateMnemonic(), network: net });
  await a.claim();
  await a.register();
  const ac = new AbortController();
  const seen = [];
  // From the first event on (Last-Event-ID 0): the pending agent_registered may be published
  // before this stream is open, and nothing here mines the block that would confirm it.
  for await (const e of a.events({ address: a.address, lastEventId: 0, signal: ac.signal })) {
    seen.push(e);
    if (e.event === 'agent_registered') break;
  }
  const first = seen.at(-1);
  assert.equal(first.data.actor ?? first.data.address, a.address);
  // Resume after it: the next event of a (its second agent transaction) comes, not the first again.
  const b = new Agent({ faucet, mnemonic: generateMnemonic(), network: net });
  await b.claim();
  await b.register();
  await a.createContract(b.address, 1);
  for await (const e of a.events({ address: a.address, lastEventId: first.id, signal: ac.signal })) {
    assert.ok(Number(e.id) > Number(first.id), `event ${e.id} after ${first.id}`);
    if (e.event === 'contract_created') break;
  }
  ac.abort();
});

const nodeRPC = process.env.COIN_NODE_RPC;

/** Mines n blocks on the regtest node (generatetoaddress), for what waits on the height. */
async function mine(n) {
  const res = await fetch(nodeRPC, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'generatetoaddress', params: [n, process.env.COIN_MINE_TO] }),
  });
  const body = await res.json();
  assert.ok(!body.error, JSON.stringify(body.error));
}

test('an expired contract refunded, its escrow checked before signing', { skip: skip || (nodeRPC ? false : 'COIN_NODE_RPC is not set') }, async () => {
  const a = new Agent({ faucet, mnemonic: generateMnemonic(), network: net });
  const b = new Agent({ faucet, mnemonic: generateMnemonic(), network: net });
  await a.claim(); await b.claim();
  await a.register(); await b.register();
  const c = await a.createContract(b.address, '1', { expiryBlocks: 10 });
  assert.equal(c.expiry_blocks, 10);
  await assert.rejects(a.refund(c.contract_id), (err) => err instanceof FaucetError && err.code === 'contract_not_expired');
  await assert.rejects(b.refund(c.contract_id), (err) => err instanceof FaucetError && err.code === 'not_initiator');
  await mine(10);
  const r = await a.refund(c.contract_id);
  assert.equal(r.contract_id, c.contract_id);
  assert.equal(r.status, 'expired');
  const rec = await a.contract(c.contract_id);
  assert.equal(rec.status, 'expired');
  assert.equal(rec.closed_by, r.refund_txid);
  const pb = await b.profile();
  assert.equal(pb.contracts_failed, 1);
});
