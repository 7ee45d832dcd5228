package proxy

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/proxy/admin"
	"github.com/payguard/payguard/store/memory"
)

// Report (shadow) mode refuses nothing the rules refuse, and says so everywhere: a would-be block and a
// would-be hold (and a would-be agent cap block) go on as allowed with their amount recorded in the ledger
// (above the cap: the ledger is honest), no hold is made, and the log line, the metrics, the console's
// decisions, the journal (still verifiable offline) and /readyz name it. An enforcing agent beside it is
// still refused.
func TestShadowModeRefusesNothingAndSaysSo(t *testing.T) {
	f := newAgentFixture(t)
	j, path := openTestJournal(t, 1<<20, 2)
	strict := testRules()
	strict.MaxPerPaymentUSD = 5_000 // half a cent: the one-cent challenge is blocked
	holding := testRules()
	holding.HoldAboveUSD = 5_000 // held above half a cent
	rs := f.ruleSet(RuleSetConfig{Hash: "h", Rules: testRules(), Agents: []AgentConfig{
		{ID: "trial", SecretSHA256: secretHash("a"), Mode: ModeReport, Rules: &strict, DailyCapUSD: 15_000},
		{ID: "waiting", SecretSHA256: secretHash("b"), Mode: ModeReport, Rules: &holding},
		{ID: "enforced", SecretSHA256: secretHash("c"), Rules: &strict},
	}})
	var logs bytes.Buffer
	st := memory.New()
	p := f.proxy(st, rs, func(o *Options) {
		o.Journal = j
		o.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	for i, want := range []string{"would_block", "would_block", "would_block"} { // the third is also over trial's cap
		v := decideAs(p, "trial")
		if v.Decision != allow || v.Shadow != want || v.Release == nil || v.Result.Decision != block {
			t.Fatalf("trial #%d: %s shadow %q release %v result %s %v", i, v.Decision, v.Shadow, v.Release, v.Result.Decision, v.Reasons)
		}
		p.logDecision("challenge", httptest.NewRequest(http.MethodGet, cent402URL, nil), v, time.Now())
	}
	if v := decideAs(p, "waiting"); v.Decision != allow || v.Shadow != "would_hold" || v.Hold != nil {
		t.Fatalf("waiting: %s shadow %q hold %v", v.Decision, v.Shadow, v.Hold)
	}
	if v := decideAs(p, "enforced"); v.Decision != block || v.Shadow != "" {
		t.Fatalf("enforced: %s shadow %q", v.Decision, v.Shadow)
	}
	if holds, _ := st.ListHolds(context.Background(), ""); len(holds) != 0 {
		t.Errorf("report mode made %d holds", len(holds))
	}
	day := time.Now().UTC().Format("2006-01-02")
	a, _ := st.State(context.Background(), p.agentBudget("trial"), day)
	g, _ := st.State(context.Background(), "default", day)
	if a.Reserved != 30_000 || g.Reserved != 40_000 {
		t.Errorf("ledger: trial %+v (want 3 cents, above its 1.5-cent cap), global %+v (want 4 cents)", a, g)
	}
	if !strings.Contains(logs.String(), `"shadow":"would_block"`) || !strings.Contains(logs.String(), `"agent":"trial"`) {
		t.Errorf("log lines do not say would_block: %s", logs.String())
	}
	if n := counterValue(t, p.metrics.agentDecisions.WithLabelValues("trial", "would_block")); n != 3 {
		t.Errorf("payguard_agent_decisions_total{agent=trial,outcome=would_block} = %v", n)
	}
	shown := false
	for _, d := range p.recent.list() {
		shown = shown || d.Decision == "would_block" && d.Agent == "trial"
	}
	if !shown {
		t.Errorf("the console's decisions do not show trial's would_block: %+v", p.recent.list())
	}
	admin := httptest.NewServer(adminFor(p, admin.Options{Token: testToken}))
	defer admin.Close()
	resp, err := http.Get(admin.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"report_agents":["trial","waiting"]`) || !strings.Contains(string(body), "NOT enforced") {
		t.Errorf("/readyz: %s", body)
	}
	m, _ := http.Get(admin.URL + "/metrics")
	mb, _ := io.ReadAll(m.Body)
	m.Body.Close()
	if !strings.Contains(string(mb), "payguard_report_mode_agents 2") || !strings.Contains(string(mb), "payguard_report_mode 0") {
		t.Errorf("report-mode gauges missing")
	}
	j.Close()
	jwks, _ := f.keys.PublicJWKS()
	entries := readJournal(t, path)
	shadows := 0
	for i, e := range entries {
		if err := VerifyJournalEntry(e, jwks); err != nil {
			t.Errorf("journal line %d: %v", i, err)
		}
		if e.Shadow != "" {
			shadows++
		}
	}
	if shadows != 4 {
		t.Errorf("%d journal lines marked shadow, want 4", shadows)
	}
}

// Globally in report mode, an intercepted 402 the rules block reaches the agent narrowed to the judged
// option, with X-Payguard-Shadow; its paid retry is released on the ticket, and the settlement commits it.
func TestShadowModeChallengeGoesThrough(t *testing.T) {
	f := newAgentFixture(t)
	strict := testRules()
	strict.MaxPerPaymentUSD = 5_000
	rs := f.ruleSet(RuleSetConfig{Hash: "h", Rules: strict, Mode: ModeReport})
	st := memory.New()
	p := f.proxy(st, rs, nil)
	out := guard402(p, cent402URL, normalChallenge(), "{}")
	if out.StatusCode != http.StatusPaymentRequired || out.Header.Get(HeaderDecision) != allow || out.Header.Get(ShadowHeader) != "would_block" {
		t.Fatalf("402 in report mode: %d %v", out.StatusCode, out.Header)
	}
	key, _ := ticketKey(http.MethodGet, cent402URL, "exact", "eip155:84532", "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E", "10000")
	if tk, err := st.TakeTicket(context.Background(), key, time.Now()); err != nil || tk.AmountMicros != 10_000 {
		t.Errorf("the shadowed challenge's option has no ticket: %v %+v", err, tk)
	}
}
