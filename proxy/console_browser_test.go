package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// XSS payloads a seller controls: the URL it is reached at, the option's description, network and payee.
const (
	xssQuery       = `?q=<script>window.__xss='url'</script>`
	xssDescription = `<img src=x onerror="window.__xss='description'">"><script>window.__xss='description2'</script>`
	xssNetwork     = `<img src=x onerror="window.__xss='network'">`
	xssPayTo       = `<svg onload="window.__xss='payto'"></svg>`
)

// chromium starts Debian's headless Chromium (.ci/run installs it) with a fresh profile.
func chromium(t *testing.T) context.Context {
	t.Helper()
	path := os.Getenv("PAYGUARD_CHROMIUM")
	if path == "" {
		path = "chromium"
	}
	found, err := exec.LookPath(path)
	if err != nil {
		// CI must run this test (.ci/run installs Chromium), so a missing browser fails there; a developer's
		// machine without one skips with the reason printed on stderr, where `go test` always shows it.
		msg := fmt.Sprintf("the console's browser test needs Chromium (%q: %v); install it with "+
			"`apt-get install -y --no-install-recommends chromium` or set PAYGUARD_CHROMIUM", path, err)
		if chromiumRequired() {
			t.Fatal(msg)
		}
		fmt.Fprintln(os.Stderr, "SKIP TestConsoleInBrowser: "+msg+" (CI is unset; with CI=true this fails)")
		t.Skip(msg)
	}
	path = found
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
	}
	for _, f := range []string{"headless", "no-sandbox", "disable-gpu", "disable-quic", "no-first-run",
		"disable-background-networking", "disable-component-update", "disable-sync", "disable-dev-shm-usage"} {
		opts = append(opts, chromedp.Flag(f, true))
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return ctx
}

// chromiumRequired says whether a missing Chromium fails the test: in CI (CI set to anything but "" or
// "false", as every CI service sets it), the browser test is never skipped.
func chromiumRequired() bool {
	ci := strings.TrimSpace(os.Getenv("CI"))
	return ci != "" && !strings.EqualFold(ci, "false") && ci != "0"
}

// artifactDir is where the screenshots go: $PAYGUARD_ARTIFACTS_DIR (docs/approvals keeps the committed
// ones), else a temporary directory named in the log.
func artifactDir(t *testing.T) string {
	dir := os.Getenv("PAYGUARD_ARTIFACTS_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "payguard-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100: PNG
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}

func do(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// xssSeller is the harness seller behind a 402 that carries script in the option's description; a paid
// request goes to the seller itself, which verifies and settles it.
func xssSeller(t *testing.T, s *seller) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(x402.HeaderXPayment) != "" {
			s.ServeHTTP(w, r)
			return
		}
		pr := s.challenge(r, "X-PAYMENT header is required")
		for i := range pr.Accepts {
			pr.Accepts[i].Description = xssDescription
		}
		b, _ := json.Marshal(pr)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusPaymentRequired)
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The approver's whole path in a real browser: sign in with the token, see a hold that a real 402 through
// the proxy created appear without a reload, read what the seller wrote as text (its script never runs),
// approve it with a name and a note, and the agent's retry is paid. The token is never in a URL and the
// session cookie is not readable by script. Screenshots of the pending (desktop and phone) and resolved
// views are kept (docs/approvals.md).
func TestConsoleInBrowserApprovesHold(t *testing.T) {
	s := newSeller(t, x402.V1, false, offer(x402.V1, "base-sepolia", baseSepoliaUSDC, sellerPayTo, halfDollar))
	seller := xssSeller(t, s)
	blocked := newSeller(t, x402.V2, false, offer(x402.V2, xssNetwork, baseSepoliaUSDC, xssPayTo, "10000"))
	h := newHarness(t, memory.New(), testRules())
	b := h.buyer()
	ctx := chromium(t)
	dir := artifactDir(t)

	var mu sync.Mutex
	var urls []string
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			urls = append(urls, ev.Request.URL)
		case *page.EventFrameNavigated:
			urls = append(urls, ev.Frame.URL)
		}
	}); err != nil {
		t.Fatal(err)
	}

	// Sign in before any hold exists: the hold must appear live.
	do(t, ctx, "open the console", chromedp.EmulateViewport(1100, 900), chromedp.Navigate(h.admin.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#token")))
	do(t, ctx, "sign in", chromedp.SendKeys(chromedp.CSS("#token"), testToken),
		chromedp.Click(chromedp.CSS("#signin-form button[type=submit]")), chromedp.WaitVisible(chromedp.CSS("#pending-empty")))

	// A real 402 through the proxy: $0.50 is above hold_above_usd, so it is held (hold_wait 0: the agent
	// gets 403 with the hold id at once and gives up). A second seller's 402 names a script as its network
	// and is blocked; it shows in the last decisions.
	resp, body := b.get(seller.URL+"/report"+xssQuery, nil)
	id := resp.Header.Get(HeaderHold)
	if resp.StatusCode != http.StatusForbidden || id == "" {
		t.Fatalf("want a hold: %d %s", resp.StatusCode, body)
	}
	if resp, body := b.get(blocked.url("/x"), nil); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("want a block: %d %s", resp.StatusCode, body)
	}
	card := "#hold-" + id
	do(t, ctx, "the hold appears without a reload", chromedp.WaitVisible(chromedp.CSS(card+" button.approve")))
	text := eval[string](t, ctx, `document.querySelector("`+card+`").textContent`)
	for _, want := range []string{"$0.5", "<script>window.__xss='url'</script>", xssDescription, sellerPayTo, "hold: ", id} {
		if !strings.Contains(text, want) {
			t.Errorf("the pending card lacks %q: %s", want, text)
		}
	}
	do(t, ctx, "let the decisions table refresh", chromedp.WaitVisible(chromedp.CSS("#decisions tbody tr:nth-child(2)")))
	rows := eval[string](t, ctx, `document.querySelector("#decisions tbody").textContent`)
	for _, want := range []string{xssNetwork, xssPayTo} {
		if !strings.Contains(rows, want) {
			t.Errorf("the last decisions lack the blocked seller's %q as text: %s", want, rows)
		}
	}
	screenshot(t, ctx, dir, "console-pending.png")
	do(t, ctx, "phone view", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch),
		chromedp.WaitVisible(chromedp.CSS(card+" button.approve")))
	screenshot(t, ctx, dir, "console-pending-phone.png")
	if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("the phone view scrolls sideways: %d px wide in a 390 px viewport", w)
	}
	do(t, ctx, "desktop view", chromedp.EmulateViewport(1100, 900))

	// Approve with a name and a note.
	do(t, ctx, "approve", chromedp.SendKeys(chromedp.CSS(card+` input[aria-label="your name"]`), "alice"),
		chromedp.SendKeys(chromedp.CSS(card+` input[aria-label="note"]`), "known vendor"),
		chromedp.Click(chromedp.CSS(card+" button.approve")),
		chromedp.WaitVisible(chromedp.CSS(`#history [data-hold="`+id+`"][data-status="approved"]`)))

	// The agent's retry of the same request is released once, though its first connection gave up.
	ex := b.pay(seller.URL+"/report"+xssQuery, nil)
	if ex.first.StatusCode != http.StatusPaymentRequired || ex.paid == nil || ex.paid.StatusCode != 200 || s.paid.Load() != 1 {
		t.Fatalf("the agent's payment after approval: first %d, paid %v, seller paid %d", ex.first.StatusCode, ex.paid, s.paid.Load())
	}
	do(t, ctx, "the hold shows as used", chromedp.WaitVisible(chromedp.CSS(`#history [data-hold="`+id+`"][data-status="used"]`)))
	screenshot(t, ctx, dir, "console-resolved.png")
	hist := eval[string](t, ctx, `document.querySelector('#history [data-hold="`+id+`"]').textContent`)
	if !strings.Contains(hist, "alice") || !strings.Contains(hist, "known vendor") {
		t.Errorf("history lacks who and the note: %s", hist)
	}

	// Nothing the sellers wrote ran or became markup.
	if v := eval[string](t, ctx, `String(window.__xss)`); v != "undefined" {
		t.Errorf("seller script ran: window.__xss = %s", v)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("img, svg, main script, iframe").length`); n != 0 {
		t.Errorf("%d elements were injected from seller text", n)
	}
	if c := eval[string](t, ctx, `document.cookie`); c != "" {
		t.Errorf("script can read cookies: %q", c)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(urls) == 0 {
		t.Fatal("no requests seen")
	}
	for _, u := range urls {
		if strings.Contains(u, testToken) {
			t.Errorf("the admin token is in a URL: %s", u)
		}
	}
	fmt.Fprintf(os.Stderr, "console browser test: %d requests, none with the token\n", len(urls))
}

// What a person sees is what they approve, in a real browser: the seller's v2 resource.description, the
// network and asset by name with the raw values beside them, the last 50 decisions (the proxy keeps 50),
// a long path that wraps at its separators and never inside a segment, and the hold's row in the last
// decisions saying "approved" once it is. On the previous main the v2 description was missing, the raw
// CAIP-2 id and address stood alone, 20 rows were listed, paths broke anywhere and the row said "hold".
func TestConsoleShowsWhatIsApproved(t *testing.T) {
	const longPath = "/v1/forecasts/europe/portugal/lisbon/hourly-detailed-report/2026-11-27/extended?units=metric&lang=en"
	held := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, halfDollar))
	cheap := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sellerPayTo, "10000"))
	h := newHarness(t, memory.New(), testRules())
	b := h.buyer()
	for i := range 60 {
		if resp, body := b.get(cheap.url(fmt.Sprintf("/cheap/%d", i)), nil); resp.StatusCode != http.StatusPaymentRequired {
			t.Fatalf("cheap request %d: %d %s", i, resp.StatusCode, body)
		}
	}
	resp, body := b.get(held.url(longPath), nil)
	id := resp.Header.Get(HeaderHold)
	if resp.StatusCode != http.StatusForbidden || id == "" {
		t.Fatalf("want a hold: %d %s", resp.StatusCode, body)
	}
	ctx := chromium(t)
	card := "#hold-" + id
	do(t, ctx, "sign in", chromedp.EmulateViewport(1100, 900), chromedp.Navigate(h.admin.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#token")), chromedp.SendKeys(chromedp.CSS("#token"), testToken),
		chromedp.Click(chromedp.CSS("#signin-form button[type=submit]")), chromedp.WaitVisible(chromedp.CSS(card+" button.approve")))
	text := eval[string](t, ctx, `document.querySelector("`+card+`").textContent`)
	for _, want := range []string{"Weather report", "Base Sepolia (eip155:84532)", "USDC (" + baseSepoliaUSDC + ")",
		"500000 USDC", longPath} {
		if !strings.Contains(text, want) {
			t.Errorf("the pending card lacks %q: %s", want, text)
		}
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#decisions tbody tr").length`); n != 50 {
		t.Errorf("the last decisions list %d rows, want 50", n)
	}

	// On a phone the path wraps, at separators only: no segment between two separators is split.
	do(t, ctx, "phone view", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch),
		chromedp.WaitVisible(chromedp.CSS(card+" button.approve")))
	for _, sel := range []string{card + " .url .path", `#decisions tbody tr[data-hold="` + id + `"] .path`} {
		wrap := eval[string](t, ctx, `(() => {
			const p = document.querySelector(`+"`"+sel+"`"+`);
			if (!p) return "no .path element";
			let split = 0; const tops = new Set();
			for (const n of p.childNodes) {
				if (n.nodeType !== Node.TEXT_NODE) continue;
				const r = document.createRange(); r.selectNodeContents(n);
				const rects = [...r.getClientRects()].filter((x) => x.width > 0);
				if (rects.length > 1) split++;
				rects.forEach((x) => tops.add(Math.round(x.top)));
			}
			return "split " + split + " lines " + tops.size + " text " + (p.textContent.includes("lisbon/hourly") ? "ok" : "changed");
		})()`)
		var split, lines int
		var txt string
		if _, err := fmt.Sscanf(wrap, "split %d lines %d text %s", &split, &lines, &txt); err != nil || split != 0 || txt != "ok" ||
			(strings.HasPrefix(sel, card) && lines < 2) {
			t.Errorf("%s on a phone: %s (want no split segment, several lines, the text unchanged)", sel, wrap)
		}
	}
	screenshot(t, ctx, artifactDir(t), "console-long-path-phone.png")
	do(t, ctx, "desktop view", chromedp.EmulateViewport(1100, 900))

	// Approve: the hold's row in the last decisions says approved.
	do(t, ctx, "approve", chromedp.SendKeys(chromedp.CSS(card+` input[aria-label="your name"]`), "alice"),
		chromedp.Click(chromedp.CSS(card+" button.approve")),
		chromedp.WaitVisible(chromedp.CSS(`#decisions tbody tr[data-hold="`+id+`"][data-outcome="approved"]`)))
	row := eval[string](t, ctx, `document.querySelector('#decisions tbody tr[data-hold="`+id+`"]').textContent`)
	if !strings.Contains(row, "approved") {
		t.Errorf("the approved hold's row: %s", row)
	}
}
