package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// findBrowser is the Chromium or Chrome to drive: $COIN_BROWSER, else the first of the
// usual names on PATH (as coin-faucetd's TestWebPages).
func findBrowser() string {
	if p := os.Getenv("COIN_BROWSER"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestLiveUpdates runs static/live.js in headless Chromium against the pages over a fake
// API whose event stream sends one score_changed event: the profile's score and tier change
// in place (the tier's class with its word), the event is listed, and the footer says live
// updates are on. Without the stream (404) the footer says they are not available.
func TestLiveUpdates(t *testing.T) {
	browser := findBrowser()
	if browser == "" {
		if os.Getenv("COIN_REQUIRE_BROWSER") != "" {
			t.Fatal("COIN_REQUIRE_BROWSER is set but no browser was found: install Debian's chromium or set COIN_BROWSER")
		}
		t.Skip("no Chromium or Chrome on PATH (install Debian's chromium, or set COIN_BROWSER); set COIN_REQUIRE_BROWSER=1 to fail instead")
	}
	f := &fakeAPI{total: 3}
	send := make(chan struct{})
	var noEvents atomic.Bool
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != EventsPath || noEvents.Load() {
			f.ServeHTTP(w, r)
			return
		}
		if r.URL.Query().Get("address") != addrA {
			http.Error(w, "wrong filter "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = fmt.Fprint(w, ": hello\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-send:
		case <-r.Context().Done():
			return
		}
		f.mu.Lock()
		f.score, f.tier = 702, "trusted"
		f.mu.Unlock()
		_, _ = fmt.Fprintf(w, "id: 7\nevent: score_changed\ndata: {\"id\":7,\"type\":\"score_changed\",\"status\":\"pending\",\"address\":%q,\"old_score\":612,\"new_score\":702,\"tier\":\"trusted\"}\n\n", addrA)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	srv := httptest.NewServer(New(api, f, Options{Network: "regtest", Caller: testCaller}))
	defer srv.Close()

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true))...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, time.Minute)
	defer cancelTimeout()

	// waitText polls a selector's text until it holds want.
	waitText := func(sel chromedp.CSS, want string) string {
		t.Helper()
		var got string
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ""`, string(sel))))
			if err != nil {
				t.Fatal(err)
			}
			if got = strings.TrimSpace(s); strings.Contains(got, want) {
				return got
			}
		}
		t.Fatalf("%s: %q, want %q", sel, got, want)
		return ""
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+AgentsPath+"/"+addrA)); err != nil {
		t.Fatal(err)
	}
	waitText("#live", "Live updates: on.")
	waitText(`[data-field="conduct_score"]`, "612")
	close(send)
	waitText(`[data-field="conduct_score"]`, "702")
	waitText(`[data-field="tier"]`, "trusted")
	class, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-field="tier"]').className`))
	if err != nil || class != "tier tier-trusted" {
		t.Fatalf("tier class %q %v", class, err)
	}
	waitText("#activity-list", "score 612 → 702 (trusted) (pending)")
	if hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById('activity').hidden`)); err != nil || hidden {
		t.Fatalf("activity list hidden: %v %v", hidden, err)
	}
	waitText("#live", "Live updates: on (updated")

	// No stream: the script says so and the page stays as rendered.
	noEvents.Store(true)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+AgentsPath+"/"+addrA)); err != nil {
		t.Fatal(err)
	}
	waitText("#live", "Live updates: not available on this server")
	waitText(`[data-field="conduct_score"]`, "702")
}
