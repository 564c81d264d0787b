package rpcserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"

	"github.com/cointoolkit/coin/lib/rpcauth"
)

// Defaults of HTTPConfig.
const (
	// DefaultMaxConnections bounds the connections the listener holds open at once: room for
	// the faucet's and the wallet's keep-alive pools and many coin-cli calls, far below a
	// process's file descriptor limit.
	DefaultMaxConnections = 128
	// DefaultReadHeaderTimeout closes a connection that sends no complete request header in
	// time, so idle connections cannot hold the slots of the listener for long.
	DefaultReadHeaderTimeout = 5 * time.Second
	// DefaultIdleTimeout closes a keep-alive connection that sends no new request in time.
	DefaultIdleTimeout = 60 * time.Second
)

// HTTPConfig configures the node's RPC listener and who may call it (protocol §11).
type HTTPConfig struct {
	// Bind is the listen address, host:port.
	Bind string
	// AllowOrigins are the browser origins (scheme://host[:port]) whose requests are
	// served; a request with any other Origin header is refused with 403.
	AllowOrigins []string
	// AllowHosts are DNS names accepted as the Host header besides localhost and the bind
	// address (ParseAllowHost): the names clients in a private network call the node by.
	AllowHosts []string
	// Auth are the credentials accepted with HTTP Basic authentication. Empty: none asked,
	// which Listen allows only on a loopback address.
	Auth rpcauth.Entries
	// MaxConnections bounds the open connections; more wait in the kernel's accept queue.
	// Zero or less: DefaultMaxConnections.
	MaxConnections int
	// MaxStreams bounds the notification streams open at once (lib/node gives it to its
	// Notifier; zero or less: DefaultMaxStreams). Each stream holds one of the
	// MaxConnections.
	MaxStreams int
	// AuthFailureDelay is the pause before a 401. Zero: DefaultAuthFailureDelay; negative:
	// none.
	AuthFailureDelay time.Duration
	// ReadHeaderTimeout and IdleTimeout: zero means the defaults above.
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration
	Logger            *slog.Logger
}

// HTTPServer is the node's RPC listener with its access checks.
type HTTPServer struct {
	ln     net.Listener
	access *access
	srv    *http.Server
	log    *slog.Logger
}

// Listen opens the listener. It refuses (ErrNoAuth) an address that is not loopback unless
// credentials are configured, and checks the allowed origins. Serve then answers with the
// JSON-RPC handler.
func Listen(cfg HTTPConfig) (*HTTPServer, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = DefaultMaxConnections
	}
	if cfg.ReadHeaderTimeout <= 0 {
		cfg.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	for _, o := range cfg.AllowOrigins {
		if _, err := ParseOrigin(o); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", cfg.Bind)
	if err != nil {
		return nil, err
	}
	if !isLoopback(ln.Addr()) && len(cfg.Auth) == 0 {
		ln.Close()
		return nil, fmt.Errorf("%s (listening on %s): %w", cfg.Bind, ln.Addr(), ErrNoAuth)
	}
	a, err := newAccess(cfg, ln.Addr())
	if err != nil {
		ln.Close()
		return nil, err
	}
	s := &HTTPServer{ln: netutil.LimitListener(ln, cfg.MaxConnections), access: a, log: cfg.Logger}
	s.srv = &http.Server{Handler: a, ReadHeaderTimeout: cfg.ReadHeaderTimeout, ReadTimeout: 60 * time.Second,
		WriteTimeout: 120 * time.Second, IdleTimeout: cfg.IdleTimeout, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug)}
	return s, nil
}

func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// Addr is the address the server listens on.
func (s *HTTPServer) Addr() net.Addr { return s.ln.Addr() }

// Serve answers requests that pass the access checks with h until Shutdown or Close; it
// returns nil then.
func (s *HTTPServer) Serve(h http.Handler) error {
	s.access.next = h
	if err := s.srv.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops accepting and waits, until ctx ends, for the requests being served.
func (s *HTTPServer) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	s.ln.Close() // a server that never served still holds its listener
	return err
}

// Close closes the listener and every connection at once.
func (s *HTTPServer) Close() error {
	err := s.srv.Close()
	s.ln.Close()
	return err
}
