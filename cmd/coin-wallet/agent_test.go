package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/cliutil"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/wallet"
)

func TestMain(m *testing.M) {
	code := m.Run()
	proctest.Cleanup()
	os.Exit(code)
}

// The mnemonics of the end-to-end test's two agents and of the miner that confirms.
const (
	mnemonicA     = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
	mnemonicB     = "zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo wrong"
	mnemonicMiner = "letter advice cage absurd amount doctor acoustic avoid letter advice cage above"
)

// Flag and argument checks, and refusals the wallet can tell without the chain, come before
// any node call (the --rpc port is closed) and broadcast nothing.
func TestAgentOffline(t *testing.T) {
	rpc := []string{"--network", "regtest", "--rpc", "127.0.0.1:1"}
	other, _ := wallet.AddressFromMnemonic(mnemonicB, params.Regtest, 0)
	id := strings.Repeat("ab", 32)
	for _, c := range []struct {
		args []string
		want string
		kind error
	}{
		{[]string{"agent", "vouch", "--mnemonic-file", "-"}, "takes TARGET_ADDRESS, got 0", nil},
		{[]string{"agent", "vouch", "--mnemonic-file", "-", other, other}, "got 2", nil},
		{[]string{"agent", "vouch", "--mnemonic-file", "-", "coin1qqq"}, "TARGET_ADDRESS", nil},
		{[]string{"agent", "register", "--mnemonic-file", "-", "extra"}, "takes no arguments", nil},
		{[]string{"agent", "contract", "fulfil", "--mnemonic-file", "-", "xyz"}, "64 hex characters", nil},
		{[]string{"agent", "contract", "create", "--mnemonic-file", "-", "--counterparty", other, "--amount", "1", "--expiry", "9"}, "--expiry 9", nil},
		{[]string{"agent", "contract", "create", "--mnemonic-file", "-", "--counterparty", other, "--amount", "1", "--expiry", "525961"}, "--expiry", nil},
		{[]string{"agent", "contract", "create", "--mnemonic-file", "-", "--counterparty", other, "--amount", "0.00000999"}, "dust", nil},
		{[]string{"agent", "contract", "create", "--mnemonic-file", "-", "--counterparty", other, "--amount", "1", "--fee-rate", "0"}, "--fee-rate", nil},
		{[]string{"agent", "review", "--mnemonic-file", "-", "--contract", id, "--subject", other, "--score", "11"},
			"reason: invalid_score\nhint: --score", reason.InvalidScore},
		{[]string{"agent", "review", "--mnemonic-file", "-", "--contract", id, "--subject", other, "--score", "0"}, "reason: invalid_score", reason.InvalidScore},
		{[]string{"agent", "vouch", "--mnemonic-file", "-", other}, "cannot connect", nil},
		{[]string{"agent", "vouch", other, "--mnemonic-file", "-"}, "cannot connect", nil}, // options after the argument
		{[]string{"agent", "list", "--limit", "101"}, "--limit 101", nil},
		{[]string{"agent", "profile", other, other}, "takes [ADDRESS], got 2", nil},
	} {
		_, err := runApp(t, mnemonicA, append(rpc, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
		if c.kind != nil && !errors.Is(err, c.kind) {
			t.Errorf("%v: %v is not %v", c.args, err, c.kind)
		}
		// A wrong number of arguments is a usage error: exit 2, like every other.
		var ue *cliutil.ExitError
		if strings.Contains(c.want, "takes") && (!errors.As(err, &ue) || ue.Code != cliutil.ExitUsage) {
			t.Errorf("%v: %#v, want a usage error (exit %d)", c.args, err, cliutil.ExitUsage)
		}
	}
	// A vouch for oneself is refused by the wallet with the consensus reason.
	self, _ := wallet.AddressFromMnemonic(mnemonicA, params.Regtest, 0)
	_, err := runApp(t, mnemonicA, append(rpc, "agent", "vouch", "--mnemonic-file", "-", self)...)
	var ee *cliutil.ExitError
	if !errors.Is(err, reason.SelfTarget) || !errors.As(err, &ee) || ee.Code != 1 ||
		!strings.HasPrefix(ee.Message, "error: ") || !strings.Contains(ee.Message, "\nreason: self_target\nhint: ") {
		t.Errorf("self vouch: %#v", err)
	}
}

// A node's refusal keeps bitcoin-cli's text and status and adds the reason and a hint.
func TestAgentNodeError(t *testing.T) {
	e := &env{rpcURL: "http://x", net: params.Regtest}
	sent := &jsonrpc.Error{Code: -1, Message: "score 500 is below the 700 needed to vouch", Data: map[string]any{"reason": "score_too_low"}}
	err := e.agentError(rpcapi.DecodeError(sent))
	var ee *cliutil.ExitError
	if !errors.As(err, &ee) || ee.Code != 1 || !errors.Is(err, reason.ScoreTooLow) {
		t.Fatalf("%#v", err)
	}
	want := "error code: -1\nerror message:\nscore 500 is below the 700 needed to vouch\nreason: score_too_low\nhint: vouching needs"
	if !strings.HasPrefix(ee.Message, want) {
		t.Fatalf("message %q, want prefix %q", ee.Message, want)
	}
	// Without a reason it is nodeError's.
	err = e.agentError(&jsonrpc.Error{Code: -32601, Message: "Method not found"})
	if !errors.As(err, &ee) || ee.Code != 89 || ee.Message != "error code: -32601\nerror message:\nMethod not found" {
		t.Fatalf("%#v", err)
	}
}

// scaled is protocol §9's score arithmetic, written out again for the test.
func scaled(s, d int) int {
	if d > 0 {
		s += d * (1000 - s) / 500
	} else {
		s -= -d * s / 500
	}
	return min(max(s, 0), 1000)
}

// reviewDelta is the score change of a review (protocol §9).
func reviewDelta(score int) int { return (2*score - 11) * 10 }

// agentE2E drives the coin-wallet executable against a real regtest node.
type agentE2E struct {
	t      *testing.T
	bin    string
	node   *proctest.Node
	common []string
	miner  string
}

// startWalletE2E starts an end-to-end test (skipped with -short): it builds coin-node and
// coin-wallet, starts a regtest node and restores the wallet of mnemonic m, with the
// passphrase pass, in a fresh wallet directory. Its miner is mnemonicMiner's address.
func startWalletE2E(t *testing.T, pass, m string) *agentE2E {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: starts a node")
	}
	dir := proctest.Build(t, "./cmd/coin-node", "./cmd/coin-wallet")
	node := proctest.StartNode(t, filepath.Join(dir, "coin-node"))
	passFile := filepath.Join(t.TempDir(), "pass")
	if err := os.WriteFile(passFile, []byte(pass+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := &agentE2E{t: t, bin: filepath.Join(dir, "coin-wallet"), node: node,
		common: []string{"--network", "regtest", "--rpc", node.URL(), "--wallet-dir", filepath.Join(t.TempDir(), "w"), "--passphrase-file", passFile}}
	h.miner, _ = wallet.AddressFromMnemonic(mnemonicMiner, params.Regtest, 0)
	h.ok(nil, m, "restore")
	return h
}

// run runs coin-wallet with stdin (standard output is a pipe, so results are JSON) and
// returns stdout, stderr and the exit code.
func (h *agentE2E) run(stdin string, args ...string) (string, string, int) {
	h.t.Helper()
	cmd := exec.Command(h.bin, append(append([]string{}, h.common...), args...)...)
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &out, &errb
	cmd.Env = append(os.Environ(), "COIN_WALLET_PASSPHRASE=")
	err := cmd.Run()
	code := 0
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		code = xe.ExitCode()
	} else if err != nil {
		h.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// ok runs a command that must succeed and decodes its JSON into v (when v is not nil).
func (h *agentE2E) ok(v any, stdin string, args ...string) string {
	h.t.Helper()
	out, errOut, code := h.run(stdin, args...)
	if code != 0 {
		h.t.Fatalf("coin-wallet %v: exit %d\n%s%s", args, code, out, errOut)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(out), v); err != nil {
			h.t.Fatalf("coin-wallet %v printed %q: %v", args, out, err)
		}
	}
	return out
}

// refused runs a command that must be refused with reason r, and checks that the mempool
// did not change.
func (h *agentE2E) refused(r reason.Reason, stdin string, args ...string) string {
	h.t.Helper()
	before := h.mempool()
	out, errOut, code := h.run(stdin, args...)
	if code == 0 || out != "" || !strings.Contains(errOut, "\nreason: "+string(r)+"\nhint: ") {
		h.t.Fatalf("coin-wallet %v: exit %d, stdout %q, stderr %q; want a refusal with reason %s", args, code, out, errOut, r)
	}
	if after := h.mempool(); after != before {
		h.t.Fatalf("coin-wallet %v was refused but the mempool went from %d to %d transactions", args, before, after)
	}
	return errOut
}

func (h *agentE2E) mempool() int {
	h.t.Helper()
	info, err := h.node.RPC.GetMempoolInfo(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return info.Size
}

// mine confirms the mempool with n blocks paid to the miner's address.
func (h *agentE2E) mine(n int) {
	h.t.Helper()
	h.mineTo(n, h.miner)
	if m := h.mempool(); m != 0 {
		h.t.Fatalf("%d transactions left in the mempool after a block", m)
	}
}

func (h *agentE2E) mineTo(n int, addr string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := h.node.RPC.GenerateToAddress(ctx, n, addr); err != nil {
		h.t.Fatal(err)
	}
}

func (h *agentE2E) height() uint64 {
	h.t.Helper()
	n, err := h.node.RPC.GetBlockCount(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

// The flow through the real executable and a real regtest node: two agents
// register (A from an encrypted wallet, B from a mnemonic on standard input), A opens a
// contract with B, A's fulfilment is refused and B's goes through, both review, and the
// profiles, the directory and the contract show protocol §9's arithmetic; then a second
// contract expires and A takes its escrow back.
func TestAgentEndToEnd(t *testing.T) {
	h := startWalletE2E(t, "agent-a", mnemonicA)
	a, _ := wallet.AddressFromMnemonic(mnemonicA, params.Regtest, 0)
	b, _ := wallet.AddressFromMnemonic(mnemonicB, params.Regtest, 0)
	// B acts with its mnemonic on standard input (--mnemonic-file -), A with its wallet.

	// Five coinbases each (250 COIN), mature after 100 more blocks.
	h.mineTo(5, a)
	h.mineTo(5, b)
	h.mine(100)

	// Not yet an agent: nothing to show, nothing to vouch with.
	h.refused(reason.AgentNotFound, "", "agent", "profile")
	h.refused(reason.NotAnAgent, mnemonicB, "agent", "vouch", "--mnemonic-file", "-", a)

	// Register both.
	var regA, regB struct {
		Address      string `json:"address"`
		StakeTxID    string `json:"stake_txid"`
		ConductScore int    `json:"conduct_score"`
		Fee          string `json:"fee"`
	}
	h.ok(&regA, "", "agent", "register")
	h.ok(&regB, mnemonicB, "agent", "register", "--mnemonic-file", "-")
	if regA.Address != a || regB.Address != b || regA.ConductScore != 500 || len(regA.StakeTxID) != 64 || regA.Fee == "0.00000000" {
		t.Fatalf("register printed %+v and %+v", regA, regB)
	}
	h.refused(reason.AlreadyRegistered, "", "agent", "register")
	h.mine(1)

	// The stake is locked: shown as such, never spendable.
	var bal map[string]any
	h.ok(&bal, "", "balance")
	if bal["locked"] != "50.00000000" {
		t.Fatalf("balance after register: %v", bal)
	}
	var utxos []utxoJSON
	h.ok(&utxos, "", "utxos")
	stakes := 0
	for _, u := range utxos {
		if u.TxID == regA.StakeTxID && u.Index == 0 {
			stakes++
			if !u.Locked || u.Spendable || u.Amount != "50.00000000" {
				t.Fatalf("stake listed as %+v", u)
			}
		}
	}
	if stakes != 1 {
		t.Fatalf("stake %s:0 not listed once in %+v", regA.StakeTxID, utxos)
	}

	// A opens a contract with B.
	var created struct {
		ContractID   string `json:"contract_id"`
		Initiator    string `json:"initiator"`
		Counterparty string `json:"counterparty"`
		ValueCoin    string `json:"value_coin"`
		ExpiryBlocks int    `json:"expiry_blocks"`
		Status       string `json:"status"`
	}
	h.ok(&created, "", "agent", "contract", "create", "--counterparty", b, "--amount", "2.5", "--expiry", "10")
	if created.Initiator != a || created.Counterparty != b || created.ValueCoin != "2.50000000" || created.ExpiryBlocks != 10 || created.Status != "open" {
		t.Fatalf("contract create printed %+v", created)
	}
	id := created.ContractID
	var k rpcapi.Contract
	h.ok(&k, "", "agent", "contract", "show", id)
	if k.Status != "open" || k.Confirmed || k.Value != 250_000_000 {
		t.Fatalf("pending contract: %+v", k)
	}
	h.mine(1)
	createdAt := h.height()
	h.ok(&k, "", "agent", "contract", "show", id)
	if k.Status != "open" || !k.Confirmed || k.Initiator != a || k.Counterparty != b || k.CreatedHeight != createdAt || k.ExpiresAt != createdAt+10 {
		t.Fatalf("contract at height %d: %+v", createdAt, k)
	}
	// The escrow pays B's address, locked: B's wallet shows it so and does not spend it.
	walletB := []string{"--wallet-dir", filepath.Join(t.TempDir(), "b")}
	h.ok(nil, mnemonicB, append(walletB, "restore")...)
	h.ok(&bal, "", append(walletB, "balance")...)
	if bal["locked"] != "52.50000000" {
		t.Fatalf("B's balance with stake and escrow: %v", bal)
	}
	h.ok(&utxos, "", append(walletB, "utxos")...)
	escrows := 0
	for _, u := range utxos {
		if u.TxID == id && u.Index == 0 {
			escrows++
			if !u.Locked || u.Spendable || u.Amount != "2.50000000" {
				t.Fatalf("escrow listed as %+v", u)
			}
		}
	}
	if escrows != 1 {
		t.Fatalf("escrow %s:0 not listed once in %+v", id, utxos)
	}

	// Reviews wait for the fulfilment; only the counterparty fulfils.
	h.refused(reason.ContractNotFulfilled, "", "agent", "review", "--contract", id, "--subject", b, "--score", "9")
	msg := h.refused(reason.NotCounterparty, "", "agent", "contract", "fulfil", id)
	if !strings.HasPrefix(msg, "error: ") {
		t.Fatalf("A's fulfilment: %q", msg)
	}
	var ful struct {
		ContractID  string `json:"contract_id"`
		Status      string `json:"status"`
		ReleaseTxID string `json:"release_txid"`
		Amount      string `json:"amount"`
		Fee         string `json:"fee"`
	}
	h.ok(&ful, mnemonicB, "agent", "contract", "fulfil", "--mnemonic-file", "-", id)
	if ful.ContractID != id || ful.Status != "fulfilled" || len(ful.ReleaseTxID) != 64 {
		t.Fatalf("fulfil printed %+v", ful)
	}
	h.refused(reason.ContractNotOpen, mnemonicB, "agent", "contract", "fulfil", "--mnemonic-file", "-", id)
	h.mine(1)
	h.ok(&k, "", "agent", "contract", "show", id)
	if k.Status != "fulfilled" || k.ClosedBy != ful.ReleaseTxID || !k.Confirmed {
		t.Fatalf("fulfilled contract: %+v", k)
	}

	// Both review: A gives B a 9, B gives A a 4.
	var rev struct {
		Reviewer        string `json:"reviewer"`
		Subject         string `json:"subject"`
		Score           int    `json:"score"`
		ContractID      string `json:"contract_id"`
		TxID            string `json:"txid"`
		NewConductScore int    `json:"new_conduct_score"`
	}
	scoreA := scaled(500, 10) // initiator's fulfilment bonus
	scoreB := scaled(500, 20) // counterparty's
	scoreB = scaled(scoreB, reviewDelta(9))
	scoreA = scaled(scoreA, reviewDelta(4))
	h.ok(&rev, "", "agent", "review", "--contract", id, "--subject", b, "--score", "9")
	if rev.Reviewer != a || rev.Subject != b || rev.Score != 9 || rev.ContractID != id || rev.NewConductScore != scoreB {
		t.Fatalf("A's review printed %+v, want new score %d", rev, scoreB)
	}
	h.ok(&rev, mnemonicB, "agent", "review", "--mnemonic-file", "-", "--contract", id, "--subject", a, "--score", "4")
	if rev.Reviewer != b || rev.NewConductScore != scoreA {
		t.Fatalf("B's review printed %+v, want new score %d", rev, scoreA)
	}
	h.refused(reason.AlreadyReviewed, "", "agent", "review", "--contract", id, "--subject", b, "--score", "10")
	h.mine(1)
	h.ok(&k, "", "agent", "contract", "show", id)
	if !k.ReviewedByInitiator || !k.ReviewedByCounterparty {
		t.Fatalf("reviewed contract: %+v", k)
	}

	// The profiles hold protocol §9's arithmetic: 500, fulfilment, review.
	var pa, pb rpcapi.AgentProfile
	h.ok(&pa, "", "agent", "profile")
	h.ok(&pb, "", "agent", "profile", b)
	if scoreA != 480 || scoreB != 587 {
		t.Fatalf("the test's own arithmetic: A %d, B %d; want 480 and 587", scoreA, scoreB)
	}
	for _, c := range []struct {
		p     rpcapi.AgentProfile
		addr  string
		score int
		avg   float64
	}{{pa, a, scoreA, 4}, {pb, b, scoreB, 9}} {
		if c.p.Address != c.addr || int(c.p.ConductScore) != c.score || c.p.ContractsCompleted != 1 || c.p.ReviewsReceived != 1 ||
			c.p.AverageReviewScore == nil || *c.p.AverageReviewScore != c.avg || !c.p.Confirmed || c.p.RegisteredHeight == nil {
			t.Errorf("profile of %s: %+v, want score %d, average %v", c.addr, c.p, c.score, c.avg)
		}
	}
	if pa.StakeTxID != regA.StakeTxID || pa.Tier != "participant" || pb.Tier != "contributor" {
		t.Errorf("stake and tiers: %+v %+v", pa, pb)
	}
	// B (587) lists before A (480).
	var l rpcapi.AgentList
	h.ok(&l, "", "agent", "list")
	if l.Total != 2 || len(l.Agents) != 2 || l.Agents[0].Address != b || l.Agents[1].Address != a ||
		int(l.Agents[0].ConductScore) != scoreB || l.Agents[1].ContractsCompleted != 1 {
		t.Fatalf("list: %+v", l)
	}
	h.ok(&l, "", "agent", "list", "--offset", "1", "--limit", "1")
	if l.Total != 2 || len(l.Agents) != 1 || l.Agents[0].Address != a || l.Offset != 1 || l.Limit != 1 {
		t.Fatalf("list --offset 1 --limit 1: %+v", l)
	}
	// 480 cannot vouch.
	h.refused(reason.ScoreTooLow, "", "agent", "vouch", b)

	// A second contract: not refundable before it expires, not fulfillable after; then A
	// takes the escrow back and B pays 50 points.
	h.ok(&created, "", "agent", "contract", "create", "--counterparty", b, "--amount", "1")
	h.mine(1)
	h.ok(&k, "", "agent", "contract", "show", created.ContractID)
	if k.ExpiresAt != h.height()+1_440 {
		t.Fatalf("default expiry: %+v at height %d", k, h.height())
	}
	h.ok(&created, "", "agent", "contract", "create", "--counterparty", b, "--amount", "1", "--expiry", "10")
	id2 := created.ContractID
	h.mine(1)
	// Refused by the wallet's precheck, in the rule's words (the node's are the same).
	msg = h.refused(reason.ContractNotExpired, "", "agent", "contract", "refund", id2)
	if !strings.HasPrefix(msg, "error: contract "+id2+" expires at height "+strconv.FormatUint(h.height()+10, 10)+"; a refund is possible from then on\n") {
		t.Fatalf("early refund: %q", msg)
	}
	h.refused(reason.NotInitiator, mnemonicB, "agent", "contract", "refund", "--mnemonic-file", "-", id2)
	h.mine(10)
	h.refused(reason.ContractExpired, mnemonicB, "agent", "contract", "fulfil", "--mnemonic-file", "-", id2)
	var ref struct {
		Status     string `json:"status"`
		RefundTxID string `json:"refund_txid"`
	}
	h.ok(&ref, "", "agent", "contract", "refund", id2)
	h.mine(1)
	h.ok(&k, "", "agent", "contract", "show", id2)
	if ref.Status != "expired" || k.Status != "expired" || k.ClosedBy != ref.RefundTxID {
		t.Fatalf("refund printed %+v; contract %+v", ref, k)
	}
	h.ok(&pb, "", "agent", "profile", b)
	if want := scaled(scoreB, -50); int(pb.ConductScore) != want || pb.ContractsFailed != 1 {
		t.Fatalf("B after the refund: %+v, want score %d", pb, want)
	}
}
