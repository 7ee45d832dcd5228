package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payguard/payguard/internal/testutil"
	"github.com/payguard/payguard/proxy/admin"
	"github.com/payguard/payguard/store/memory"
)

func openTestJournal(t *testing.T, maxBytes int64, maxFiles int) (*Journal, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "decisions.jsonl")
	j, err := OpenJournal(path, maxBytes, maxFiles)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j, path
}

func readJournal(t *testing.T, path string) []JournalEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []JournalEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		var e JournalEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("journal line: %v", err)
		}
		out = append(out, e)
	}
	return out
}

func verifyEntry(e JournalEntry, jwks []byte) error { return VerifyJournalEntry(e, jwks) }

// A journal of allowed, held and blocked decisions verifies offline, line by line, with the receipts package
// and the public keys alone; a line altered afterwards does not.
func TestJournalVerifiesOffline(t *testing.T) {
	f := newAgentFixture(t)
	j, path := openTestJournal(t, 1<<20, 2)
	rules := testRules()
	rules.DailyCapUSD = 2 * 10_000
	rs := f.ruleSet(RuleSetConfig{Hash: "cfg", Rules: rules})
	p := f.proxy(memory.New(), rs, func(o *Options) { o.Journal = j })
	var got []string
	for range 3 { // allow, allow, block (daily cap)
		got = append(got, decideAs(p, DefaultAgent).Decision)
	}
	sanctioned := strings.Replace(benchChallenge, "0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E", sanctionedPayTo, 1)
	got = append(got, p.decide(context.Background(), http.MethodGet, cent402URL, mustParse(sanctioned), true).Decision)
	if strings.Join(got, ",") != "allow,allow,block,block" {
		t.Fatalf("decisions %v", got)
	}
	j.Close()
	jwks, err := f.keys.PublicJWKS()
	if err != nil {
		t.Fatal(err)
	}
	entries := readJournal(t, path)
	if len(entries) != 4 {
		t.Fatalf("%d journal lines, want 4", len(entries))
	}
	for i, e := range entries {
		if err := verifyEntry(e, jwks); err != nil {
			t.Errorf("line %d (%s): %v", i, e.Decision, err)
		}
	}
	// Tampering is seen: a decision flipped, an input edited.
	flipped := entries[2]
	flipped.Result = []byte(strings.Replace(string(flipped.Result), `"decision":"block"`, `"decision":"allow"`, 1))
	if verifyEntry(flipped, jwks) == nil {
		t.Error("a flipped decision verified")
	}
	edited := entries[0]
	edited.Input = []byte(strings.Replace(string(edited.Input), `"agent_id":"default"`, `"agent_id":"other"`, 1))
	if verifyEntry(edited, jwks) == nil {
		t.Error("an edited input verified")
	}
}

// The journal rotates at max_bytes and keeps max_files old files: its disk use is bounded.
func TestJournalRotatesBounded(t *testing.T) {
	j, path := openTestJournal(t, 4096, 2)
	big := JournalEntry{Agent: "a", Reasons: []string{strings.Repeat("r", 1500)}, Input: json.RawMessage(`{}`), Result: json.RawMessage(`{}`)}
	for range 20 {
		if err := j.Append(big); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	matches, _ := filepath.Glob(path + "*")
	if len(matches) != 3 {
		t.Errorf("files %v, want the journal and 2 rotated", matches)
	}
	for _, m := range matches {
		if st, _ := os.Stat(m); st.Size() > 4096 {
			t.Errorf("%s is %d bytes, above max_bytes", m, st.Size())
		}
	}
}

// GET /v1/decisions filters by agent, host and decision and pages with a cursor, over rotated files too.
func TestDecisionsAPI(t *testing.T) {
	f := newAgentFixture(t)
	j, _ := openTestJournal(t, 8192, 5)
	rs := f.ruleSet(RuleSetConfig{Hash: "cfg", Rules: testRules(), Agents: []AgentConfig{{ID: "research", SecretSHA256: secretHash("x")}}})
	p := f.proxy(memory.New(), rs, func(o *Options) { o.Journal = j })
	for i := range 12 {
		a := DefaultAgent
		if i%3 == 0 {
			a = "research"
		}
		decideAs(p, a)
	}
	admin := httptest.NewServer(adminFor(p, admin.Options{Token: testToken}))
	defer admin.Close()
	// decisionsPage is GET /v1/decisions's body (proxy/admin/decisions.go): journal lines.
	type decisionsPage struct {
		Decisions  []JournalEntry `json:"decisions"`
		NextCursor string         `json:"next_cursor,omitempty"`
	}
	get := func(q string) (int, decisionsPage) {
		req, _ := http.NewRequest(http.MethodGet, admin.URL+"/v1/decisions?"+q, nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var page decisionsPage
		json.NewDecoder(resp.Body).Decode(&page)
		return resp.StatusCode, page
	}
	if code, page := get("agent=research"); code != 200 || len(page.Decisions) != 4 {
		t.Fatalf("agent filter: %d, %d entries", code, len(page.Decisions))
	}
	seen := map[string]bool{}
	cursor, pages := "", 0
	for {
		code, page := get("limit=5&host=127.0.0.1&decision=allow&cursor=" + cursor)
		if code != 200 {
			t.Fatalf("page: %d", code)
		}
		for _, e := range page.Decisions {
			if seen[e.ReceiptID] {
				t.Errorf("receipt %s on two pages", e.ReceiptID)
			}
			seen[e.ReceiptID] = true
		}
		pages++
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if len(seen) != 12 || pages != 3 {
		t.Errorf("%d entries on %d pages, want 12 on 3", len(seen), pages)
	}
	if code, page := get("decision=block"); code != 200 || len(page.Decisions) != 0 {
		t.Errorf("decision filter: %d %d", code, len(page.Decisions))
	}
	for _, q := range []string{"limit=0", "since=yesterday", "decision=maybe", "cursor=nope"} {
		if code, _ := get(q); code != 400 {
			t.Errorf("%s: %d, want 400", q, code)
		}
	}
	// The decide-only token and no token cannot read it.
	req, _ := http.NewRequest(http.MethodGet, admin.URL+"/v1/decisions", nil)
	if resp, _ := http.DefaultClient.Do(req); resp.StatusCode != 401 {
		t.Errorf("no token: %d", resp.StatusCode)
	}
}

// A reload under concurrent load never mixes rule sets: rule set A blocks the one-cent payment (its maximum
// is half a cent), rule set B allows it, and every decision's recorded config hash matches its outcome
// while the two are swapped back and forth under 8 deciding goroutines. A bad rule set is refused and the
// active one stays.
func TestReloadUnderLoadNeverMixes(t *testing.T) {
	f := newAgentFixture(t)
	j, path := openTestJournal(t, 64<<20, 1)
	strict := testRules()
	strict.MaxPerPaymentUSD = 5_000
	strict.DailyCapUSD = 1 << 50
	loose := testRules()
	loose.DailyCapUSD = 1 << 50
	a := f.ruleSet(RuleSetConfig{Hash: "A", Rules: strict})
	b := f.ruleSet(RuleSetConfig{Hash: "B", Rules: loose})
	var next atomic.Int64
	p := f.proxy(memory.New(), a, func(o *Options) {
		o.Journal = j
		o.Reloader = func() (*RuleSet, error) {
			if next.Add(1)%2 == 1 {
				return b, nil
			}
			return a, nil
		}
	})
	stop := make(chan struct{})
	var decided atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					// Without a ticket: an unpaid ticket per decision would soon meet the per-site bound (unpaid.go).
					p.decide(context.Background(), http.MethodGet, cent402URL, mustParse(benchChallenge), false)
					decided.Add(1)
				}
			}
		}()
	}
	for range 200 {
		if _, err := p.ReloadNow(); err != nil {
			t.Fatal(err)
		}
		// Let some decisions run under each rule set (progress, not time: a few decisions per swap).
		n := decided.Load()
		testutil.Eventually(t, 10*time.Second, func() bool { return decided.Load() >= n+3 }, "three decisions under the new rule set")
	}
	close(stop)
	wg.Wait()
	j.Close()
	entries := readJournal(t, path)
	byHash := map[string]int{}
	for _, e := range entries {
		byHash[e.ConfigSHA256]++
		want := map[string]string{"A": block, "B": allow}[e.ConfigSHA256]
		if e.Decision != want || !strings.Contains(string(e.Input), `"config_sha256":"`+e.ConfigSHA256+`"`) {
			t.Fatalf("mixed rule sets: hash %s decided %s (input %s)", e.ConfigSHA256, e.Decision, e.Input)
		}
	}
	if byHash["A"] == 0 || byHash["B"] == 0 {
		t.Errorf("both rule sets should have decided something: %v", byHash)
	}

	// A bad configuration is refused and the active rules stay.
	before := p.ActiveConfigHash()
	p.opts.Reloader = func() (*RuleSet, error) {
		return NewRuleSet(RuleSetConfig{Hash: "bad", Rules: strict, Mode: "loud"}, nil, f.engine)
	}
	admin := httptest.NewServer(adminFor(p, admin.Options{Token: testToken}))
	defer admin.Close()
	req, _ := http.NewRequest(http.MethodPost, admin.URL+"/v1/reload", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnprocessableEntity || p.ActiveConfigHash() != before {
		t.Errorf("bad reload: %d, active %s (was %s)", resp.StatusCode, p.ActiveConfigHash(), before)
	}
	noToken, _ := http.NewRequest(http.MethodPost, admin.URL+"/v1/reload", nil)
	if resp, _ := http.DefaultClient.Do(noToken); resp.StatusCode != 401 {
		t.Errorf("reload without a token: %d", resp.StatusCode)
	}
	_ = time.Now
}
