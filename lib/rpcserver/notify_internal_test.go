package rpcserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// TestNotifierBounds: a stream that falls Buffer events behind is dropped (publishing never
// waits); the backlog keeps the latest Backlog events, in order, across its wrap; no more than
// MaxStreams subscribe.
func TestNotifierBounds(t *testing.T) {
	n := NewNotifier(NotifierConfig{Backlog: 3, Buffer: 2, MaxStreams: 2})
	slow, _, _ := n.subscribe(0)
	other, _, _ := n.subscribe(0)
	if third, _, _ := n.subscribe(0); third != nil {
		t.Fatal("a third stream subscribed past MaxStreams 2")
	}
	for i := range 3 {
		n.MempoolChanged(mempool.Change{TxID: types.Hash{byte(i)}, Added: true})
		if i == 0 {
			<-other.ch // other keeps up
		}
	}
	select {
	case <-slow.dropped:
	default:
		t.Fatal("a stream 3 events behind with a buffer of 2 was not dropped")
	}
	select {
	case <-other.dropped:
		t.Fatal("a stream within its buffer was dropped")
	default:
	}
	if n.Streams() != 1 {
		t.Fatalf("%d streams, want 1", n.Streams())
	}
	n.BlockConnected(types.Hash{9}, 7)
	n.BlockDisconnected(types.Hash{9}, 7)
	_, hello, backlog := n.subscribe(2)
	if hello.Sequence != 5 || hello.Oldest != 3 || len(backlog) != 3 {
		t.Fatalf("hello %+v, backlog %+v", hello, backlog)
	}
	for i, want := range []string{rpcapi.EventTxAdded, rpcapi.EventBlockConnected, rpcapi.EventBlockDisconnected} {
		var ev rpcapi.Event
		if err := json.Unmarshal(backlog[i].line, &ev); err != nil || backlog[i].seq != uint64(3+i) || ev.Sequence != backlog[i].seq || ev.Type != want {
			t.Fatalf("backlog %d: %s (%v)", i, backlog[i].line, err)
		}
	}
	if _, _, b := n.subscribe(5); len(b) != 1 || b[0].seq != 5 {
		t.Fatalf("from the last: %+v", b)
	}
}

// TestBlockEvent: the channel of BlockEvent closes at a block event, not at a mempool one.
func TestBlockEvent(t *testing.T) {
	n := NewNotifier(NotifierConfig{})
	ch := n.BlockEvent()
	n.MempoolChanged(mempool.Change{TxID: types.Hash{1}, Reason: mempool.RemovedEvicted})
	select {
	case <-ch:
		t.Fatal("closed by a mempool event")
	default:
	}
	n.BlockConnected(types.Hash{2}, 1)
	select {
	case <-ch:
	default:
		t.Fatal("not closed by a block")
	}
}

// TestStreamOutlivesReadTimeout: a stream lasts longer than the server's ReadTimeout (the
// listener's is 60 s; here 100 ms), with pings in between, on one connection (net/http clears
// the read deadline once the request is read), and its writes outlive WriteTimeout (each
// write sets its own deadline).
func TestStreamOutlivesReadTimeout(t *testing.T) {
	n := NewNotifier(NotifierConfig{Heartbeat: 50 * time.Millisecond})
	srv := httptest.NewUnstartedServer(Mux(http.NotFoundHandler(), n))
	srv.Config.ReadTimeout = 100 * time.Millisecond
	srv.Config.WriteTimeout = 100 * time.Millisecond
	srv.Start()
	defer srv.Close()
	c := rpcapi.NewClient(srv.URL)
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hellos, pings := 0, 0
	err := c.Follow(ctx, rpcapi.FollowOptions{}, func(ev rpcapi.Event) error {
		switch ev.Type {
		case rpcapi.EventHello:
			hellos++
		case rpcapi.EventPing:
			if pings++; pings == 10 { // 500 ms: five read timeouts
				cancel()
			}
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || hellos != 1 || pings != 10 {
		t.Fatalf("Follow: %v, %d hellos, %d pings; want one connection", err, hellos, pings)
	}
}

// TestFollowReconnects: Client.Follow reconnects by itself when the connection breaks and
// resumes after the last event it delivered (events published meanwhile come from the
// backlog, without a gap); when the node restarted (a new stream id), it reports a gap.
func TestFollowReconnects(t *testing.T) {
	var cur atomic.Pointer[Notifier]
	cur.Store(NewNotifier(NotifierConfig{}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { cur.Load().ServeHTTP(w, r) }))
	defer srv.Close()
	c := rpcapi.NewClient(srv.URL)
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan rpcapi.Event, 100)
	done := make(chan error, 1)
	go func() {
		done <- c.Follow(ctx, rpcapi.FollowOptions{MinBackoff: time.Millisecond}, func(ev rpcapi.Event) error {
			if ev.Type != rpcapi.EventPing && ev.Type != rpcapi.EventDropped {
				events <- ev
			}
			return nil
		})
	}()
	next := func() rpcapi.Event {
		t.Helper()
		select {
		case ev := <-events:
			return ev
		case err := <-done:
			t.Fatalf("Follow ended: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("no event in 10 s")
		}
		return rpcapi.Event{}
	}
	n := cur.Load()
	if ev := next(); ev.Type != rpcapi.EventHello {
		t.Fatalf("first %+v", ev)
	}
	n.BlockConnected(types.Hash{1}, 1)
	if ev := next(); ev.Sequence != 1 {
		t.Fatalf("%+v", ev)
	}
	// Break the connection, publish while the client is away.
	srv.CloseClientConnections()
	n.BlockConnected(types.Hash{2}, 2)
	n.BlockConnected(types.Hash{3}, 3)
	if ev := next(); ev.Type != rpcapi.EventHello {
		t.Fatalf("after the break: %+v", ev)
	}
	for want := uint64(2); want <= 3; want++ {
		if ev := next(); ev.Type != rpcapi.EventBlockConnected || ev.Sequence != want {
			t.Fatalf("resumed: %+v, want sequence %d", ev, want)
		}
	}
	// A restart: a new notifier numbers from 1 again.
	n2 := NewNotifier(NotifierConfig{})
	n2.BlockConnected(types.Hash{9}, 4)
	cur.Store(n2)
	n.Close()
	if ev := next(); ev.Type != rpcapi.EventGap || ev.From != 4 || ev.Sequence != 2 {
		t.Fatalf("after a restart: %+v, want a gap from 4", ev)
	}
	if ev := next(); ev.Type != rpcapi.EventHello || ev.Stream != n2.stream {
		t.Fatalf("%+v", ev)
	}
	n2.BlockConnected(types.Hash{10}, 5)
	if ev := next(); ev.Sequence != 2 || ev.Height != 5 {
		t.Fatalf("after the restart: %+v", ev)
	}
}
