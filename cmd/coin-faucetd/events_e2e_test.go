package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/faucet/events"
	"github.com/cointoolkit/coin/lib/proctest"
)

// eventStream is one subscriber of GET /api/agent/events.
type eventStream struct {
	t      testing.TB
	c      chan events.Event
	cancel context.CancelFunc
	last   uint64         // id of the last event read
	got    []events.Event // every event read
}

// subscribe opens the stream at url (path and query) after lastID (0: live only) and waits
// until it is connected.
func subscribe(t testing.TB, base, query string, lastID uint64) *eventStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/agent/events"+query, nil)
	if lastID > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatUint(lastID, 10))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		t.Fatalf("subscribe %s: %v %v", query, resp, err)
	}
	s := &eventStream{t: t, c: make(chan events.Event, 1000), cancel: cancel, last: lastID}
	connected := make(chan struct{})
	go func() {
		defer close(s.c)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		once := false
		var id, data string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, ": connected") && !once:
				once = true
				close(connected)
			case strings.HasPrefix(line, "id: "):
				id = line[4:]
			case strings.HasPrefix(line, "data: "):
				data = line[6:]
			case line == "" && data != "":
				var e events.Event
				if err := json.Unmarshal([]byte(data), &e); err != nil || (id != "" && strconv.FormatUint(e.ID, 10) != id) {
					t.Errorf("bad event id %q data %s: %v", id, data, err)
				}
				s.c <- e
				id, data = "", ""
			}
		}
	}()
	select {
	case <-connected:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not connect")
	}
	t.Cleanup(cancel)
	return s
}

// next waits for the next event whose type and status are want ("type" or "type/status")
// and returns it with the events skipped on the way.
func (s *eventStream) next(want string, timeout time.Duration) (events.Event, []events.Event) {
	s.t.Helper()
	var skipped []events.Event
	deadline := time.After(timeout)
	for {
		select {
		case e, ok := <-s.c:
			if !ok {
				s.t.Fatalf("the stream ended waiting for %s", want)
			}
			s.last, s.got = e.ID, append(s.got, e)
			if e.Type == want || e.Type+"/"+e.Status == want {
				return e, skipped
			}
			skipped = append(skipped, e)
		case <-deadline:
			s.t.Fatalf("no %s within %s (skipped %+v)", want, timeout, skipped)
		}
	}
}

// drain reads what arrives within d.
func (s *eventStream) drain(d time.Duration) []events.Event {
	var out []events.Event
	deadline := time.After(d)
	for {
		select {
		case e, ok := <-s.c:
			if !ok {
				return out
			}
			s.last, s.got = e.ID, append(s.got, e)
			out = append(out, e)
		case <-deadline:
			return out
		}
	}
}

func ids(evs []events.Event) []uint64 {
	out := make([]uint64, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

// TestEventStreamEndToEnd: a real node and coin-faucetd. A subscriber for agent B sees A's
// contract with B pending before the next block, then confirmed with the height, then
// fulfilled; it disconnects, events happen, it resumes with Last-Event-ID and misses
// nothing, also across a faucetd restart during which a block was mined; a reorganisation
// (a longer fork mined on a second node that reconnects) retracts the confirmed events of
// the undone block, and the contract comes back as pending.
func TestEventStreamEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	fx := startFaucetNet(t, 10)
	n, burn := fx.node, fx.burn
	ctx := context.Background()
	// A second node, in step now; later it mines a longer fork alone.
	// Node 2 does not listen: node 1 must not reach it by the address it learned, so that
	// node 2 can mine a fork alone below.
	n2 := &node{proctest.NewNode(t, n.Bin, "--connect", n.P2PAddr(), "--listen=false")}
	n2.Start(t)
	waitFor(t, 20*time.Second, "node 2 in step", func() bool { return sameTip(n, n2) })

	f := startFaucetd(t, fx.faucetdArgs()...)
	ok := func(method, path, body string) map[string]any {
		t.Helper()
		code, m, _ := httpJSON(method, f.url+path, body)
		if code != 200 {
			t.Fatalf("%s %s: %d %v\nfaucetd:\n%s", method, path, code, m, f.Out.Tail(30))
		}
		return m
	}
	type agent struct{ mnemonic, address string }
	newAgent := func() agent {
		w := ok("GET", "/api/wallet/new", "")
		a := agent{w["mnemonic"].(string), w["address"].(string)}
		ok("POST", "/api/faucet", fmt.Sprintf(`{"address":%q}`, a.address))
		return a
	}
	body := func(a agent, rest string) string { return fmt.Sprintf(`{"mnemonic":%q%s}`, a.mnemonic, rest) }
	height := func() uint64 {
		h, err := n.RPC.GetBlockCount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	const wait = 10 * time.Second

	all := subscribe(t, f.url, "", 0) // every event, to compare with the filtered ones
	a, b, c := newAgent(), newAgent(), newAgent()
	for _, x := range []agent{a, b, c} {
		ok("POST", "/api/agent/register", body(x, ""))
	}
	n.generate(t, 1, burn)
	forB := subscribe(t, f.url, "?address="+b.address, 0)

	// A's contract with B: pending before the next block, then confirmed.
	h0 := height()
	cr := ok("POST", "/api/agent/contract/create", body(a, fmt.Sprintf(`,"counterparty":%q,"value_coin":1`, b.address)))
	id := cr["contract_id"].(string)
	e, _ := forB.next("contract_created/pending", wait)
	if e.TxID != id || e.ContractID != id || e.Actor != a.address || e.Initiator != a.address || e.Counterparty != b.address ||
		e.ValueCoin != "1.00000000" || e.ExpiryBlocks != 1440 || e.Height != 0 || e.BlockHash != "" {
		t.Fatalf("pending contract_created: %+v", e)
	}
	if h := height(); h != h0 {
		t.Fatalf("a block came (%d → %d) before the pending event was checked", h0, h)
	}
	n.generate(t, 1, burn)
	e, _ = forB.next("contract_created/confirmed", wait)
	if e.TxID != id || e.Height != h0+1 || e.BlockHash == "" {
		t.Fatalf("confirmed contract_created: %+v (height %d)", e, h0+1)
	}

	// B fulfils: pending, B's score changes (pending view), then confirmed.
	fr := ok("POST", "/api/agent/contract/fulfil", body(b, fmt.Sprintf(`,"contract_id":%q`, id)))
	e, _ = forB.next("contract_fulfilled/pending", wait)
	if e.TxID != fr["release_txid"] || e.Actor != b.address || e.Initiator != a.address || e.Counterparty != b.address || e.ContractID != id {
		t.Fatalf("pending contract_fulfilled: %+v", e)
	}
	e, _ = forB.next("score_changed", wait)
	if e.Address != b.address || *e.OldScore != 500 || *e.NewScore != 520 || e.Tier != "participant" {
		t.Fatalf("score_changed: %+v", e)
	}
	n.generate(t, 1, burn)
	forB.next("contract_fulfilled/confirmed", wait)

	// Disconnect; A reviews B, C makes a contract with B, a block confirms both.
	forB.cancel()
	lastB := forB.last
	ok("POST", "/api/agent/review", body(a, fmt.Sprintf(`,"subject_address":%q,"score":9,"contract_id":%q`, b.address, id)))
	ok("POST", "/api/agent/contract/create", body(c, fmt.Sprintf(`,"counterparty":%q,"value_coin":2`, b.address)))
	n.generate(t, 1, burn)
	all.next("reviewed/confirmed", wait)
	all.drain(time.Second)

	// Resume: exactly the events touching B after lastB, as the unfiltered stream had them.
	wantB := func(after uint64, upto uint64) []uint64 {
		var out []uint64
		for _, ev := range all.got {
			if ev.ID > after && ev.ID <= upto && (events.Filter{Address: b.address}).Match(&ev) {
				out = append(out, ev.ID)
			}
		}
		return out
	}
	resumed := subscribe(t, f.url, "?address="+b.address, lastB)
	got := resumed.drain(2 * time.Second)
	if w := wantB(lastB, all.last); fmt.Sprint(ids(got)) != fmt.Sprint(w) || len(w) < 3 {
		t.Fatalf("resumed after %d: %v, want %v", lastB, ids(got), w)
	}
	for _, ev := range got {
		t.Logf("resumed: %d %s %s %s", ev.ID, ev.Type, ev.Status, ev.TxID)
	}
	resumed.cancel()
	lastB = got[len(got)-1].ID

	// Across a restart: a contract seen pending, then mined while faucetd is down.
	hDown := height()
	cr2 := ok("POST", "/api/agent/contract/create", body(a, fmt.Sprintf(`,"counterparty":%q,"value_coin":1.5`, b.address)))
	all.next("contract_created/pending", wait)
	if code := f.Stop(t, 20*time.Second); code != 0 {
		t.Fatalf("faucetd exit code %d with streams open:\n%s", code, f.Out.Tail(20))
	}
	n.generate(t, 1, burn) // mined while the faucet is down
	f.Proc = proctest.Start(t, f.Cmd.Path, f.args...)
	f.waitReady(t)
	resumed = subscribe(t, f.url, "?address="+b.address, lastB)
	got = resumed.drain(3 * time.Second)
	var sawPending, sawConfirmed bool
	for _, ev := range got {
		if ev.ID <= lastB {
			t.Fatalf("event %d repeated after resuming at %d", ev.ID, lastB)
		}
		if ev.TxID == cr2["contract_id"] {
			sawPending = sawPending || ev.Status == events.StatusPending
			sawConfirmed = sawConfirmed || (ev.Status == events.StatusConfirmed && ev.Height == hDown+1)
		}
	}
	if !sawPending || !sawConfirmed {
		t.Fatalf("after the restart, resumed at %d: %+v; want the second contract pending and confirmed at %d", lastB, got, hDown+1)
	}
	for i := 1; i < len(got); i++ {
		if got[i].ID <= got[i-1].ID {
			t.Fatalf("ids out of order: %v", ids(got))
		}
	}

	// Reorg: node 2 alone mines a longer fork while node 1 mines a block with a contract.
	n2.Proc.Stop(t, 20*time.Second)
	os.Remove(filepath.Join(n2.DataDir, "peers.json"))
	n2.Extra = []string{"--listen=false"}
	n2.Start(t)
	waitFor(t, 20*time.Second, "node 1 without peers", func() bool { return peers(n) == 0 })
	live := subscribe(t, f.url, "?address="+b.address, 0)
	cr3 := ok("POST", "/api/agent/contract/create", body(a, fmt.Sprintf(`,"counterparty":%q,"value_coin":1.25`, b.address)))
	live.next("contract_created/pending", wait)
	n.generate(t, 1, burn)
	conf, _ := live.next("contract_created/confirmed", wait)
	if conf.TxID != cr3["contract_id"] {
		t.Fatalf("confirmed: %+v", conf)
	}
	n2.generate(t, 3, burn)
	n2.Proc.Stop(t, 20*time.Second)
	n2.Extra = []string{"--connect", n.P2PAddr(), "--listen=false"}
	n2.Start(t)
	waitFor(t, 30*time.Second, "node 1 on node 2's longer fork", func() bool { return sameTip(n, n2) })
	r, _ := live.next("retracted", wait)
	if r.Retracts != conf.ID || r.RetractedType != events.TypeContractCreated || r.Reason != events.ReasonReorg ||
		r.TxID != cr3["contract_id"] || r.Counterparty != b.address {
		t.Fatalf("retraction: %+v, want of %d", r, conf.ID)
	}
	back, _ := live.next("contract_created/pending", wait)
	if back.TxID != cr3["contract_id"] {
		t.Fatalf("after the reorg: %+v", back)
	}
	t.Logf("events: contract seen pending, confirmed, fulfilled; resumed across a restart; reorg retracted %d", conf.ID)
}

func sameTip(a, b *node) bool {
	ha, err1 := a.RPC.GetBlockCount(context.Background())
	hb, err2 := b.RPC.GetBlockCount(context.Background())
	if err1 != nil || err2 != nil || ha != hb {
		return false
	}
	x, _ := a.RPC.GetBlockHash(context.Background(), ha)
	y, _ := b.RPC.GetBlockHash(context.Background(), hb)
	return x == y && x != ""
}

func peers(n *node) int {
	var pi struct {
		Connected int `json:"connected"`
	}
	if err := n.RPC.Call(context.Background(), "getpeerinfo", nil, &pi); err != nil {
		return -1
	}
	return pi.Connected
}

func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
