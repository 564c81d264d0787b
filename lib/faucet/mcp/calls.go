package mcp

import (
	"context"
	"net/url"

	"github.com/cointoolkit/coin/lib/faucet/api"
)

// calls is the Service method each tool calls, by tool name: the method its endpoint calls,
// with the arguments read as the endpoint reads its request (a POST's JSON body, a GET's
// query parameters).
var calls = map[string]func(ctx context.Context, svc api.Service, in *input) (any, error){
	"wallet_new":    func(ctx context.Context, svc api.Service, _ *input) (any, error) { return svc.NewWallet(ctx) },
	"wallet_derive": body(api.Service.Derive),
	"faucet_claim": func(ctx context.Context, svc api.Service, in *input) (any, error) {
		var req api.ClaimRequest
		if err := api.Decode(in.args, &req); err != nil {
			return nil, err
		}
		return svc.Claim(ctx, in.caller, req)
	},
	"network_status":  func(ctx context.Context, svc api.Service, _ *input) (any, error) { return svc.Status(ctx) },
	"wallet_balance":  param("address", api.Service.Balance),
	"wallet_send":     acting(api.Service.Send),
	"agent_register":  acting(api.Service.Register),
	"agent_profile":   param("address", api.Service.Profile),
	"agent_directory": byQuery(api.Service.Directory),
	"agent_vouch":     acting(api.Service.Vouch),
	"contract_create": acting(api.Service.ContractCreate),
	"contract_fulfil": acting(api.Service.ContractFulfil),
	"contract_refund": acting(api.Service.ContractRefund),
	"contract_get":    param("contract_id", api.Service.Contract),
	"agent_review":    acting(api.Service.Review),
	"tx_submit":       body(api.Service.TxSubmit),
	"block_get":       byQuery(api.Service.Block),
	"transaction_get": param("txid", api.Service.Transaction),
	"address_decay":   param("address", api.Service.Decay),
}

// body calls an operation that takes a request body.
func body[Req, Res any](op func(api.Service, context.Context, Req) (Res, error)) func(context.Context, api.Service, *input) (any, error) {
	return func(ctx context.Context, svc api.Service, in *input) (any, error) {
		var req Req
		if err := api.Decode(in.args, &req); err != nil {
			return nil, err
		}
		return op(svc, ctx, req)
	}
}

// acting calls an operation that acts for a wallet: its answer is the result, or the
// transaction to sign.
func acting[Req, T any](op func(api.Service, context.Context, Req) (api.Answer[T], error)) func(context.Context, api.Service, *input) (any, error) {
	return func(ctx context.Context, svc api.Service, in *input) (any, error) {
		var req Req
		if err := api.Decode(in.args, &req); err != nil {
			return nil, err
		}
		a, err := op(svc, ctx, req)
		if err != nil {
			return nil, err
		}
		return a.Body(), nil
	}
}

// param calls a read by one query parameter.
func param[Res any](name string, op func(api.Service, context.Context, string) (Res, error)) func(context.Context, api.Service, *input) (any, error) {
	return func(ctx context.Context, svc api.Service, in *input) (any, error) {
		return op(svc, ctx, in.query.Get(name))
	}
}

// byQuery calls a read by the query's parameters.
func byQuery[Res any](op func(api.Service, context.Context, url.Values) (Res, error)) func(context.Context, api.Service, *input) (any, error) {
	return func(ctx context.Context, svc api.Service, in *input) (any, error) {
		return op(svc, ctx, in.query)
	}
}
