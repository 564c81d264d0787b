// An agent that keeps its key: every operation is asked from a coin-faucetd with the
// agent's public key, the unsigned answer is decoded and checked against the request
// (checkUnsigned), signed here, and sent with POST /api/tx/submit (docs/protocol.md §9.5).
// The mnemonic and the private key never leave this process.

import { keyFromMnemonic, keyFromPrivate, decodeAddress, sign, network } from './keys.js';
import { KIND, AGENT_STAKE, DEFAULT_EXPIRY, checkUnsigned, parseCoin, formatCoin, payload, bytesToHex } from './tx.js';

/** A refusal of the faucet: its HTTP status and stable code (docs/faucet.md). */
export class FaucetError extends Error {
  /** @param {number} status @param {string} code @param {string} message */
  constructor(status, code, message) {
    super(`${code}: ${message}`);
    this.name = 'FaucetError';
    this.status = status;
    this.code = code;
  }
}

/**
 * A JSON body whose fields named in numbers are written as JSON numbers from their exact
 * decimal text (the faucet reads amounts as numbers, never strings).
 * @param {Record<string, unknown>} obj
 * @param {string[]} numbers
 */
function jsonBody(obj, numbers = []) {
  let s = JSON.stringify(obj);
  for (const f of numbers) {
    if (obj[f] === undefined) continue;
    const text = String(obj[f]);
    if (!/^\d+(\.\d+)?$/.test(text)) throw new Error(`${f} ${text} is not a decimal number`);
    s = s.replace(`${JSON.stringify(f)}:${JSON.stringify(text)}`, `${JSON.stringify(f)}:${text}`);
  }
  return s;
}

export class Agent {
  /**
   * @param {{faucet: string, mnemonic?: string, privateKey?: Uint8Array, network?: string,
   *   maxFee?: string | number, fetch?: typeof fetch}} opts
   *   faucet: the coin-faucetd base URL; mnemonic (12 words) or privateKey (32 bytes): the
   *   agent's key, kept here; network: mainnet, testnet (default) or regtest; maxFee: the most
   *   COIN the agent pays in fee for one operation (default 0.01).
   */
  constructor(opts) {
    this.faucet = opts.faucet.replace(/\/+$/, '');
    this.network = network(opts.network ?? 'testnet');
    if (opts.mnemonic) this.key = keyFromMnemonic(opts.mnemonic, this.network);
    else if (opts.privateKey) this.key = keyFromPrivate(opts.privateKey, this.network);
    else throw new Error('an Agent needs its mnemonic or privateKey');
    this.maxFee = parseCoin(opts.maxFee ?? '0.01');
    this.fetch = opts.fetch ?? globalThis.fetch;
  }

  /** The agent's address (account 0, index 0 of its mnemonic). */
  get address() { return this.key.address; }

  /** The agent's Ed25519 public key, hex: what the faucet sees instead of the mnemonic. */
  get publicKey() { return bytesToHex(this.key.publicKey); }

  /**
   * One HTTP request to the faucet; a non-200 answer throws FaucetError.
   * @param {string} method @param {string} path @param {string} [body]
   * @returns {Promise<any>}
   */
  async request(method, path, body) {
    const res = await this.fetch(this.faucet + path, {
      method, body, headers: body ? { 'Content-Type': 'application/json' } : {},
    });
    const text = await res.text();
    let data;
    try { data = JSON.parse(text); } catch { throw new FaucetError(res.status, 'bad_answer', `not JSON: ${text.slice(0, 200)}`); }
    if (res.status !== 200) throw new FaucetError(res.status, data?.error?.code ?? 'error', data?.error?.message ?? text);
    return data;
  }

  /**
   * Asks for an operation with the public key, checks the unsigned answer against want,
   * signs it and submits it; returns what the operation answers.
   * @param {string} path @param {Record<string, unknown>} fields @param {string[]} numbers
   * @param {Omit<import('./tx.js').Expectation, 'actor' | 'maxFee'>} want
   */
  async operate(path, fields, numbers, want) {
    const u = await this.request('POST', path, jsonBody({ ...fields, public_key: this.publicKey }, numbers));
    const { message } = checkUnsigned(u, { ...want, actor: this.key.pubkeyHash, maxFee: this.maxFee }, this.network.magic);
    const signature = bytesToHex(sign(message, this.key.privateKey));
    return this.request('POST', '/api/tx/submit', JSON.stringify({ unsigned_tx: u.unsigned_tx, public_key: this.publicKey, signature }));
  }

  /** @param {string} address */
  pkh(address) { return decodeAddress(address, this.network); }

  /** Registers the agent: stakes 50 COIN for good. */
  register() {
    return this.operate('/api/agent/register', {}, [], {
      kind: KIND.agent_register, leading: [{ value: AGENT_STAKE, pubkeyHash: this.key.pubkeyHash }],
    });
  }

  /** Vouches for another agent. @param {string} target */
  vouch(target) {
    return this.operate('/api/agent/vouch', { target_address: target }, [], { kind: KIND.vouch, payload: payload.vouch(this.pkh(target)) });
  }

  /**
   * Opens a contract with counterparty, escrowing value COIN.
   * @param {string} counterparty @param {string | number} value @param {{expiryBlocks?: number}} [opts]
   */
  createContract(counterparty, value, opts = {}) {
    const v = parseCoin(value);
    const expiry = opts.expiryBlocks ?? DEFAULT_EXPIRY;
    const cp = this.pkh(counterparty);
    const fields = { counterparty, value_coin: formatCoin(v), ...(opts.expiryBlocks ? { expiry_blocks: String(expiry) } : {}) };
    return this.operate('/api/agent/contract/create', fields, ['value_coin', 'expiry_blocks'], {
      kind: KIND.contract_create, payload: payload.contractCreate(cp, expiry), leading: [{ value: v, pubkeyHash: cp }],
    });
  }

  /** Fulfils a contract as its counterparty: the escrow comes to this agent. @param {string} contractId */
  fulfil(contractId) {
    return this.operate('/api/agent/contract/fulfil', { contract_id: contractId }, [], {
      kind: KIND.contract_fulfil, payload: payload.contractRef(contractId), escrow: contractId,
    });
  }

  /** Takes back the escrow of an expired contract as its initiator. @param {string} contractId */
  refund(contractId) {
    return this.operate('/api/agent/contract/refund', { contract_id: contractId }, [], {
      kind: KIND.contract_refund, payload: payload.contractRef(contractId), escrow: contractId,
    });
  }

  /**
   * Reviews the other participant of a fulfilled contract, 1 (terrible) to 10 (excellent).
   * @param {string} contractId @param {string} subject @param {number} score
   */
  review(contractId, subject, score) {
    if (!Number.isInteger(score) || score < 1 || score > 10) throw new Error('score must be an integer from 1 to 10');
    return this.operate('/api/agent/review', { contract_id: contractId, subject_address: subject, score: String(score) }, ['score'], {
      kind: KIND.review, payload: payload.review(contractId, this.pkh(subject), score),
    });
  }

  /** Sends amount COIN to an address. @param {string} to @param {string | number} amount */
  send(to, amount) {
    const v = parseCoin(amount);
    return this.operate('/api/wallet/send', { to, amount: formatCoin(v) }, ['amount'], {
      kind: KIND.transfer, leading: [{ value: v, pubkeyHash: this.pkh(to) }],
    });
  }

  /** An agent's conduct profile (default: this agent's). @param {string} [address] */
  profile(address = this.address) {
    return this.request('GET', `/api/agent/profile?address=${encodeURIComponent(address)}`);
  }

  /** The agent directory, highest score first. @param {{offset?: number, limit?: number}} [page] */
  directory(page = {}) {
    const q = new URLSearchParams();
    if (page.offset !== undefined) q.set('offset', String(page.offset));
    if (page.limit !== undefined) q.set('limit', String(page.limit));
    return this.request('GET', `/api/agent/directory?${q}`);
  }

  /** A contract's record. @param {string} contractId */
  contract(contractId) {
    return this.request('GET', `/api/agent/contract?contract_id=${contractId}`);
  }

  /** Claims testnet COIN from the faucet (default: to this agent). @param {string} [address] */
  claim(address = this.address) {
    return this.request('POST', '/api/faucet', JSON.stringify({ address }));
  }

  /** The balance of an address (default: this agent's). @param {string} [address] */
  balance(address = this.address) {
    return this.request('GET', `/api/wallet/balance?address=${encodeURIComponent(address)}`);
  }

  /**
   * The Proof of Conduct event stream (Server-Sent Events) as an async iterator of
   * {id, event, data}. It reconnects when the stream ends or fails, resuming after the last
   * id seen (Last-Event-ID), so no event is lost or repeated; stop it with signal or by
   * leaving the loop.
   * @param {{address?: string, types?: string[], lastEventId?: number | string, signal?: AbortSignal, retryMs?: number}} [opts]
   * @returns {AsyncGenerator<{id: string, event: string, data: any}>}
   */
  async *events(opts = {}) {
    let last = opts.lastEventId !== undefined ? String(opts.lastEventId) : undefined;
    const q = new URLSearchParams();
    if (opts.address) q.set('address', opts.address);
    if (opts.types) q.set('types', opts.types.join(','));
    while (!opts.signal?.aborted) {
      try {
        const res = await this.fetch(`${this.faucet}/api/agent/events?${q}`, {
          headers: { Accept: 'text/event-stream', ...(last !== undefined ? { 'Last-Event-ID': last } : {}) }, signal: opts.signal,
        });
        if (res.status !== 200 || !res.body) throw new FaucetError(res.status, 'events', await res.text());
        let buf = '';
        const decoder = new TextDecoder();
        for await (const chunk of res.body) {
          buf += decoder.decode(chunk, { stream: true });
          let i;
          while ((i = buf.search(/\r?\n\r?\n/)) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(buf.slice(i).match(/^\r?\n\r?\n/)[0].length + i);
            /** @type {{id?: string, event: string, data: string[]}} */
            const msg = { event: 'message', data: [] };
            for (const line of block.split(/\r?\n/)) {
              if (line.startsWith(':')) continue;
              const c = line.indexOf(':');
              const field = c < 0 ? line : line.slice(0, c);
              const value = c < 0 ? '' : line.slice(c + 1).replace(/^ /, '');
              if (field === 'id') msg.id = value;
              else if (field === 'event') msg.event = value;
              else if (field === 'data') msg.data.push(value);
            }
            if (msg.data.length === 0) continue;
            if (msg.id !== undefined) last = msg.id;
            yield { id: msg.id ?? '', event: msg.event, data: JSON.parse(msg.data.join('\n')) };
          }
        }
      } catch (err) {
        if (opts.signal?.aborted) return;
        if (err instanceof FaucetError && err.status >= 400 && err.status < 500) throw err;
      }
      await new Promise((r) => setTimeout(r, opts.retryMs ?? 1000));
    }
  }
}
