package httpapi

import (
	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/reason"
)

// hints is the advice the door appends to the message of a refusal of these codes. The
// message of an agent operation's refusal is the consensus rule's own words (what is
// wrong); the hint says what to do next, in the API's endpoints, which the MCP tools name
// too (the door gives Hint to /mcp, mcp.Options.Hint).
var hints = map[string]string{
	string(reason.NotAnAgent): "; register it first with POST /api/agent/register (a stake of " +
		amount.Format(consensus.AgentStake) + " COIN)",
	string(reason.ContractExpired):    "; its initiator can take the escrow back with POST /api/agent/contract/refund",
	string(reason.ContractNotExpired): "; until then its counterparty can still fulfil it",
}

// Hint is the advice appended to the message of a refusal of code: "" for none.
func Hint(code string) string { return hints[code] }
