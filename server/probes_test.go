package server

import "testing"

// serve has the proxy's probes: /healthz is liveness (200 while it serves), /readyz readiness (503 until a
// sanctions list is loaded); /health stays as documented.
func TestProbes(t *testing.T) {
	e := newEnv(t)
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/health": 200} {
		if r := e.do("GET", path, nil, nil); r.StatusCode != want {
			t.Errorf("%s = %d, want %d: %s", path, r.StatusCode, want, r.body)
		}
	}
	e.sanctions.ready.Store(false)
	if r := e.do("GET", "/readyz", nil, nil); r.StatusCode != 503 || r.json(t)["status"] != "not ready" {
		t.Errorf("/readyz without sanctions = %d %s", r.StatusCode, r.body)
	}
	if r := e.do("GET", "/healthz", nil, nil); r.StatusCode != 200 {
		t.Errorf("/healthz without sanctions = %d (liveness does not depend on data)", r.StatusCode)
	}
}
