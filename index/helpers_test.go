package index

// Helpers only this package's tests use, kept out of its production files (deadcode without -test
// reports what is reachable from tests alone; scripts/test.sh runs it as the lint suite).

import (
	"time"

	"github.com/payguard/payguard/store"
)

// CategoryMedian is the median price for network and asset in a category's sample, leaving out the site of
// judgedURL; hosts is the number of sites it counted (each once: the lower median of its URLs' prices).
// Entries older than maxAge before now (0 = none) or from the future are not used. hosts below
// MinCategoryHosts means the median must not be used.
func CategoryMedian(sample []store.CategoryPrice, judgedURL, network, asset string, now time.Time, maxAge time.Duration) (med uint64, hosts int) {
	return DeriveSitePrices(sample, network, asset, now, maxAge).MedianExcluding(SiteOf(judgedURL))
}
