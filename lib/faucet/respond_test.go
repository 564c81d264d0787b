package faucet

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cointoolkit/coin/lib/rpcapi"
)

// A node whose connection is reset during a request: the faucet answers 502 with a code that
// says the node failed, not 500 internal.
func TestNodeConnectionResetIs502(t *testing.T) {
	rst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		_ = c.(*net.TCPConn).SetLinger(0) // close with RST
		c.Close()
	}))
	defer rst.Close()
	client := rpcapi.NewClient(rst.URL)
	defer client.Close()
	_, err := client.GetBlockCount(context.Background())
	if err == nil {
		t.Fatal("a reset connection answered")
	}
	s := &Service{log: slog.New(slog.DiscardHandler)}
	if e := s.toAPIError(err); e.Status() != http.StatusBadGateway || e.Code != CodeNodeConnectionLost {
		t.Fatalf("reset (%v): %d %s, want 502 %s", err, e.Status(), e.Code, CodeNodeConnectionLost)
	}
}
