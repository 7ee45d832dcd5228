// Package index is payguard's Endpoint Index: what has been observed of public x402 endpoints, and the
// facts the Index rules (policy: max_price_multiple, require_live, hold_on_payto_change) decide on.
//
// Observations come from the proxy (every 402 it decodes and every paid response it forwards, written off the
// request path by Writer) and from the opt-in prober (package index/probe); they live in the store
// (store.Endpoints), so a fleet on Redis shares them. The preflight engine reads them through Reader and turns
// them into policy.IndexFacts with Derive; the policy package itself never reads the store.
//
// Endpoints are keyed by NormalizeURL, the one key every writer and reader uses: the host as CanonicalHost
// spells it, the default port dropped, the path normalized (RFC 3986, and further: ASCII case, ";params", a
// trailing slash), no query, fragment or credentials. Every spelling a server may route to one handler is
// one key, so a seller cannot escape its own history by another spelling of its URL (a 302 to /Weather, a
// "?x=1"). Beyond one URL, the Writer records each seller site's payees (site.go), so a new payee on another
// URL of the site is seen too.
//
// Evidence that moves a statistic shared between endpoints (a category's median, a site's count of payees)
// must have cost something (Costly: a settled payment, a usable probe of a listed endpoint); free evidence,
// such as an unpaid 402, describes its own endpoint only.
package index
