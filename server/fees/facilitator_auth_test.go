package fees

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// The credentials header goes to the facilitator on every request, follows a redirect within it, and never
// follows one elsewhere (a custom header name, which net/http itself would copy to any host).
func TestFacilitatorAuthHeaderStaysWithTheFacilitator(t *testing.T) {
	const name, secret = "X-Api-Key", "k-Zq8v3N0tS3cr3t"
	var mu sync.Mutex
	seen := map[string]string{}
	record := func(who string, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen[who+" "+r.URL.Path] = r.Header.Get(name)
	}
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record("elsewhere", r)
		w.Write([]byte(`{"kinds":[]}`))
	}))
	defer elsewhere.Close()
	fac := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record("facilitator", r)
		switch r.URL.Path {
		case "/supported":
			http.Redirect(w, r, "/supported-here", http.StatusTemporaryRedirect)
		case "/supported-here":
			http.Redirect(w, r, elsewhere.URL+"/supported", http.StatusTemporaryRedirect)
		}
	}))
	defer fac.Close()
	f := NewFacilitator(fac.URL, nil, time.Second, time.Second).WithAuth(name, secret)
	if _, err := f.GetSupported(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string]string{"facilitator /supported": secret, "facilitator /supported-here": secret, "elsewhere /supported": ""}
	for k, v := range want {
		if got, ok := seen[k]; !ok || got != v {
			t.Errorf("%s carried %s %q (seen: %v), want %q", k, name, got, ok, v)
		}
	}
}
