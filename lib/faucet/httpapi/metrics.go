package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/faucet/payout"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics is the faucet's Prometheus metrics, which coin-faucetd serves on --metrics-bind
// (lib/metrics' Listen): claims by outcome, the faucet's balance and HTTP latency by route.
// It is fed by a middleware around the server's handler (Wrap), so the handlers themselves
// know nothing of it:
//
//   - coin_faucet_claims_total{outcome}: POST /api/faucet answers: "paid" for a 200, else
//     the error code of the answer (address_rate_limited, client_rate_limited,
//     budget_exhausted, invalid_address, ...), or http_STATUS when it has none;
//   - coin_faucet_balance_subunits and coin_faucet_immature_subunits: the engine's spendable
//     and immature funds, read at each scrape, and coin_faucet_claims_paid (the engine's
//     count since start) and coin_faucet_payouts_owed;
//   - coin_faucet_http_request_duration_seconds{route, code}: the route is the path of an
//     endpoint of the route table, /mcp, /.well-known, or "other" for any other path, so
//     that clients cannot grow the label set.
type Metrics struct {
	reg    *prometheus.Registry
	routes map[string]bool
	claims *prometheus.CounterVec
	http   *prometheus.HistogramVec
}

// NewMetrics registers the faucet's metrics of s, with the Go runtime's and the process's,
// in a new registry.
func NewMetrics(s *Server) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), routes: map[string]bool{},
		claims: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "coin", Subsystem: "faucet", Name: "claims_total",
			Help: "Answers to POST /api/faucet by outcome: paid, or the error code of the refusal."}, []string{"outcome"}),
		http: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "coin", Subsystem: "faucet", Name: "http_request_duration_seconds",
			Help:    "Time spent answering HTTP requests, by route and status code.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}, []string{"route", "code"}),
	}
	for _, rt := range s.routes {
		m.routes[rt.Path] = true
	}
	engine := s.cfg.Engine
	gauge := func(name, help string, f func(payout.Status) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "coin", Subsystem: "faucet", Name: name, Help: help},
			func() float64 { return f(engine.Status()) })
	}
	m.reg.MustRegister(m.claims, m.http,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		gauge("balance_subunits", "What the faucet can pay out (its mature outputs at their effective value), in subunits.",
			func(st payout.Status) float64 { return float64(st.Spendable) }),
		gauge("immature_subunits", "The faucet's coinbase outputs not yet spendable, in subunits.",
			func(st payout.Status) float64 { return float64(st.Immature) }),
		gauge("claims_paid", "Claims the engine paid since start.", func(st payout.Status) float64 { return float64(st.Paid) }),
		gauge("payouts_owed", "Journaled payouts not yet mined deep enough.", func(st payout.Status) float64 { return float64(st.Owed) }),
	)
	return m
}

// Registry is the registry to serve.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// route is the label of a request's path.
func (m *Metrics) route(path string) string {
	switch {
	case m.routes[path]:
		return path
	case path == "/mcp" || strings.HasPrefix(path, "/mcp/"):
		return "/mcp"
	case strings.HasPrefix(path, "/.well-known/"):
		return "/.well-known"
	}
	return "other"
}

// claimPath is the endpoint whose answers are counted as claims.
const claimPath = "/api/faucet"

// Wrap is h with the metrics' middleware: every request's duration by route and status,
// and the outcome of every claim.
func (m *Metrics) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		route := m.route(r.URL.Path)
		mw := &metricsWriter{ResponseWriter: w, keepBody: route == claimPath && r.Method == http.MethodPost}
		defer func() {
			status := mw.status
			if status == 0 {
				status = http.StatusOK
			}
			m.http.WithLabelValues(route, strconv.Itoa(status)).Observe(time.Since(start).Seconds())
			if mw.keepBody {
				m.claims.WithLabelValues(claimOutcome(status, mw.body.Bytes())).Inc()
			}
		}()
		h.ServeHTTP(mw, r)
	})
}

// claimOutcome is "paid" for a 200, else the error code of the body, else http_STATUS.
func claimOutcome(status int, body []byte) string {
	if status == http.StatusOK {
		return "paid"
	}
	var e api.ErrorBody
	if json.Unmarshal(body, &e) == nil && e.Error.Code != "" && len(e.Error.Code) <= 64 {
		return e.Error.Code
	}
	return "http_" + strconv.Itoa(status)
}

// metricsWriter records the status and, for claims, the first bytes of the body (an error
// object is small).
type metricsWriter struct {
	http.ResponseWriter
	status   int
	keepBody bool
	body     bytes.Buffer
}

func (w *metricsWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *metricsWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.keepBody && w.body.Len() < 4<<10 {
		w.body.Write(b[:min(len(b), 4<<10-w.body.Len())])
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes flushes on (the MCP endpoint streams).
func (w *metricsWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *metricsWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
