package proxy

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/x402"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func newRawServer(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	rawServersMu.Lock()
	rawServers[srv.URL] = srv
	rawServersMu.Unlock()
	return srv.URL
}

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// listedSanctions is a loaded sanctions list holding the given addresses (the real list's interface; the
// real OFAC data is the screening package's to test).
type listedSanctions struct{ addrs []string }

func (s listedSanctions) ScreenAddress(a string) []screening.SanctionsMatch {
	for _, x := range s.addrs {
		if x402.SameAddress(x, a) {
			return []screening.SanctionsMatch{{UID: 1, Name: "LISTED ENTITY", Score: 1, Address: x}}
		}
	}
	return nil
}
func (listedSanctions) ScreenName(string) screening.NameResult { return screening.NameResult{} }
func (listedSanctions) DataAsOf() time.Time                    { return time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC) }
func (listedSanctions) Ready() bool                            { return true }

// closeRaw stops the server newRawServer started at url (its cleanup then does nothing more).
func closeRaw(url string) {
	rawServersMu.Lock()
	defer rawServersMu.Unlock()
	if s := rawServers[url]; s != nil {
		s.Close()
	}
}

var (
	rawServersMu sync.Mutex
	rawServers   = map[string]*httptest.Server{}
)
