package rpcserver_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/node"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/rpcauth"
	"github.com/cointoolkit/coin/lib/rpcserver"
	"github.com/cointoolkit/coin/lib/types"
)

// streamServer serves e's node behind the real listener (Listen's access checks) with the
// notification stream, and returns its base URL.
func streamServer(t testing.TB, e *env, cfg rpcserver.HTTPConfig) string {
	t.Helper()
	if cfg.Bind == "" {
		cfg.Bind = "127.0.0.1:0"
	}
	cfg.Logger = quietLogger()
	s, err := rpcserver.Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(rpcserver.Mux(e.rpc, e.node.Notifier()))
	t.Cleanup(func() { s.Close() })
	return "http://" + s.Addr().String()
}

// follower runs Client.Follow into a channel until the test ends or stop is called.
type follower struct {
	events chan rpcapi.Event
	done   chan error    // Follow's return, once
	end    chan struct{} // closed when Follow returned
	stop   context.CancelFunc
}

func follow(t testing.TB, c *rpcapi.Client, o rpcapi.FollowOptions) *follower {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &follower{events: make(chan rpcapi.Event, 10_000), done: make(chan error, 1), end: make(chan struct{}), stop: cancel}
	o.MinBackoff = 10 * time.Millisecond
	go func() {
		defer close(f.end)
		f.done <- c.Follow(ctx, o, func(ev rpcapi.Event) error {
			if ev.Type != rpcapi.EventPing {
				f.events <- ev
			}
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-f.end
	})
	return f
}

// next is the next event, within 10 seconds.
func (f *follower) next(t testing.TB) rpcapi.Event {
	t.Helper()
	select {
	case ev := <-f.events:
		return ev
	case err := <-f.done:
		t.Fatalf("Follow ended: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no event in 10 s")
	}
	return rpcapi.Event{}
}

// expect reads the next events and checks their types and keys (Hash or TxID, and Reason),
// each numbered one after the previous.
func (f *follower) expect(t testing.TB, seq *uint64, want ...rpcapi.Event) {
	t.Helper()
	for _, w := range want {
		ev := f.next(t)
		if ev.Type != w.Type || ev.Hash != w.Hash || ev.TxID != w.TxID || ev.Reason != w.Reason ||
			(w.Height != 0 && ev.Height != w.Height) {
			t.Fatalf("event %+v, want %+v", ev, w)
		}
		if *seq != 0 && ev.Sequence != *seq+1 {
			t.Fatalf("event %+v after sequence %d", ev, *seq)
		}
		*seq = ev.Sequence
	}
}

// TestStreamEvents: through the listener, a follower gets the hello, then a transaction
// entering the pool, the block that mines it and the transaction leaving for it, and in a
// reorganisation the disconnection, the connections and the transaction coming back, each
// numbered one after the other.
func TestStreamEvents(t *testing.T) {
	e := newFundedEnv(t)
	c := rpcapi.NewClient(streamServer(t, e, rpcserver.HTTPConfig{}))
	defer c.Close()
	f := follow(t, c, rpcapi.FollowOptions{})
	hello := f.next(t)
	if hello.Type != rpcapi.EventHello || len(hello.Stream) != 16 || hello.Sequence != e.node.Notifier().Sequence() {
		t.Fatalf("hello %+v", hello)
	}
	seq := hello.Sequence
	tx := e.transfer(e.take(1), 1_000, 1)
	e.send(tx)
	f.expect(t, &seq, rpcapi.Event{Type: rpcapi.EventTxAdded, TxID: tx.TxID().String()})
	parent := e.node.Chain().Tip()
	b := e.mineBlock(tx)
	f.expect(t, &seq, rpcapi.Event{Type: rpcapi.EventBlockConnected, Hash: b.Hash().String(), Height: parent.Height + 1},
		rpcapi.Event{Type: rpcapi.EventTxRemoved, TxID: tx.TxID().String(), Reason: string(mempool.RemovedBlock)})

	// A fork of two empty blocks on b's parent takes over: b leaves, tx comes back.
	next := e.node.Chain().NextBlock()
	pb, _ := e.node.Chain().Block(parent.Hash)
	f1 := e.gen.NextOn("", chaingen.Template{Parent: pb.Hash(), Height: parent.Height + 1, Target: next.Target, Timestamp: next.MinTimestamp + 5}, nil)
	f2 := e.gen.NextOn("", chaingen.Template{Parent: f1.Hash(), Height: parent.Height + 2, Target: next.Target, Timestamp: next.MinTimestamp + 6}, nil)
	for _, blk := range []*types.Block{f1, f2} {
		if _, err := e.node.SubmitBlock(context.Background(), blk); err != nil {
			t.Fatal(err)
		}
	}
	f.expect(t, &seq, rpcapi.Event{Type: rpcapi.EventBlockDisconnected, Hash: b.Hash().String()},
		rpcapi.Event{Type: rpcapi.EventBlockConnected, Hash: f1.Hash().String()},
		rpcapi.Event{Type: rpcapi.EventBlockConnected, Hash: f2.Hash().String()},
		rpcapi.Event{Type: rpcapi.EventTxAdded, TxID: tx.TxID().String()})
}

// TestStreamResume: a follower that stops and comes back with From gets exactly the events it
// missed; one that comes back after the backlog moved on gets a gap first.
func TestStreamResume(t *testing.T) {
	e := newFundedEnv(t)
	c := rpcapi.NewClient(streamServer(t, e, rpcserver.HTTPConfig{}))
	defer c.Close()
	f := follow(t, c, rpcapi.FollowOptions{})
	seq := f.next(t).Sequence
	tx := e.transfer(e.take(1), 1_000, 1)
	e.send(tx)
	f.expect(t, &seq, rpcapi.Event{Type: rpcapi.EventTxAdded, TxID: tx.TxID().String()})
	f.stop()
	<-f.end
	var missed []rpcapi.Event
	for range 3 {
		tx := e.transfer(e.take(1), 1_000, 1)
		e.send(tx)
		missed = append(missed, rpcapi.Event{Type: rpcapi.EventTxAdded, TxID: tx.TxID().String()})
	}
	g := follow(t, c, rpcapi.FollowOptions{From: seq + 1})
	if h := g.next(t); h.Type != rpcapi.EventHello || h.Sequence != seq+3 {
		t.Fatalf("hello on resuming: %+v", h)
	}
	g.expect(t, &seq, missed...)

	// The backlog holds 10,000 events by default; this node's holds 2: a follower that comes
	// back for events 1 on after 5 gets a gap, then 4 and 5.
	e2 := newEnvWith(t, params.Regtest, func(c *node.Config) { c.Notify.Backlog = 2 })
	c2 := rpcapi.NewClient(streamServer(t, e2, rpcserver.HTTPConfig{}))
	defer c2.Close()
	var hashes []string
	for range 5 {
		hashes = append(hashes, e2.mineBlock().Hash().String())
	}
	h := follow(t, c2, rpcapi.FollowOptions{From: 1})
	if ev := h.next(t); ev.Type != rpcapi.EventGap || ev.From != 1 || ev.Sequence != 4 {
		t.Fatalf("want a gap from 1 to 4, got %+v", ev)
	}
	if ev := h.next(t); ev.Type != rpcapi.EventHello || ev.Oldest != 4 || ev.Sequence != 5 {
		t.Fatalf("hello %+v", ev)
	}
	seq = 3
	h.expect(t, &seq, rpcapi.Event{Type: rpcapi.EventBlockConnected, Hash: hashes[3]},
		rpcapi.Event{Type: rpcapi.EventBlockConnected, Hash: hashes[4]})
}

// TestStreamAccess: the stream is behind the listener's checks (credentials, Origin) and
// refuses a cross-site browser request without Origin, other methods, and streams beyond
// the bound.
func TestStreamAccess(t *testing.T) {
	e := newEnvWith(t, params.Regtest, func(c *node.Config) { c.Notify.MaxStreams = 2 })
	line, pass, err := rpcauth.Generate("alice")
	if err != nil {
		t.Fatal(err)
	}
	es, _ := rpcauth.ParseAll([]string{line})
	base := streamServer(t, e, rpcserver.HTTPConfig{Auth: es, AuthFailureDelay: -1, MaxStreams: 2})
	get := func(method string, hdr map[string]string, auth bool) int {
		req, _ := http.NewRequest(method, base+rpcapi.StreamPath, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		if auth {
			req.SetBasicAuth("alice", pass)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		method string
		hdr    map[string]string
		auth   bool
		want   int
	}{
		{http.MethodGet, nil, false, http.StatusUnauthorized},
		{http.MethodGet, map[string]string{"Origin": "https://evil.example"}, true, http.StatusForbidden},
		{http.MethodGet, map[string]string{"Sec-Fetch-Site": "cross-site"}, true, http.StatusForbidden},
		{http.MethodPut, nil, true, http.StatusMethodNotAllowed},
		{http.MethodGet, map[string]string{"Sec-Fetch-Site": "none"}, true, http.StatusOK},
	} {
		if got := get(c.method, c.hdr, c.auth); got != c.want {
			t.Errorf("%s %v (credentials %v): %d, want %d", c.method, c.hdr, c.auth, got, c.want)
		}
	}
	// Two streams at most: the third gets 503, which the client reports and retries (a
	// stream may close). (The stream above ends when the server sees its connection closed.)
	waitFor(t, func() bool { return e.node.Notifier().Streams() == 0 })
	cl := rpcapi.NewClient(strings.Replace(base, "http://", "http://alice:"+pass+"@", 1))
	defer cl.Close()
	a, b := follow(t, cl, rpcapi.FollowOptions{}), follow(t, cl, rpcapi.FollowOptions{})
	a.next(t)
	b.next(t)
	ctx, cancel := context.WithCancel(context.Background())
	var third error
	err = cl.Follow(ctx, rpcapi.FollowOptions{OnError: func(err error) { third = err; cancel() }},
		func(rpcapi.Event) error { return nil })
	if !errors.Is(err, context.Canceled) || third == nil || !strings.Contains(third.Error(), "503") {
		t.Fatalf("third stream: %v (reported %v)", err, third)
	}
	// Once one closes, the retrying client gets in.
	c := follow(t, cl, rpcapi.FollowOptions{})
	a.stop()
	if ev := c.next(t); ev.Type != rpcapi.EventHello {
		t.Fatalf("after a stream closed: %+v", ev)
	}
	// Without credentials, Follow gives up at once too.
	anon := rpcapi.NewClient(base, jsonrpc.WithTimeout(time.Second))
	defer anon.Close()
	if err := anon.Follow(context.Background(), rpcapi.FollowOptions{}, func(rpcapi.Event) error { return nil }); !errors.Is(err, rpcapi.ErrStreamRefused) {
		t.Fatalf("without credentials: %v", err)
	}
}
