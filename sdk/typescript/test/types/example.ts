// Compiled by test/types.test.js (tsc --noEmit --strict): the declarations fit a TypeScript agent.
import { Agent, generateMnemonic, TxCheckError, FaucetError, type RegisterResult, type api } from '../../src/index.js';

async function main(): Promise<number> {
  const a = new Agent({ faucet: 'http://127.0.0.1:8080', mnemonic: generateMnemonic(), network: 'regtest' });
  const reg: RegisterResult = await a.register();
  const c: api.ContractCreateResult = await a.createContract('tcoin1...', 2.5, { expiryBlocks: 20 });
  const r = await a.review(c.contract_id, 'tcoin1...', 9);
  for await (const e of a.events({ address: a.address })) console.log(e.id, e.event);
  try { await a.send('tcoin1...', '1'); } catch (err) { if (err instanceof TxCheckError || err instanceof FaucetError) return 1; }
  return reg.conduct_score + r.new_conduct_score;
}
void main;
