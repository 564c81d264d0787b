// @cointoolkit/coin-agent: COIN Proof of Conduct agents that keep their keys.
export { Agent, FaucetError } from './agent.js';
export {
  NETWORKS, network, generateMnemonic, mnemonicToSeed, slip10Derive, pubkeyHash, encodeAddress, decodeAddress,
  keyFromMnemonic, keyFromPrivate, sign, verify,
} from './keys.js';
export {
  KIND, COIN, AGENT_STAKE, DEFAULT_EXPIRY, SIG_PREFIX, TxCheckError, decodeTransaction, encodeTransaction, txid, sigMessage,
  checkUnsigned, parseCoin, formatCoin, payload, bytesToHex, hexToBytes,
} from './tx.js';
