// Types of @cointoolkit/coin-agent (the package is plain ESM JavaScript with JSDoc types).
// The faucet's bodies are src/api.d.ts, generated from lib/faucet/httpapi/openapi.json.

export interface Network { name: string; hrp: string; coinType: number; magic: Uint8Array }
export const NETWORKS: Readonly<{ mainnet: Network; testnet: Network; regtest: Network }>;
export function network(n: string | Network): Network;

export interface Key { privateKey: Uint8Array; publicKey: Uint8Array; pubkeyHash: Uint8Array; address: string; network: Network }
export function generateMnemonic(): string;
export function mnemonicToSeed(mnemonic: string, passphrase?: string): Uint8Array;
export function slip10Derive(seed: Uint8Array, path: string): { key: Uint8Array; chainCode: Uint8Array };
export function pubkeyHash(publicKey: Uint8Array): Uint8Array;
export function encodeAddress(pkh: Uint8Array, net: string | Network): string;
export function decodeAddress(address: string, net: string | Network): Uint8Array;
export function keyFromPrivate(privateKey: Uint8Array, net: string | Network): Key;
export function keyFromMnemonic(mnemonic: string, net: string | Network, opts?: { account?: number; index?: number; passphrase?: string }): Key;
export function sign(msg: Uint8Array, privateKey: Uint8Array): Uint8Array;
export function verify(sig: Uint8Array, msg: Uint8Array, publicKey: Uint8Array): boolean;

export const KIND: Readonly<{ coinbase: 0; transfer: 1; agent_register: 2; vouch: 3; contract_create: 4; contract_fulfil: 5; contract_refund: 6; review: 7 }>;
export const COIN: bigint;
export const AGENT_STAKE: bigint;
export const DEFAULT_EXPIRY: number;
export const SIG_PREFIX: Uint8Array;
export interface TxInput { prevTxid: Uint8Array; prevIndex: number; publicKey: Uint8Array; signature: Uint8Array }
export interface TxOutput { value: bigint; pubkeyHash: Uint8Array }
export interface Transaction { version: number; kind: number; inputs: TxInput[]; outputs: TxOutput[]; lockTime: bigint; payload: Uint8Array }
export class TxCheckError extends Error {}
export function decodeTransaction(b: Uint8Array | string): Transaction;
export function encodeTransaction(tx: Transaction, witness?: boolean): Uint8Array;
export function txid(tx: Transaction): string;
export function sigMessage(magic: Uint8Array, txid: string): Uint8Array;
export function parseCoin(v: string | number | bigint): bigint;
export function formatCoin(v: bigint): string;
export function bytesToHex(b: Uint8Array): string;
export function hexToBytes(h: string): Uint8Array;
export const payload: {
  vouch(target: Uint8Array): Uint8Array;
  contractCreate(counterparty: Uint8Array, expiry: number): Uint8Array;
  contractRef(contractId: string): Uint8Array;
  review(contractId: string, subject: Uint8Array, score: number): Uint8Array;
};

export interface Expectation { kind: number; payload?: Uint8Array; leading?: TxOutput[]; escrow?: string; actor: Uint8Array; maxFee: bigint }
export function checkUnsigned(u: UnsignedTx, want: Expectation, magic: Uint8Array): { tx: Transaction; message: Uint8Array };

// The faucet's bodies, generated from its OpenAPI document (src/api.d.ts).
import type {
  TransferResult, RegisterResult, VouchResult, ContractCreateResult, FulfilResult, RefundResult, ReviewResult,
  AgentProfile, Directory, Contract, ClaimResult, Balance, UnsignedTx,
} from './api.js';
export type * as api from './api.js';
export type {
  TransferResult, RegisterResult, VouchResult, ContractCreateResult, FulfilResult, RefundResult, ReviewResult,
  AgentProfile, Directory, Contract, ClaimResult, Balance, UnsignedTx,
};
export interface AgentEvent { id: string; event: string; data: any }

export class FaucetError extends Error { status: number; code: string }

export class Agent {
  constructor(opts: { faucet: string; mnemonic?: string; privateKey?: Uint8Array; network?: string; maxFee?: string | number; fetch?: typeof fetch });
  readonly key: Key;
  readonly network: Network;
  readonly address: string;
  readonly publicKey: string;
  register(): Promise<RegisterResult>;
  vouch(target: string): Promise<VouchResult>;
  createContract(counterparty: string, value: string | number, opts?: { expiryBlocks?: number }): Promise<ContractCreateResult>;
  fulfil(contractId: string): Promise<FulfilResult>;
  refund(contractId: string): Promise<RefundResult>;
  review(contractId: string, subject: string, score: number): Promise<ReviewResult>;
  send(to: string, amount: string | number): Promise<TransferResult>;
  profile(address?: string): Promise<AgentProfile>;
  directory(page?: { offset?: number; limit?: number }): Promise<Directory>;
  contract(contractId: string): Promise<Contract>;
  claim(address?: string): Promise<ClaimResult>;
  balance(address?: string): Promise<Balance>;
  events(opts?: { address?: string; types?: string[]; lastEventId?: number | string; signal?: AbortSignal; retryMs?: number }): AsyncGenerator<AgentEvent>;
  request(method: string, path: string, body?: string): Promise<any>;
}
