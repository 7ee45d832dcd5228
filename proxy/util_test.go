package proxy

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

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
