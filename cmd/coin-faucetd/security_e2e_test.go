package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// The probes of docs/security.md, repeated against the real executables.

// openRawStream dials the faucet from the loopback address from, asks for the event
// stream, and returns the connection and the status code of the answer (0 when none came
// within wait: the connection is held, waiting to be accepted or answered).
func openRawStream(t *testing.T, url, from string, wait time.Duration) (net.Conn, int) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	conn, err := d.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatalf("dial from %s: %v", from, err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET /api/agent/events HTTP/1.1\r\nHost: faucet\r\nAccept: text/event-stream\r\n\r\n")
	if wait == 0 {
		return conn, 0
	}
	_ = conn.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	_ = conn.SetReadDeadline(time.Time{})
	if err != nil {
		return conn, 0
	}
	return conn, resp.StatusCode
}

// One client holds its share of event streams while ten other loopback addresses flood the
// faucet with stream requests they never close: the streams take at most three quarters of
// --max-connections, so /api/status from yet another client is still answered at once.
// Before the bound, the flood took every connection and /api/status waited for one.
func TestFaucetdStreamFloodLeavesSlots(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	_, f, _ := fundedFaucet(t, 1, "--max-connections", "32", "--max-streams-per-client", "4")
	for i := 0; i < 4; i++ {
		if _, code := openRawStream(t, f.url, "127.0.0.2", 5*time.Second); code != 200 {
			t.Fatalf("stream %d of the holder: %d, want 200", i+1, code)
		}
	}
	if _, code := openRawStream(t, f.url, "127.0.0.2", 5*time.Second); code != http.StatusTooManyRequests {
		t.Fatalf("a 5th stream of one client: %d, want 429", code)
	}
	// The flood: each connection waits up to 2 s for its answer and is then held open.
	var wg sync.WaitGroup
	for a := 3; a < 13; a++ {
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				openRawStream(t, f.url, fmt.Sprintf("127.0.0.%d", a), 2*time.Second)
			}()
		}
	}
	wg.Wait()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.200")}}
	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
	for i := 0; i < 5; i++ {
		start := time.Now()
		resp, err := client.Get(f.url + "/api/status")
		if err != nil {
			t.Fatalf("/api/status during the flood: %v", err)
		}
		resp.Body.Close()
		if took := time.Since(start); resp.StatusCode != 200 || took > time.Second {
			t.Fatalf("/api/status during the flood: %d in %v, want 200 at once", resp.StatusCode, took)
		}
	}
}
