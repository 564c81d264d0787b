package web

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cointoolkit/coin/lib/faucet/api"
)

// The pages read an api.Service. fakeAPI is one too: each call is recorded as the request of
// the endpoint that calls the same operation (with the caller's peer address and forwarding
// header, which testCaller packs into api.Caller), and answered as fakeAPI answers that
// request, so the tests check what the pages asked and show from one table.

// testCaller is the pages' Caller in the tests: the client is the peer address and the
// X-Forwarded-For header, so that the fake can record both.
func testCaller(r *http.Request) api.Caller {
	return api.Caller{Client: r.RemoteAddr + "|" + strings.Join(r.Header.Values("X-Forwarded-For"), ",")}
}

func (f *fakeAPI) serve(ctx context.Context, c api.Caller, method, path string, q url.Values, body, out any) error {
	target := path
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req := httptest.NewRequestWithContext(ctx, method, target, rd)
	peer, xff, _ := strings.Cut(c.Client, "|")
	req.RemoteAddr = peer
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	f.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		var eb api.ErrorBody
		_ = json.Unmarshal(rec.Body.Bytes(), &eb)
		kind := map[int]api.Kind{400: api.KindInvalid, 404: api.KindNotFound, 429: api.KindLimited}[rec.Code]
		e := &api.Error{Kind: kind, Code: eb.Error.Code, Message: eb.Error.Message}
		if s, err := strconv.Atoi(rec.Header().Get("Retry-After")); err == nil {
			e.RetryAfter = time.Duration(s) * time.Second
		}
		return e
	}
	return json.Unmarshal(rec.Body.Bytes(), out)
}

// Admit records the caller: the pages admit each read's caller just before it.
func (f *fakeAPI) Admit(c api.Caller, _ bool) error {
	f.mu.Lock()
	f.caller = c
	f.mu.Unlock()
	return nil
}

func (f *fakeAPI) lastCaller() api.Caller {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.caller
}

func (f *fakeAPI) Status(ctx context.Context) (st api.StatusResult, err error) {
	// The pages' status reads carry no caller; the last caller admitted is the page's.
	err = f.serve(ctx, f.lastCaller(), "GET", "/api/status", nil, nil, &st)
	return st, err
}

func (f *fakeAPI) Claim(ctx context.Context, c api.Caller, req api.ClaimRequest) (res api.ClaimResult, err error) {
	err = f.serve(ctx, c, "POST", "/api/faucet", nil, req, &res)
	return res, err
}

func (f *fakeAPI) Directory(ctx context.Context, q url.Values) (d api.Directory, err error) {
	err = f.serve(ctx, f.lastCaller(), "GET", "/api/agent/directory", q, nil, &d)
	return d, err
}

func (f *fakeAPI) Profile(ctx context.Context, address string) (p api.AgentProfile, err error) {
	err = f.serve(ctx, f.lastCaller(), "GET", "/api/agent/profile", url.Values{"address": {address}}, nil, &p)
	return p, err
}

func (f *fakeAPI) Contract(ctx context.Context, id string) (c api.Contract, err error) {
	err = f.serve(ctx, f.lastCaller(), "GET", "/api/agent/contract", url.Values{"contract_id": {id}}, nil, &c)
	return c, err
}

// The operations the pages do not use.

func (f *fakeAPI) NewWallet(context.Context) (api.NewWalletResult, error) { panic("unused") }
func (f *fakeAPI) Balance(context.Context, string) (api.BalanceResult, error) {
	panic("unused")
}
func (f *fakeAPI) Send(context.Context, api.SendRequest) (api.Answer[api.TransferResult], error) {
	panic("unused")
}
func (f *fakeAPI) Derive(context.Context, api.DeriveRequest) (api.AddressResult, error) {
	panic("unused")
}
func (f *fakeAPI) Register(context.Context, api.MnemonicRequest) (api.Answer[api.RegisterResult], error) {
	panic("unused")
}
func (f *fakeAPI) Vouch(context.Context, api.VouchRequest) (api.Answer[api.VouchResult], error) {
	panic("unused")
}
func (f *fakeAPI) ContractCreate(context.Context, api.ContractCreateRequest) (api.Answer[api.ContractCreateResult], error) {
	panic("unused")
}
func (f *fakeAPI) ContractFulfil(context.Context, api.ContractRequest) (api.Answer[api.FulfilResult], error) {
	panic("unused")
}
func (f *fakeAPI) ContractRefund(context.Context, api.ContractRequest) (api.Answer[api.RefundResult], error) {
	panic("unused")
}
func (f *fakeAPI) Review(context.Context, api.ReviewRequest) (api.Answer[api.ReviewResult], error) {
	panic("unused")
}
func (f *fakeAPI) TxSubmit(context.Context, api.TxSubmitRequest) (any, error) { panic("unused") }
func (f *fakeAPI) Block(context.Context, url.Values) (api.Block, error)       { panic("unused") }
func (f *fakeAPI) Transaction(context.Context, string) (api.Transaction, error) {
	panic("unused")
}
func (f *fakeAPI) Decay(context.Context, string) (api.Decay, error) { panic("unused") }
