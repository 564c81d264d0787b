package httpapi

import (
	"context"
	"github.com/cointoolkit/coin/lib/faucet"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	dto "github.com/prometheus/client_model/go"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/metrics"
)

// scrapeFaucet reads the metrics over HTTP in the text exposition format.
func scrapeFaucet(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + metrics.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// metricValue is the value (a histogram's count) of the family's metric with the labels.
func metricValue(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	for _, m := range fams[name].GetMetric() {
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.GetLabel() {
				found = found || (lp.GetName() == labels[i] && lp.GetValue() == labels[i+1])
			}
			match = match && found
		}
		if !match {
			continue
		}
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// TestMetricsScraped: claims by outcome, the balance and the HTTP latency by route, scraped
// over HTTP from the metrics server while the API answers through the middleware.
func TestMetricsScraped(t *testing.T) {
	h := regtestHarness(t, 3)
	m := NewMetrics(h.server)
	api := httptest.NewServer(m.Wrap(h.server.Handler()))
	defer api.Close()
	ms, err := metrics.Listen("127.0.0.1:0", m.Registry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	go ms.Serve()
	defer ms.Shutdown(context.Background())

	waitFor(t, func() bool { return h.engine.Status().Synced })
	fams := scrapeFaucet(t, ms.Addr().String())
	if got := metricValue(fams, "coin_faucet_balance_subunits"); got != float64(h.engine.Status().Spendable) || got <= 0 {
		t.Fatalf("balance %v, engine %+v", got, h.engine.Status())
	}
	before := metricValue(fams, "coin_faucet_balance_subunits")

	post := func(body string) int {
		resp, err := http.Post(api.URL+"/api/faucet", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	addr, _ := newAddress(t)
	if s := post(`{"address":"` + addr + `"}`); s != http.StatusOK {
		t.Fatalf("claim: %d", s)
	}
	if s := post(`{"address":"` + addr + `"}`); s != http.StatusTooManyRequests {
		t.Fatalf("second claim: %d", s)
	}
	if s := post(`{"address":"tcoin1nonsense"}`); s != http.StatusBadRequest {
		t.Fatalf("bad address: %d", s)
	}
	for _, p := range []string{"/api/status", "/no/such/path/1", "/no/such/path/2"} {
		resp, err := http.Get(api.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}

	waitFor(t, func() bool {
		return metricValue(scrapeFaucet(t, ms.Addr().String()), "coin_faucet_balance_subunits") <= before-float64(100*amount.Coin)
	})
	fams = scrapeFaucet(t, ms.Addr().String())
	if v := metricValue(fams, "coin_faucet_claims_total", "outcome", "paid"); v != 1 {
		t.Errorf("paid claims %v", v)
	}
	if v := metricValue(fams, "coin_faucet_claims_total", "outcome", faucet.CodeAddressRateLimited); v != 1 {
		t.Errorf("rate-limited claims %v", v)
	}
	total := 0.0
	for _, mt := range fams["coin_faucet_claims_total"].GetMetric() {
		total += mt.GetCounter().GetValue()
	}
	if total != 3 {
		t.Errorf("claims counted %v, want 3: %v", total, fams["coin_faucet_claims_total"])
	}
	if v := metricValue(fams, "coin_faucet_http_request_duration_seconds", "route", "/api/faucet", "code", "200"); v != 1 {
		t.Errorf("/api/faucet 200 observations %v", v)
	}
	if v := metricValue(fams, "coin_faucet_http_request_duration_seconds", "route", "/api/status"); v != 1 {
		t.Errorf("/api/status observations %v", v)
	}
	if v := metricValue(fams, "coin_faucet_http_request_duration_seconds", "route", "other", "code", "404"); v != 2 {
		t.Errorf("unknown paths %v (one label for both)", v)
	}
	if f := fams["coin_faucet_http_request_duration_seconds"]; f.GetType() != dto.MetricType_HISTOGRAM {
		t.Errorf("type %v", f.GetType())
	}
	if v := metricValue(fams, "coin_faucet_claims_paid"); v != 1 {
		t.Errorf("claims_paid %v", v)
	}
}
