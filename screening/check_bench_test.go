package screening_test

import (
	"path/filepath"

	"github.com/payguard/payguard/internal/realdata"

	"context"
	"testing"
	"time"

	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/screening/domain"
	"github.com/payguard/payguard/screening/domain/domaintest"
	"github.com/payguard/payguard/screening/sanctions"
)

// BenchmarkCheckCached measures a full payee check (name, address and domain) against the real 2021-07
// OFAC set with the domain's RDAP and DNS answers cached: the latency of a repeat check.
func BenchmarkCheckCached(b *testing.B) {
	// The newest complete real OFAC CSV set (testdata/ofac/PROVENANCE.md).
	list, err := sanctions.LoadDir(filepath.Join(realdata.OFACDir(b), "full_set_2021-07"))
	if err != nil {
		b.Fatal(err)
	}
	rdap := domaintest.NewRDAPServer(b)
	dnsSrv := domaintest.NewDNSServer(b, domaintest.DefaultZone())
	d := domain.New(domain.Options{RDAPBaseURL: rdap.URL, Resolver: dnsSrv.Addr, RDAPTimeout: time.Second, DNSTimeout: time.Second})
	c := screening.NewChecker(screening.CheckerOptions{Sanctions: list, Domains: d})
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		q    screening.Query
	}{
		{"domain", screening.Query{Domain: "https://www.example.com/pay"}},
		{"address", screening.Query{Address: "0x1111111111111111111111111111111111111111"}},
		{"name", screening.Query{Name: "Acme Widgets Trading Ltd"}},
		{"all", screening.Query{Name: "Acme Widgets Trading Ltd", Address: "0x1111111111111111111111111111111111111111", Domain: "https://www.example.com/pay"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if res, err := c.Check(ctx, bc.q); err != nil || res.Risk != screening.RiskLow {
				b.Fatalf("warm-up check: %v, risk %s flags %v", err, res.Risk, res.Flags)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				c.Check(ctx, bc.q)
			}
		})
	}
}
