// Package preflight is payguard's one decision entry point: a PreflightInput goes in, facts are gathered
// (sanctions, domain, the caller's spend, the Endpoint Index), policy.Evaluate decides, receipts signs, and
// a PreflightResult comes out. Every channel (proxy, HTTP API, MCP, CLI) calls Engine.Decide; none
// re-implements a rule (SPEC §1.2).
//
// ParseInput reads a body within SPEC §10's limits before any work: the body size, valid UTF-8, JSON depth,
// at most MaxOptions payment options, at most policy.MaxListEntries per rule list, and MaxTextBytes on
// every text field. What it refuses is an *InputError whose Code names the defect (invalid_json, too_deep,
// too_many_options, field_too_long, unknown_rule, ...) and whose HTTPStatus is 413 for an oversized body,
// 400 otherwise; channels answer it before any payment. A cart total that is missing, negative or not
// representable in micro-dollars is not an input error but a decision (block), as SPEC §5.1 rows 9 and 10
// say; a total that is not a JSON number is an input error.
//
// Engine.Decide gathers the facts the rules need and only those: the judged payee (policy.Payee) is the
// one screened, so a challenge with 32 options costs one sanctions lookup. A fact that cannot be gathered
// is unknown, never positive (SPEC §4.4): no list loaded with screen_sanctions on is a hold, an unknown
// domain age adds no reason. The only error Decide returns is receipts.ErrSigningUnavailable; every other failure is
// a decision. DecideUnsigned and SignReceipt split the two halves for the proxy, which sends an allowed
// challenge on with the receipt id alone and signs only what it refuses.
//
// The Result's JSON without receipt.jws is exactly the signed payload, so the receipt binds every returned
// field (SPEC §6.3). Payee states unknown facts as null or "unknown", never guessed; DataAsOf is "unknown"
// while no sanctions list is loaded. Receipt.InputSHA256 hashes the body as ParseInput received it; an
// Input built in code hashes its JSON encoding.
package preflight
