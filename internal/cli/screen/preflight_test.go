package screen

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/internal/cli"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/screening/domain"
	"github.com/payguard/payguard/screening/screeningtest"
)

const cliPayee = "0x1111111111111111111111111111111111111111"

var cliInput = `{"challenge":{"x402Version":2,"resource":{"url":"https://api.shop.example/x"},"accepts":[` +
	`{"scheme":"exact","network":"eip155:8453","amount":"20000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"` + cliPayee + `","maxTimeoutSeconds":300},` +
	`{"scheme":"exact","network":"eip155:8453","amount":"10000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"` + cliPayee + `","maxTimeoutSeconds":300}]}}`

// runPreflightCmd runs `payguard preflight ARGS` with stdin and returns the exit code and stdout.
func runPreflightCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Preflight.Run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

type cliResult struct {
	Decision string   `json:"decision"`
	Reasons  []string `json:"reasons"`
}

func decodeResult(t *testing.T, out string) cliResult {
	t.Helper()
	var r cliResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	return r
}

func TestPreflightDomainHook(t *testing.T) {
	saved := newDomainChecker
	defer func() { newDomainChecker = saved }()
	calls := 0
	newDomainChecker = func(config.DomainConfig) screening.Domains {
		calls++
		// Every domain is two days old.
		return &screeningtest.Domains{Unknown: func(d string) screening.DomainFacts {
			reg := time.Now().Add(-50 * time.Hour)
			return screening.DomainFacts{Domain: d, Valid: true, RegisteredAt: &reg}
		}}
	}
	rules := filepath.Join(t.TempDir(), "r.json")
	os.WriteFile(rules, []byte(`{"screen_sanctions": false}`), 0o644)
	_, out, _ := runPreflightCmd(t, cliInput, "--rules", rules)
	if r := decodeResult(t, out); r.Decision != "hold" || r.Reasons[0] != "hold: domain registered 2 days ago (< 30)" || calls != 1 {
		t.Fatalf("%+v (calls %d)", r, calls)
	}
	_, out, _ = runPreflightCmd(t, cliInput, "--offline", "--rules", rules)
	if r := decodeResult(t, out); r.Decision != "allow" || calls != 1 {
		t.Fatalf("--offline used the checker: %+v", r)
	}
}

func TestPreflightDomainHookIsSet(t *testing.T) {
	if newDomainChecker == nil {
		t.Fatal("the preflight hook is not set")
	}
	if _, ok := newDomainChecker(config.DomainConfig{}).(*domain.Checker); !ok {
		t.Fatalf("newDomainChecker returns %T", newDomainChecker(config.DomainConfig{}))
	}
}

// runPG runs one of this package's commands as `payguard WORD ARGS...` and returns the exit code, stdout
// and stderr.
func runPG(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	c, ok := map[string]cli.Command{"check": Check, "preflight": Preflight, "sdn": SDN}[args[0]]
	if !ok {
		t.Fatalf("no command %q here", args[0])
	}
	var out, errb bytes.Buffer
	code := c.Run(args[1:], strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}
