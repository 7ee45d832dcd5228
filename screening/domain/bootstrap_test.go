package domain

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/screening/domain/domaintest"
)

func TestEmbeddedBootstrap(t *testing.T) {
	b := mustEmbeddedBootstrap()
	if want := time.Date(2026, 3, 23, 19, 0, 2, 0, time.UTC); !b.publication.Equal(want) {
		t.Errorf("publication %v, want %v", b.publication, want)
	}
	tests := []struct{ domain, base string }{
		{"example.com", "https://rdap.verisign.com/com/v1/"},
		{"example.net", "https://rdap.verisign.com/net/v1/"},
		{"foo.dev", "https://pubapi.registry.google/rdap/"},
		{"nic.cz", "https://rdap.nic.cz/"},
		{"b.co.uk", "https://rdap.nominet.uk/uk/"},
	}
	for _, tt := range tests {
		urls := b.lookup(tt.domain)
		if len(urls) == 0 || urls[0] != tt.base {
			t.Errorf("lookup(%s) = %v, want %s", tt.domain, urls, tt.base)
		}
	}
	// .kg is listed only with an http URL: not used, so the age stays unknown rather than spoofable.
	if urls := b.lookup("shop.kg"); urls != nil {
		t.Errorf("lookup(shop.kg) = %v, want none (http only)", urls)
	}
	if urls := b.lookup("example.notatld"); urls != nil {
		t.Errorf("lookup(example.notatld) = %v, want none", urls)
	}
}

func TestBootstrapLongestMatch(t *testing.T) {
	b, err := parseBootstrap([]byte(`{"publication":"2026-01-01T00:00:00Z","services":[
		[["uk"],["https://uk.example/"]],
		[["co.uk"],["http://plain.example/","https://co-uk.example"]]]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := b.lookup("shop.co.uk"); len(got) != 1 || got[0] != "https://co-uk.example/" {
		t.Errorf("lookup(shop.co.uk) = %v", got)
	}
	if got := b.lookup("shop.org.uk"); len(got) != 1 || got[0] != "https://uk.example/" {
		t.Errorf("lookup(shop.org.uk) = %v", got)
	}
}

func TestParseBootstrapRejects(t *testing.T) {
	for _, body := range []string{
		`not json`,
		`{"services":[]}`,
		`{"services":[[["com"],["http://only-plain.example/"]]]}`,
		`{"services":[[["com"]]]}`,
		`{"publication":"yesterday","services":[[["com"],["https://x.example/"]]]}`,
	} {
		if _, err := parseBootstrap([]byte(body)); err == nil {
			t.Errorf("parseBootstrap(%s) accepted", body)
		}
	}
}

func TestRefreshBootstrap(t *testing.T) {
	// One TLS server plays IANA (/dns.json) and a registry (/rdap/...): the bootstrap keeps https only.
	rdap := domaintest.NewRDAPServer(t)
	dnsSrv := domaintest.NewDNSServer(t, domaintest.DefaultZone())
	var status int
	var body string
	mux := http.NewServeMux()
	mux.HandleFunc("/dns.json", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		w.Write([]byte(body))
	})
	mux.Handle("/rdap/", http.StripPrefix("/rdap", rdap.Config.Handler))
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)

	c := New(Options{
		BootstrapURL: srv.URL + "/dns.json",
		Resolver:     dnsSrv.Addr,
		Transport:    srv.Client().Transport,
		RDAPTimeout:  10 * time.Second,
		Now:          func() time.Time { return testNow },
	})
	embedded := c.BootstrapPublication()
	ctx := context.Background()

	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{http.StatusOK, "garbage", "rdap bootstrap"},
		{http.StatusInternalServerError, "{}", "500"},
		{http.StatusOK, `{"publication":"2020-01-01T00:00:00Z","services":[[["com"],["https://x.example/"]]]}`, "older"},
	} {
		status, body = tc.status, tc.body
		err := c.RefreshBootstrap(ctx)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("refresh with %d %q: error %v, want %q", tc.status, tc.body, err, tc.want)
		}
		if !c.BootstrapPublication().Equal(embedded) {
			t.Fatalf("a failed refresh replaced the embedded bootstrap")
		}
	}

	status, body = http.StatusOK, `{"publication":"2026-10-01T00:00:00Z","services":[[["com"],["`+srv.URL+`/rdap/"]]]}`
	if err := c.RefreshBootstrap(ctx); err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if want := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC); !c.BootstrapPublication().Equal(want) {
		t.Fatalf("publication %v after refresh, want %v", c.BootstrapPublication(), want)
	}
	f := c.Facts(ctx, "google.com")
	if f.AgeDays == nil || *f.AgeDays != 10659 {
		t.Fatalf("facts through the refreshed bootstrap: age %v (%s)", deref(f.AgeDays), f.AgeError)
	}
	if f := c.Facts(ctx, "example.cz"); !strings.Contains(f.AgeError, "no RDAP service") {
		t.Fatalf(".cz is not in the refreshed bootstrap, yet its age error is %q", f.AgeError)
	}
}
