package events

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"
)

// BenchmarkEventFanout: 1,000 SSE subscribers over real HTTP on loopback; each iteration
// publishes one event stamped with the time the source observed it, and waits until every
// subscriber has read it. Reported: p50 and p99 of observed → received over all deliveries
// (the node's polling interval comes on top: up to PollInterval, 100 ms by default).
func BenchmarkEventFanout(b *testing.B) {
	const subscribers = 1000
	h := newTestHub(b, 0, 0)
	srv := httptest.NewServer(h.Handler(HandlerConfig{MaxSubscribers: 2 * subscribers}))
	b.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * subscribers, MaxConnsPerHost: 0}}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)

	var mu sync.Mutex
	var delays []time.Duration
	got := make(chan struct{}, subscribers*4)
	for i := 0; i < subscribers; i++ {
		subscribe(b, ctx, client, srv.URL+"?types=contract_created", func(line []byte, now time.Time) {
			var e struct {
				Time time.Time `json:"time"`
			}
			if json.Unmarshal(line, &e) == nil {
				mu.Lock()
				delays = append(delays, now.Sub(e.Time))
				mu.Unlock()
			}
			got <- struct{}{}
		})
	}
	for h.Subscribers() < subscribers {
		time.Sleep(10 * time.Millisecond)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ev := Event{Type: TypeContractCreated, Status: StatusPending, TxID: "00", Actor: "tcoin1a", Counterparty: "tcoin1b",
			Time: time.Now().UTC().Format(time.RFC3339Nano)}
		if _, err := h.Publish([]Event{ev}, nil); err != nil {
			b.Fatal(err)
		}
		for j := 0; j < subscribers; j++ {
			select {
			case <-got:
			case <-time.After(10 * time.Second):
				b.Fatalf("event %d: %d of %d subscribers received it", i, j, subscribers)
			}
		}
	}
	b.StopTimer()
	if h.Subscribers() != subscribers {
		b.Fatalf("%d subscribers left of %d (dropped as slow?)", h.Subscribers(), subscribers)
	}
	sort.Slice(delays, func(i, j int) bool { return delays[i] < delays[j] })
	q := func(p float64) float64 { return float64(delays[int(p*float64(len(delays)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(q(1), "max-ms")
	b.ReportMetric(0, "ns/op")
}

// subscribe opens an event stream at url and, until it ends, calls data with the payload of
// each "data: " line and the time it was read.
func subscribe(b *testing.B, ctx context.Context, client *http.Client, url string, data func(payload []byte, now time.Time)) {
	b.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		defer resp.Body.Close()
		r := bufio.NewReaderSize(resp.Body, 16<<10)
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return
			}
			if bytes.HasPrefix(line, []byte("data: ")) {
				data(line[6:], time.Now())
			}
		}
	}()
}
