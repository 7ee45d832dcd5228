package proxy

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/payguard/payguard/internal/logbuf"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/store/memory"
	"github.com/payguard/payguard/x402"
)

// downLedger is a store whose ledger and holds do not answer.
type downLedger struct{ *memory.Store }

var errDown = errors.New("ledger down")

func (downLedger) State(context.Context, string, string) (store.BudgetState, error) {
	return store.BudgetState{}, errDown
}
func (downLedger) ListHolds(context.Context, string) ([]store.Hold, error) { return nil, errDown }

// A ledger that does not answer is payguard_ledger_up 0 and absent USD and hold gauges, never -1 values a
// sum or an alert would take for figures.
func TestLedgerDownHasNoSentinels(t *testing.T) {
	h := newHarness(t, downLedger{memory.New()}, testRules())
	code, out := h.api("GET", "/metrics", "", nil)
	if code != 200 {
		t.Fatalf("/metrics = %d", code)
	}
	text := string(out)
	if !strings.Contains(text, "payguard_ledger_up 0") {
		t.Error("no payguard_ledger_up 0")
	}
	for _, absent := range []string{"payguard_usd_spent_today ", "payguard_usd_reserved_today ", "payguard_holds_pending ", " -1\n"} {
		if strings.Contains(text, absent) {
			t.Errorf("/metrics has %q with the ledger down", absent)
		}
	}
}

// A block's decision line names the amount and the payee it refused, though it chose no option.
func TestBlockLogCarriesAmountAndPayTo(t *testing.T) {
	var logs logbuf.Buffer
	s := newSeller(t, x402.V2, false, offer(x402.V2, "eip155:84532", baseSepoliaUSDC, sanctionedPayTo, cent))
	h := newHarness(t, memory.New(), testRules(), func(su *setup) { su.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
	resp, body := h.buyer().get(s.url("/x"), nil)
	decodeRefusal(t, resp, body)
	line := logLine(t, &logs, "decision")
	if line["decision"] != "block" || line["pay_to"] != sanctionedPayTo || line["amount_usd"] != "0.01" ||
		line["amount_atomic"] != cent || line["network"] != "eip155:84532" {
		t.Errorf("block log line %v", line)
	}
}
