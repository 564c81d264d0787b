package events

import (
	"fmt"
	"slices"
	"strings"
)

// Event types. A retraction ([TypeRetracted]) undoes an earlier event; the others are one
// agent transaction each, except [TypeScoreChanged].
const (
	TypeAgentRegistered   = "agent_registered"
	TypeVouched           = "vouched"
	TypeContractCreated   = "contract_created"
	TypeContractFulfilled = "contract_fulfilled"
	TypeContractRefunded  = "contract_refunded"
	TypeReviewed          = "reviewed"
	TypeScoreChanged      = "score_changed"
	TypeRetracted         = "retracted"
)

// Types lists every event type, in the order above.
var Types = []string{TypeAgentRegistered, TypeVouched, TypeContractCreated, TypeContractFulfilled,
	TypeContractRefunded, TypeReviewed, TypeScoreChanged, TypeRetracted}

// Status of a transaction's event.
const (
	StatusPending   = "pending"   // the node's mempool accepted the transaction; height absent
	StatusConfirmed = "confirmed" // mined at height, in block block_hash
)

// Reasons of a retraction.
const (
	ReasonReorg   = "reorg"   // the block of the event left the main chain
	ReasonDropped = "dropped" // the pending transaction left the mempool without being mined
)

// Event is one entry of the event log, sent as the data of one Server-Sent Event (its id is
// the SSE id, its type the SSE event name). Addresses are bech32; amounts are COIN strings
// with 8 decimals, like the API's.
type Event struct {
	ID     uint64 `json:"id"`
	Type   string `json:"type"`
	Status string `json:"status,omitempty"`
	// TxID is the agent transaction (absent for score_changed).
	TxID string `json:"txid,omitempty"`
	// Height and BlockHash are the block of a confirmed event (absent while pending), or
	// the tip when a confirmed score_changed was read.
	Height    uint64 `json:"height,omitempty"`
	BlockHash string `json:"block_hash,omitempty"`
	// Time is when the event source observed the event (RFC 3339, UTC, nanoseconds).
	Time string `json:"time"`

	// Actor is the acting agent: the registering agent, the voucher, the initiator of a
	// contract_created, the counterparty of a contract_fulfilled, the initiator of a
	// contract_refunded, the reviewer.
	Actor        string `json:"actor,omitempty"`
	Target       string `json:"target,omitempty"` // vouched: the agent vouched for
	Initiator    string `json:"initiator,omitempty"`
	Counterparty string `json:"counterparty,omitempty"`
	Subject      string `json:"subject,omitempty"` // reviewed: the reviewed agent
	Address      string `json:"address,omitempty"` // score_changed: the agent
	ContractID   string `json:"contract_id,omitempty"`
	ValueCoin    string `json:"value_coin,omitempty"`    // contract escrow
	ExpiryBlocks uint32 `json:"expiry_blocks,omitempty"` // contract_created
	Score        uint8  `json:"score,omitempty"`         // reviewed: 1 to 10

	// score_changed: the agent's score in the pending view before and after, and its tier.
	OldScore *uint32 `json:"old_score,omitempty"`
	NewScore *uint32 `json:"new_score,omitempty"`
	Tier     string  `json:"tier,omitempty"`

	// retracted: the id and type of the undone event and why; the undone event's other
	// fields are repeated, so filters by address see it.
	Retracts      uint64 `json:"retracts,omitempty"`
	RetractedType string `json:"retracted_type,omitempty"`
	Reason        string `json:"reason,omitempty"`

	raw []byte // the JSON above, as the store wrote it
}

// Addresses are the agents an event touches.
func (e *Event) Addresses() []string {
	var out []string
	for _, a := range []string{e.Actor, e.Target, e.Initiator, e.Counterparty, e.Subject, e.Address} {
		if a != "" && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// Filter selects events. The zero Filter selects all.
type Filter struct {
	// Address: events that touch this agent (actor, target, initiator, counterparty,
	// subject, or the agent of a score_changed).
	Address string
	// Types: events of these types; a retraction passes when "retracted" or the type of the
	// event it undoes is listed. Empty: every type.
	Types []string
}

// Match reports whether f selects e.
func (f Filter) Match(e *Event) bool {
	if len(f.Types) > 0 && !slices.Contains(f.Types, e.Type) &&
		!(e.Type == TypeRetracted && slices.Contains(f.Types, e.RetractedType)) {
		return false
	}
	if f.Address != "" && e.Actor != f.Address && e.Target != f.Address && e.Initiator != f.Address &&
		e.Counterparty != f.Address && e.Subject != f.Address && e.Address != f.Address {
		return false
	}
	return true
}

// ParseTypes parses the comma list of ?types=: known types, blanks ignored, duplicates
// dropped.
func ParseTypes(s string) ([]string, error) {
	var out []string
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		if !slices.Contains(Types, t) {
			return nil, fmt.Errorf("unknown event type %q (known: %s)", t, strings.Join(Types, ", "))
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}
