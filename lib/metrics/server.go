package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where the exposition is served.
const Path = "/metrics"

// Server serves one registry's metrics over HTTP at /metrics.
type Server struct {
	ln  net.Listener
	srv *http.Server
}

// BindAddr completes a --metrics-bind value: a bare port (":9332" or "9332") is bound on
// 127.0.0.1, so the loopback interface is the default.
func BindAddr(bind string) string {
	bind = strings.TrimSpace(bind)
	if !strings.Contains(bind, ":") {
		return net.JoinHostPort("127.0.0.1", bind)
	}
	if strings.HasPrefix(bind, ":") {
		return "127.0.0.1" + bind
	}
	return bind
}

// Listen opens the metrics listener on BindAddr(bind). A listener that is not loopback is
// logged as a warning: the metrics tell anyone who can reach them the node's state.
func Listen(bind string, reg *prometheus.Registry, log *slog.Logger) (*Server, error) {
	if bind == "" {
		return nil, errors.New("metrics: no bind address")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", BindAddr(bind))
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s: %w", bind, err)
	}
	if ta, ok := ln.Addr().(*net.TCPAddr); !ok || !ta.IP.IsLoopback() {
		log.Warn("--metrics-bind is not a loopback address: anyone who can reach it reads the metrics", "addr", ln.Addr().String())
	}
	mux := http.NewServeMux()
	mux.Handle(Path, promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg, MaxRequestsInFlight: 4, Timeout: 10 * time.Second}))
	return &Server{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 30 * time.Second}}, nil
}

// Addr is the listener's address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve answers until Shutdown; it returns nil then.
func (s *Server) Serve() error {
	if err := s.srv.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops the server, letting scrapes in progress finish until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

// Close stops the server at once (also before Serve).
func (s *Server) Close() error {
	err := s.srv.Close()
	s.ln.Close()
	return err
}
