package node

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	dto "github.com/prometheus/client_model/go"

	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/logging"
	"github.com/cointoolkit/coin/lib/p2p"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// Tests of what an operator watches: the sync's progress (getsyncstatus's target_height and
// progress, the "sync: progress" log line) during a real sync of two regtest nodes, and the
// Prometheus metrics scraped over HTTP.

// startNode runs a node of cfg (regtest, a temporary data dir) until the test ends.
func startNode(t *testing.T, cfg Config) *Node {
	t.Helper()
	cfg.Network, cfg.DataDir, cfg.MinFreeDiskPercent = params.Regtest, t.TempDir(), 1e-9
	n, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return n
}

func regtestAddr(t *testing.T) string {
	seed, err := keys.SeedFromMnemonic("abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about", "")
	if err != nil {
		t.Fatal(err)
	}
	k := keys.DeriveAccountKey(seed, params.Regtest.CoinType, 0, 0)
	addr, err := keys.EncodeAddress(params.Regtest.HRP, keys.HashPubKey(k.PublicKey()))
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

func rpcClient(t *testing.T, bind string) *rpcapi.Client {
	c := rpcapi.NewClient("http://" + bind)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestSyncProgress: a node that joins late reports, while it catches up, a target_height of
// the other node's height and a progress between 0 and 1, logs "sync: progress" with its
// rate and ETA, and reports progress 1 at the target once caught up.
func TestSyncProgress(t *testing.T) {
	const blocks = 4000
	ctx := context.Background()
	addr := regtestAddr(t)
	aP2P := fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t))
	aRPC := fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t))
	startNode(t, Config{RPCBind: aRPC, P2P: &p2p.Config{ListenAddr: aP2P, MaxOutbound: -1},
		Logger: slog.New(slog.DiscardHandler)})
	a := rpcClient(t, aRPC)
	if _, err := a.GenerateToAddress(ctx, blocks, addr); err != nil {
		t.Fatal(err)
	}

	var lb proctest.Buffer
	levels, _ := logging.ParseLevels("info")
	bRPC := fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t))
	bn := startNode(t, Config{RPCBind: bRPC, P2P: &p2p.Config{Connect: []string{aP2P}}, SyncLogInterval: 10 * time.Millisecond,
		Logger: logging.NewLevels(&lb, levels)})
	b := rpcClient(t, bRPC)
	var during []rpcapi.SyncStatus
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := b.GetSyncStatus(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Syncing {
			during = append(during, *st)
		}
		if st.CurrentHeight == blocks && !st.Syncing {
			if st.TargetHeight != blocks || st.Progress != 1 {
				t.Fatalf("caught up: %+v", st)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not synced: %+v", st)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if len(during) == 0 {
		t.Fatal("getsyncstatus never reported syncing")
	}
	midway := false
	for _, st := range during {
		if st.TargetHeight < st.CurrentHeight || st.Progress < 0 || st.Progress > 1 ||
			st.Progress != float64(st.CurrentHeight)/float64(st.TargetHeight) {
			t.Fatalf("during the sync: %+v", st)
		}
		midway = midway || (st.TargetHeight == blocks && st.Progress > 0 && st.Progress < 1)
	}
	if !midway {
		t.Errorf("no report of the target with a progress below 1: %+v", during)
	}
	t.Logf("%d syncing reports, first %+v, last %+v", len(during), during[0], during[len(during)-1])
	if p := bn.SyncProgress(); p.Syncing || p.Progress() != 1 || p.TargetHeight != blocks {
		t.Fatalf("SyncProgress after the sync: %+v", p)
	}

	log := lb.String()
	var lines []string
	for l := range strings.SplitSeq(log, "\n") {
		if strings.Contains(l, `msg="sync: progress"`) {
			lines = append(lines, l)
		}
	}
	if len(lines) < 2 {
		t.Fatalf("%d progress lines in\n%s", len(lines), log)
	}
	rated := false
	for _, l := range lines {
		for _, want := range []string{"sys=p2p", "height=", fmt.Sprintf("target=%d", blocks), "percent=", "blocks_per_sec=", "eta="} {
			if !strings.Contains(l, want) {
				t.Fatalf("progress line without %s: %s", want, l)
			}
		}
		rated = rated || !strings.Contains(l, "blocks_per_sec=-")
	}
	if !rated {
		t.Fatalf("no progress line with a rate:\n%s", strings.Join(lines, "\n"))
	}
	t.Logf("progress lines:\n%s", strings.Join(lines, "\n"))
}

// scrape reads a node's metrics over HTTP in the text exposition format.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// value is the value of the family's metric with the labels given (name=value pairs).
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// TestMetrics: --metrics-bind's exposition, scraped over HTTP, follows the node: the height
// after generatetoaddress, the RPC durations by method, a refused transaction by its reason,
// the mempool and the peers.
func TestMetrics(t *testing.T) {
	ctx := context.Background()
	rpcBind := fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t))
	n := startNode(t, Config{RPCBind: rpcBind, MetricsBind: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	maddr := n.MetricsAddr()
	if !strings.HasPrefix(maddr, "127.0.0.1:") {
		t.Fatalf("metrics on %q", maddr)
	}
	c := rpcClient(t, rpcBind)
	fams := scrape(t, maddr)
	for name, want := range map[string]float64{"coin_node_height": 0, "coin_node_peers": 0, "coin_node_mempool_transactions": 0,
		"coin_node_mempool_bytes": 0, "coin_node_syncing": 0, "coin_node_sync_target_height": 0} {
		if v, ok := value(fams, name); !ok || v != want {
			t.Errorf("%s = %v (%v), want %v", name, v, ok, want)
		}
	}
	if _, err := c.GenerateToAddress(ctx, 7, regtestAddr(t)); err != nil {
		t.Fatal(err)
	}
	// A transaction spending an output that does not exist: refused for missing inputs.
	tx := &types.Transaction{Version: 1, Kind: types.KindTransfer,
		Inputs:  []types.TxInput{{PrevTxID: types.Hash{1, 2, 3}, PrevIndex: 0}},
		Outputs: []types.TxOutput{{Value: 1000, PubKeyHash: types.Hash{4}}}}
	_, err := c.SendRawTransaction(ctx, hex.EncodeToString(tx.Bytes()))
	if !errors.Is(err, reason.MissingInputs) {
		t.Fatalf("sendrawtransaction of a transaction without inputs: %v", err)
	}
	fams = scrape(t, maddr)
	if v, _ := value(fams, "coin_node_height"); v != 7 {
		t.Errorf("coin_node_height %v after 7 blocks", v)
	}
	if v, ok := value(fams, "coin_node_rpc_duration_seconds", "method", "generatetoaddress"); !ok || v != 1 {
		t.Errorf("generatetoaddress calls observed: %v (%v)", v, ok)
	}
	if f := fams["coin_node_rpc_duration_seconds"]; f == nil || f.GetType() != dto.MetricType_HISTOGRAM {
		t.Errorf("rpc durations: %v", f)
	}
	if v, ok := value(fams, "coin_node_rejects_total", "type", "transaction", "reason", string(reason.MissingInputs)); !ok || v != 1 {
		t.Errorf("missing-inputs rejections: %v (%v)", v, ok)
	}
	if v, ok := value(fams, "process_open_fds"); !ok || v == 0 {
		t.Errorf("process collector: %v (%v)", v, ok)
	}
}

// The progress line's rate is smoothed over the intervals and its ETA is what is left at
// that rate; a node that is not syncing logs nothing, and a sync of a few blocks is debug.
func TestProgressMeter(t *testing.T) {
	var m progressMeter
	t0 := time.Unix(1000, 0)
	attrs := func(kv []any) map[string]any {
		out := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	if _, a := m.sample(t0, p2p.SyncProgress{Height: 5, TargetHeight: 5}); a != nil {
		t.Fatalf("not syncing: %v", a)
	}
	if lv, _ := m.sample(t0, p2p.SyncProgress{Syncing: true, Height: 5, TargetHeight: 7}); lv != slog.LevelDebug {
		t.Fatalf("a two-block catch-up at %v", lv)
	}
	m = progressMeter{}
	lv, a := m.sample(t0, p2p.SyncProgress{Syncing: true, Height: 0, TargetHeight: 1000})
	if got := attrs(a); lv != slog.LevelInfo || got["percent"] != "0.00" || got["eta"] != "-" {
		t.Fatalf("first sample %v %v", lv, got)
	}
	_, a = m.sample(t0.Add(5*time.Second), p2p.SyncProgress{Syncing: true, Height: 100, TargetHeight: 1000})
	if got := attrs(a); got["blocks_per_sec"] != "20.0" || got["eta"] != "45s" || got["percent"] != "10.00" {
		t.Fatalf("second sample %v", got)
	}
	_, a = m.sample(t0.Add(10*time.Second), p2p.SyncProgress{Syncing: true, Height: 300, TargetHeight: 1000})
	if got := attrs(a); got["blocks_per_sec"] != "30.0" || got["eta"] != "23s" {
		t.Fatalf("third sample %v", got)
	}
	_, a = m.sample(t0.Add(15*time.Second), p2p.SyncProgress{Syncing: true, Height: 300, TargetHeight: 1000})
	if got := attrs(a); got["blocks_per_sec"] != "15.0" {
		t.Fatalf("stalled sample %v", got)
	}
}
