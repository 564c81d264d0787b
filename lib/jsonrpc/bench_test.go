package jsonrpc

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"
)

// The two benchmarks below drive a server over real loopback HTTP with the
// same parallel keep-alive clients, so their req/s metrics compare the
// JSON-RPC server with the cost of net/http alone. Run them together:
//
//	go test -run '^$' -bench 'ServerCall|BareHandler' -benchtime 3s ./lib/jsonrpc/

var getBlockCountBody = []byte(`{"jsonrpc":"2.0","method":"getblockcount","params":[],"id":1}`)

// benchClients posts getBlockCountBody to url from parallel goroutines and
// reports requests per second.
func benchClients(b *testing.B, url string) {
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism(4)
	tr := &http.Transport{MaxIdleConns: 8 * procs, MaxIdleConnsPerHost: 8 * procs, IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		buf := make([]byte, 512)
		for pb.Next() {
			req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(getBlockCountBody))
			if err != nil {
				b.Error(err)
				return
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			n, _ := io.ReadFull(resp.Body, buf)
			if resp.StatusCode != http.StatusOK || n == 0 {
				b.Errorf("status %d", resp.StatusCode)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

// BenchmarkServerCall measures getblockcount through the JSON-RPC server.
func BenchmarkServerCall(b *testing.B) {
	s := NewServer(Options{})
	s.Register(Method{
		Name:    "getblockcount",
		Result:  "n (numeric) the current block height",
		Handler: func(context.Context, Params) (any, error) { return uint64(914237), nil },
	})
	ts := httptest.NewServer(s)
	defer ts.Close()
	benchClients(b, ts.URL)
}

// BenchmarkBareHandler is the baseline: a net/http handler that returns a
// constant JSON body.
func BenchmarkBareHandler(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","result":914237,"id":1}`)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer ts.Close()
	benchClients(b, ts.URL)
}

// BenchmarkHandleInProcess measures the server's own work per call
// (envelope parsing, dispatch, encoding) without the network.
func BenchmarkHandleInProcess(b *testing.B) {
	s := NewServer(Options{})
	s.Register(Method{
		Name:    "getblockcount",
		Handler: func(context.Context, Params) (any, error) { return uint64(914237), nil },
	})
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		out := make([]byte, 0, 256)
		st := callState{}
		for pb.Next() {
			out, _ = s.handle(ctx, &st, getBlockCountBody, out[:0])
		}
	})
}
