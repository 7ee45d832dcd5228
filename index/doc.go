// Package index is payguard's Endpoint Index: what has been observed of public x402 endpoints, and the
// facts the Index rules (policy: max_price_multiple, require_live, hold_on_payto_change) decide on.
//
// Observations come from the proxy (every 402 it decodes and every paid response it forwards, written off the
// request path by Writer) and from the opt-in prober (package index/probe); they live in the store
// (store.Endpoints), so a fleet on Redis shares them. The preflight engine reads them through Reader and turns
// them into policy.IndexFacts with Derive; the policy package itself never reads the store.
//
// Endpoints are keyed by NormalizeURL: scheme and host in lower case, the default port dropped, no query,
// fragment or credentials. A query names an input of the endpoint, not another endpoint, and keying by it
// would let a seller escape its own history by adding "?x=1".
package index
