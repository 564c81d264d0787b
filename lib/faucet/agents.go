package faucet

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/conductview"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

// The agent endpoints 7 to 13 and the contract refund and lookup (protocol §9.4's table).
// The transactions are lib/wallet's (agent.go). Before any coin is selected, every
// operation runs consensus's own rules against the node's pending view
// (wallet.PrecheckAgent over lib/conductview), so a refusal has the rule's reason and words
// and no rule is written again here; the node's answer to sendrawtransaction stays the
// authority. A refused operation broadcasts nothing.

// Directory paging (endpoint 9, protocol §9.4).
const (
	DefaultDirectoryLimit = 20
	MaxDirectoryLimit     = 100
)

// agentKey derives the acting wallet's key (account 0, index 0, as /api/wallet/send).
func (s *Service) agentKey(mnemonic string) (wallet.Key, error) {
	if err := required("mnemonic", mnemonic); err != nil {
		return wallet.Key{}, err
	}
	ring, err := wallet.KeyringFromMnemonic(mnemonic, "", s.cfg.Net, 0)
	if err != nil {
		return wallet.Key{}, err
	}
	key, err := ring.Key(0)
	ring.Wipe()
	return key, err
}

// withAgentKey acts for the wallet of mnemonic, or of publicKey (exactly one is set): it
// derives or reads the key (actingKey), runs prepare (when not nil) with it, the checks that
// need the key and not the node, then takes the lock of the address, so two requests of one
// wallet never pick the same coins, and runs fn with ctx bounding the calls to the node. The
// key is wiped when fn returns. For a public key, spendAgent returns the transaction
// unsigned, as an *unsignedAnswer, which answer turns into the operation's answer
// (unsigned.go).
func (s *Service) withAgentKey(ctx context.Context, mnemonic, publicKey string, prepare func(key wallet.Key) error,
	fn func(ctx context.Context, key wallet.Key) error) error {
	key, err := s.actingKey(mnemonic, publicKey)
	if err != nil {
		return err
	}
	defer key.Wipe()
	if prepare != nil {
		if err := prepare(key); err != nil {
			return err
		}
	}
	unlock := s.locks.lock(key.Address)
	defer unlock()
	ctx, cancel := s.nodeCtx(ctx)
	defer cancel()
	return fn(ctx, key)
}

// addressField reads the address in a field of a request: normalised, of this network.
func (s *Service) addressField(field, v string) (string, types.Hash, error) {
	if err := required(field, v); err != nil {
		return "", types.Hash{}, err
	}
	addr := strings.ToLower(strings.TrimSpace(v))
	pkh, err := wallet.DecodeAddress(addr, s.cfg.Net)
	if err != nil {
		return "", types.Hash{}, apiErr(api.KindInvalid, "invalid_address", "%s: %v", field, err)
	}
	return addr, pkh, nil
}

// contractID reads a contract id: 64 hex characters.
func parseContractID(v string) (types.Hash, error) {
	if err := required("contract_id", v); err != nil {
		return types.Hash{}, err
	}
	id, err := types.ParseHash(strings.ToLower(strings.TrimSpace(v)))
	if err != nil {
		return types.Hash{}, apiErr(api.KindInvalid, "invalid_contract_id", "contract_id must be 64 hexadecimal characters")
	}
	return id, nil
}

// profile reads an agent's profile from the pending view; ok is false for no agent.
func (s *Service) profile(ctx context.Context, addr string) (p *rpcapi.AgentProfile, ok bool, err error) {
	p, err = s.cfg.Node.GetAgentProfile(ctx, addr)
	if errors.Is(err, reason.AgentNotFound) {
		return nil, false, nil
	}
	return p, err == nil, err
}

// contract reads a contract from the pending view; an unknown one is an *Error of code
// contract_not_found with the given status.
func (s *Service) contract(ctx context.Context, id types.Hash, kind api.Kind) (*rpcapi.Contract, wallet.Escrow, error) {
	c, err := s.cfg.Node.GetContract(ctx, id.String())
	if errors.Is(err, reason.ContractNotFound) {
		return nil, wallet.Escrow{}, apiErr(kind, string(reason.ContractNotFound), "no contract %s", id)
	}
	if err != nil {
		return nil, wallet.Escrow{}, err
	}
	e, err := wallet.EscrowOf(c, s.cfg.Net)
	if err != nil {
		return nil, wallet.Escrow{}, err
	}
	return c, e, nil
}

// precheck runs the consensus rules of req, the operation of key, against node's pending
// view (wallet.PrecheckAgent): nil, or the rule's refusal as agentRefusal words it, with
// the addresses of key and of the other agents the operation names (addrs) in place of
// their pubkey hashes.
func (s *Service) precheck(ctx context.Context, node conductview.NodeClient, key wallet.Key, req wallet.Request, what string,
	addrs ...string) error {
	if err := wallet.PrecheckAgent(ctx, node, s.cfg.Net, req, key.Pub); err != nil {
		return s.addressed(agentRefusal(err, key.Address, what), append(addrs, key.Address)...)
	}
	return nil
}

// addressed is err with, in the message of an *Error, the pubkey hash of each of addrs
// written as the address: consensus, which knows no network, names an agent by its pubkey
// hash, the faucet's users by its address.
func (s *Service) addressed(err error, addrs ...string) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	msg := e.Message
	for _, a := range addrs {
		if pkh, derr := wallet.DecodeAddress(a, s.cfg.Net); derr == nil {
			msg = strings.ReplaceAll(msg, pkh.String(), a)
		}
	}
	if msg == e.Message {
		return err
	}
	cp := *e
	cp.Message = msg
	return &cp
}

// participants are the addresses of contract c (none for nil).
func participants(c *rpcapi.Contract) []string {
	if c == nil {
		return nil
	}
	return []string{c.Initiator, c.Counterparty}
}

// readContract reads contract id from the node once, for an operation that needs its escrow
// and whose precheck reads it again: node is s.cfg.Node answering getcontract of id with
// this answer (found or contract_not_found), so the precheck asks the node nothing twice.
// Another error of the node is returned.
func (s *Service) readContract(ctx context.Context, id types.Hash) (c *rpcapi.Contract, node conductview.NodeClient, err error) {
	c, err = s.cfg.Node.GetContract(ctx, id.String())
	if err != nil && !errors.Is(err, reason.ContractNotFound) {
		return nil, nil, err
	}
	return c, contractNode{NodeClient: s.cfg.Node, id: id.String(), c: c, err: err}, nil
}

// contractNode is a node with the answer to getcontract of one contract already read.
type contractNode struct {
	conductview.NodeClient
	id  string
	c   *rpcapi.Contract
	err error
}

func (n contractNode) GetContract(ctx context.Context, id string) (*rpcapi.Contract, error) {
	if id == n.id {
		return n.c, n.err
	}
	return n.NodeClient.GetContract(ctx, id)
}

// spendAgent builds, signs and broadcasts req for key. what says what the operation is,
// for the message of a refusal. For a key without its private part (a public_key request)
// nothing is signed or broadcast: the error is the *unsignedAnswer to write.
func (s *Service) spendAgent(ctx context.Context, key wallet.Key, req wallet.Request, what string) (*wallet.Plan, error) {
	if key.Priv == nil {
		return nil, s.buildUnsigned(ctx, key, req, func(err error) error { return agentRefusal(err, key.Address, what) })
	}
	req.FeeRate = s.cfg.FeeRate
	plan, err := wallet.SpendAgent(ctx, s.txNode, s.cfg.Net, key, req)
	if err != nil {
		return nil, agentRefusal(err, key.Address, what)
	}
	return plan, nil
}

// agentRefusal maps the refusal of an agent operation to its 400: insufficient_balance when the
// wallet cannot pay, the rule's reason when the wallet's own checks or the node refused.
// Anything else (the node unreachable, a timeout) is returned as it is.
func agentRefusal(err error, addr, what string) error {
	var ife *wallet.InsufficientFundsError
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &ife):
		return apiErr(api.KindInvalid, "insufficient_balance",
			"%s needs %s COIN with the fee, and %s has %s COIN spendable; claim COIN with POST /api/faucet or send some to it first",
			what, amount.Format(ife.Need), addr, amount.Format(ife.Have))
	case consensus.IsRuleError(err) && reason.Of(err) != "":
		return apiErr(api.KindInvalid, string(reason.Of(err)), "%v", err)
	case errors.As(err, &rpcErr) && reason.Of(err) != "":
		return apiErr(api.KindInvalid, string(reason.Of(err)), "the node refused %s: %s", what, rpcErr.Message)
	case errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.DomainError("").Code:
		return apiErr(api.KindInvalid, "tx_rejected", "the node refused %s: %s", what, rpcErr.Message)
	}
	return err
}

// Register registers the acting wallet as an agent (7. POST /api/agent/register).
func (s *Service) Register(ctx context.Context, req api.MnemonicRequest) (api.Answer[api.RegisterResult], error) {
	var res *api.RegisterResult
	what := "registering (a stake of " + amount.Format(consensus.AgentStake) + " COIN)"
	err := s.withAgentKey(ctx, req.Mnemonic, req.PublicKey, nil, func(ctx context.Context, key wallet.Key) error {
		wreq := wallet.RegisterRequest(key.PKH)
		if err := s.precheck(ctx, s.cfg.Node, key, wreq, what); err != nil {
			return err
		}
		plan, err := s.spendAgent(ctx, key, wreq, what)
		if err != nil {
			return err
		}
		res = &api.RegisterResult{Address: key.Address, StakeTxID: plan.TxID.String(), ConductScore: consensus.InitialScore}
		return nil
	})
	return answer(s, res, err)
}

// Profile is an agent's conduct profile (8. GET /api/agent/profile?address=).
func (s *Service) Profile(ctx context.Context, address string) (api.AgentProfile, error) {
	addr, _, err := s.addressField("address", address)
	if err != nil {
		return api.AgentProfile{}, s.fault(err)
	}
	ctx, cancel := s.nodeCtx(ctx)
	defer cancel()
	p, ok, err := s.profile(ctx, addr)
	if err != nil {
		return api.AgentProfile{}, s.fault(err)
	}
	if !ok {
		return api.AgentProfile{}, apiErr(api.KindNotFound, string(reason.AgentNotFound), "%s is not a registered agent", addr)
	}
	out := api.AgentProfile{Address: addr, ConductScore: p.ConductScore, Tier: p.Tier,
		ContractsCompleted: p.ContractsCompleted, ContractsFailed: p.ContractsFailed, VouchesReceived: p.VouchesReceived,
		VouchesGiven: p.VouchesGiven, ReviewsReceived: p.ReviewsReceived, StakeTxID: p.StakeTxID}
	if p.ReviewsReceived > 0 {
		out.AverageReviewScore = p.AverageReviewScore
	}
	if p.Confirmed || p.RegisteredHeight != nil {
		out.RegisteredAt = p.RegisteredAt
	}
	return out, nil
}

// queryUint reads an optional non-negative integer query parameter.
func queryUint(q url.Values, name string, def uint64) (uint64, error) {
	if !q.Has(name) {
		return def, nil
	}
	v, err := strconv.ParseUint(q.Get(name), 10, 64)
	if err != nil {
		return 0, apiErr(api.KindInvalid, "bad_request", "%s must be a non-negative integer", name)
	}
	return v, nil
}

// Directory lists the agents, highest score first, by the parameters offset and limit
// (9. GET /api/agent/directory?offset=&limit=).
func (s *Service) Directory(ctx context.Context, q url.Values) (api.Directory, error) {
	offset, err := queryUint(q, "offset", 0)
	if err != nil {
		return api.Directory{}, err
	}
	limit, err := queryUint(q, "limit", DefaultDirectoryLimit)
	if err != nil {
		return api.Directory{}, err
	}
	if limit < 1 || limit > MaxDirectoryLimit {
		return api.Directory{}, apiErr(api.KindInvalid, "bad_request", "limit must be 1 to %d", MaxDirectoryLimit)
	}
	ctx, cancel := s.nodeCtx(ctx)
	defer cancel()
	l, err := s.cfg.Node.ListAgents(ctx, offset, limit)
	if err != nil {
		return api.Directory{}, s.fault(err)
	}
	out := api.Directory{Agents: make([]api.DirectoryEntry, 0, len(l.Agents)), Total: l.Total, Offset: offset, Limit: limit}
	for _, a := range l.Agents {
		out.Agents = append(out.Agents, api.DirectoryEntry{Address: a.Address, ConductScore: a.ConductScore, Tier: a.Tier,
			ContractsCompleted: a.ContractsCompleted})
	}
	return out, nil
}

// Vouch vouches for another agent (10. POST /api/agent/vouch).
func (s *Service) Vouch(ctx context.Context, req api.VouchRequest) (api.Answer[api.VouchResult], error) {
	if err := oneKey(req.Mnemonic, req.PublicKey); err != nil {
		return api.Answer[api.VouchResult]{}, err
	}
	target, targetPKH, err := s.addressField("target_address", req.TargetAddress)
	if err != nil {
		return api.Answer[api.VouchResult]{}, s.fault(err)
	}
	var wreq wallet.Request
	var res *api.VouchResult
	err = s.withAgentKey(ctx, req.Mnemonic, req.PublicKey, func(key wallet.Key) (err error) {
		if wreq, err = wallet.VouchRequest(key.PKH, targetPKH); err != nil {
			return agentRefusal(err, key.Address, "vouching")
		}
		return nil
	}, func(ctx context.Context, key wallet.Key) error {
		if err := s.precheck(ctx, s.cfg.Node, key, wreq, "the vouch", target); err != nil {
			return err
		}
		plan, err := s.spendAgent(ctx, key, wreq, "the vouch")
		if err != nil {
			return err
		}
		res = &api.VouchResult{Voucher: key.Address, Target: target, TxID: plan.TxID.String()}
		return nil
	})
	return answer(s, res, err)
}

// ContractCreate opens a contract with another agent (11. POST /api/agent/contract/create).
func (s *Service) ContractCreate(ctx context.Context, req api.ContractCreateRequest) (api.Answer[api.ContractCreateResult], error) {
	type A = api.Answer[api.ContractCreateResult]
	if err := oneKey(req.Mnemonic, req.PublicKey); err != nil {
		return A{}, err
	}
	cp, cpPKH, err := s.addressField("counterparty", req.Counterparty)
	if err != nil {
		return A{}, s.fault(err)
	}
	value, err := parseAmountField("value_coin", req.ValueCoin)
	if err != nil {
		return A{}, err
	}
	expiry := uint64(consensus.DefaultExpiry)
	if req.ExpiryBlocks != "" {
		expiry, err = strconv.ParseUint(string(req.ExpiryBlocks), 10, 32)
		if err != nil || expiry == 0 {
			return A{}, apiErr(api.KindInvalid, string(reason.InvalidExpiry), "expiry_blocks must be an integer from %d to %d",
				consensus.MinExpiry, consensus.MaxExpiry)
		}
	}
	var wreq wallet.Request
	var res *api.ContractCreateResult
	err = s.withAgentKey(ctx, req.Mnemonic, req.PublicKey, func(key wallet.Key) (err error) {
		if wreq, err = wallet.ContractCreateRequest(key.PKH, cpPKH, value, uint32(expiry)); err != nil {
			return agentRefusal(err, key.Address, "the contract")
		}
		return nil
	}, func(ctx context.Context, key wallet.Key) error {
		what := "a contract escrowing " + amount.Format(value) + " COIN"
		if err := s.precheck(ctx, s.cfg.Node, key, wreq, what, cp); err != nil {
			return err
		}
		plan, err := s.spendAgent(ctx, key, wreq, what)
		if err != nil {
			return err
		}
		res = &api.ContractCreateResult{ContractID: plan.TxID.String(), Initiator: key.Address,
			Counterparty: cp, ValueCoin: amount.Format(value), Status: consensus.ContractOpen.String(), ExpiryBlocks: uint32(expiry)}
		return nil
	})
	return answer(s, res, err)
}

// contractOp is the common part of a fulfilment and a refund: the acting key and the
// contract's escrow, read once; the precheck refuses what the rules refuse (no such
// contract, not open, not the right participant, too early or too late).
func contractOp[T any](s *Service, ctx context.Context, req api.ContractRequest, what string,
	build func(e wallet.Escrow) wallet.Request, result func(id, txid string) *T) (api.Answer[T], error) {
	if err := oneKey(req.Mnemonic, req.PublicKey); err != nil {
		return api.Answer[T]{}, err
	}
	id, err := parseContractID(req.ContractID)
	if err != nil {
		return api.Answer[T]{}, err
	}
	var res *T
	err = s.withAgentKey(ctx, req.Mnemonic, req.PublicKey, nil, func(ctx context.Context, key wallet.Key) error {
		c, node, err := s.readContract(ctx, id)
		if err != nil {
			return err
		}
		e := wallet.Escrow{ContractID: id} // an unknown contract: the precheck says so
		if c != nil {
			if e, err = wallet.EscrowOf(c, s.cfg.Net); err != nil {
				return err
			}
		}
		wreq := build(e)
		if err := s.precheck(ctx, node, key, wreq, what, participants(c)...); err != nil {
			return err
		}
		plan, err := s.spendAgent(ctx, key, wreq, what)
		if err != nil {
			return err
		}
		res = result(id.String(), plan.TxID.String())
		return nil
	})
	return answer(s, res, err)
}

// ContractFulfil fulfils an open contract as its counterparty (12. POST
// /api/agent/contract/fulfil).
func (s *Service) ContractFulfil(ctx context.Context, req api.ContractRequest) (api.Answer[api.FulfilResult], error) {
	return contractOp(s, ctx, req, "the fulfilment", wallet.FulfilRequest,
		func(id, txid string) *api.FulfilResult {
			return &api.FulfilResult{ContractID: id, Status: consensus.ContractFulfilled.String(), ReleaseTxID: txid}
		})
}

// ContractRefund takes the escrow of an expired contract back as its initiator (POST
// /api/agent/contract/refund, protocol §9.4).
func (s *Service) ContractRefund(ctx context.Context, req api.ContractRequest) (api.Answer[api.RefundResult], error) {
	return contractOp(s, ctx, req, "the refund", wallet.RefundRequest,
		func(id, txid string) *api.RefundResult {
			return &api.RefundResult{ContractID: id, Status: consensus.ContractExpired.String(), RefundTxID: txid}
		})
}

// Contract is a contract's record (GET /api/agent/contract?contract_id=, protocol §9.4).
func (s *Service) Contract(ctx context.Context, contractID string) (api.Contract, error) {
	id, err := parseContractID(contractID)
	if err != nil {
		return api.Contract{}, err
	}
	ctx, cancel := s.nodeCtx(ctx)
	defer cancel()
	c, _, err := s.contract(ctx, id, api.KindNotFound)
	if err != nil {
		return api.Contract{}, s.fault(err)
	}
	return api.Contract{ContractID: c.ContractID, Initiator: c.Initiator, Counterparty: c.Counterparty,
		ValueCoin: amount.Format(c.Value), Status: c.Status, CreatedHeight: c.CreatedHeight, ExpiresAt: c.ExpiresAt,
		ClosedBy: c.ClosedBy, ReviewedByInitiator: c.ReviewedByInitiator, ReviewedByCounterparty: c.ReviewedByCounterparty,
		Confirmed: c.Confirmed}, nil
}

// reviewScore reads a review score: an integer (a JSON number without fraction or
// exponent).
func reviewScore(n api.Number) (int, error) {
	if n == "" {
		return 0, apiErr(api.KindInvalid, "bad_request", "field score is required")
	}
	v, err := strconv.Atoi(string(n))
	if err != nil {
		return 0, apiErr(api.KindInvalid, string(reason.InvalidScore), "score must be an integer from %d to %d",
			consensus.MinReviewScore, consensus.MaxReviewScore)
	}
	return v, nil
}

// Review reviews the other participant of a fulfilled contract (13. POST /api/agent/review).
func (s *Service) Review(ctx context.Context, req api.ReviewRequest) (api.Answer[api.ReviewResult], error) {
	type A = api.Answer[api.ReviewResult]
	if err := oneKey(req.Mnemonic, req.PublicKey); err != nil {
		return A{}, err
	}
	subject, subjectPKH, err := s.addressField("subject_address", req.SubjectAddress)
	if err != nil {
		return A{}, s.fault(err)
	}
	score, err := reviewScore(req.Score)
	if err != nil {
		return A{}, err
	}
	id, err := parseContractID(req.ContractID)
	if err != nil {
		return A{}, err
	}
	var wreq wallet.Request
	var res *api.ReviewResult
	err = s.withAgentKey(ctx, req.Mnemonic, req.PublicKey, func(key wallet.Key) (err error) {
		if wreq, err = wallet.ReviewRequest(key.PKH, id, subjectPKH, score); err != nil {
			return agentRefusal(err, key.Address, "the review")
		}
		return nil
	}, func(ctx context.Context, key wallet.Key) error {
		if err := s.precheck(ctx, s.cfg.Node, key, wreq, "the review", subject); err != nil {
			return err
		}
		plan, err := s.spendAgent(ctx, key, wreq, "the review")
		if err != nil {
			return err
		}
		res, err = s.reviewAnswer(ctx, key.Address, subject, score, id, plan.TxID)
		return err
	})
	return answer(s, res, err)
}

// reviewAnswer is the answer of the accepted review txid: with the subject's new score.
func (s *Service) reviewAnswer(ctx context.Context, reviewer, subject string, score int, id, txid types.Hash) (*api.ReviewResult, error) {
	p, ok, err := s.profile(ctx, subject)
	if err == nil && !ok {
		err = errors.New("the subject has no profile")
	}
	if err != nil {
		s.log.Error("review accepted, reading the subject's new score failed", "txid", txid, "err", err)
		return nil, apiErr(api.KindUpstream, "node_error",
			"the review %s was accepted, but reading the subject's new score failed; see GET /api/agent/profile", txid)
	}
	return &api.ReviewResult{Reviewer: reviewer, Subject: subject, Score: score,
		ContractID: id.String(), NewConductScore: p.ConductScore, TxID: txid.String()}, nil
}
