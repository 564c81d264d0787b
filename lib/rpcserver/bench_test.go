package rpcserver_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/proctest"
)

// The RPC benchmarks drive a real node (chain on LevelDB, mempool) through the JSON-RPC server
// over loopback HTTP with parallel keep-alive clients; BenchmarkBareHandler is the ceiling:
// a net/http handler returning a constant JSON body to the same clients. Compare req/s, and
// cpu-µs/req (client and server CPU per request), which other load on a shared machine
// disturbs less:
//
//	go test -run '^$' -bench 'RPC|BareHandler' -benchtime 3s ./lib/rpcserver/

// benchRPC posts body to url from parallel goroutines and reports requests per second.
func benchRPC(b *testing.B, url string, body []byte) {
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism(4)
	tr := &http.Transport{MaxIdleConns: 8 * procs, MaxIdleConnsPerHost: 8 * procs, IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu := time.Now(), proctest.ProcessCPU()
	b.RunParallel(func(pb *testing.PB) {
		buf := make([]byte, 4096)
		for pb.Next() {
			req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
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
			if resp.StatusCode != http.StatusOK || n == 0 || bytes.Contains(buf[:n], []byte(`"error"`)) {
				b.Errorf("HTTP %d: %s", resp.StatusCode, buf[:n])
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
	if used := proctest.ProcessCPU() - cpu; cpu > 0 {
		// Client and server together: the CPU one request costs on this machine.
		b.ReportMetric(float64(used.Microseconds())/float64(b.N), "cpu-µs/req")
	}
}

// benchEnv is a regtest node with a few blocks, the last one holding transactions.
func benchEnv(b *testing.B) *env {
	e := newFundedEnv(b)
	e.mineBlock(e.transfer(e.take(1), 10_000, 2), e.transfer(e.take(1), 10_000, 3))
	return e
}

// BenchmarkRPCGetBlockCount is getblockcount through lib/rpcserver and lib/jsonrpc.
func BenchmarkRPCGetBlockCount(b *testing.B) {
	e := benchEnv(b)
	benchRPC(b, e.srv.URL, []byte(`{"jsonrpc":"2.0","method":"getblockcount","params":[],"id":1}`))
}

// BenchmarkRPCGetBlock is getblock of the tip (three transactions) through the same stack.
func BenchmarkRPCGetBlock(b *testing.B) {
	e := benchEnv(b)
	tip := e.node.Chain().Tip().Hash.String()
	benchRPC(b, e.srv.URL, []byte(`{"jsonrpc":"2.0","method":"getblock","params":["`+tip+`"],"id":1}`))
}

// BenchmarkBareHandler is the ceiling: a bare net/http handler with a constant JSON body
// (getblockcount's answer), served and called the same way.
func BenchmarkBareHandler(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","result":103,"id":1}`)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer ts.Close()
	benchRPC(b, ts.URL, body)
}
