// Package chaingen builds test chains: named blocks on named parents, forks, "munged"
// variants of a block that break one rule each, and transactions of any kind signed by named
// wallets; and it replays scenarios of expected outcomes through a chain under test, in the
// manner of btcd's blockchain/fullblocktests. Only tests import it.
//
// # Overview
//
// A Generator holds the blocks it built by name ("genesis" to start with), the wallets it
// knows, and every output its blocks and transactions created. Next(name, parent, txs,
// mungers...) builds a block one minute after its parent at the network's proof-of-work
// limit, its coinbase paying the miner wallet the subsidy plus the fees of txs, applies the
// mungers (BadMerkleRoot, CoinbaseValue, DuplicateTx, BadSignature, Timestamp, Target, ...)
// and solves it; NextOn does the same on a Template, for blocks on a live node's tip. Clone
// copies a block under another name with the same hash, for tampering with what the hash
// does not commit to (signatures).
//
// Outputs: Coinbase(block) and OutputOf(tx, i) name one output; Spendable(tip, wallet) lists
// the outputs a child of tip may spend on that branch (unspent, coinbases mature), and
// Take(tip, wallet, n) hands out the oldest of them once. Spend(outputs...) starts a
// TxBuilder: Kind(kind, payload) for any transaction kind, Pay(pkh, value), Fee or FeeRate,
// Change, LockTime, Name; Tx signs each input with the wallet its output pays, so one
// transaction can spend the outputs of several owners (merging their clusters). SignedBy and
// Magic sign with a wrong key or for another network; Generator.Sign signs again after a
// test changed a field.
//
// Scenarios: a Step says "accept block X, the tip is Y" (Accept), "reject X with consensus
// kind K" (Reject), "X is an orphan" (Orphan) or "the tip is Y" (TipIs); Built attaches the
// code that makes X just before it is submitted, Checked code that looks at the chain after.
// Run plays steps through a Runner, the small interface a chain under test implements
// (ProcessBlock, TipHash); lib/chainstate's tests adapt chainstate.Chain to it and add their
// storage checks around each step. The mempool, RPC and P2P tests use the block and
// transaction builders alone.
//
// To add a scenario for a new rule: build the valid case and each violation on a named
// parent, with a Munger or a TxBuilder call that breaks exactly that rule, and list the steps:
//
//	g := chaingen.New(t, nil)
//	g.Run(runner, []chaingen.Step{
//		chaingen.Accept("a1", "a1").Built(func(g *chaingen.Generator) { g.Next("a1", "genesis", nil) }),
//		chaingen.Reject("bad", consensus.ErrBadCoinbaseValue, "a1").Built(func(g *chaingen.Generator) {
//			g.Next("bad", "a1", nil, chaingen.CoinbaseValue(consensus.Subsidy(2)+1))
//		}),
//	})
//
// A new transaction kind needs no new builder: g.Spend(outs...).Kind(types.KindVouch,
// types.VouchPayload{Target: pkh}.Bytes()).Fee(1000).Tx().
//
// # Errors
//
// The generator reports its own failures (an unknown name, an output no wallet owns, a
// nonce range without a solution) through the testing.TB it was made with. Run ends the
// test at the first step whose outcome differs; Play returns that difference as an error.
// Blocks are assembled and solved with lib/types (NewBlock, SolveBlock), as the node does for
// generatetoaddress; the generator imports no package whose tests use it.
package chaingen
