// Package proxy is payguard's forward proxy: goproxy wiring with an ECDSA MITM CA and a bounded
// certificate cache (proxy/mitm), interception of x402 402 challenges decided in process by the preflight
// engine, tickets that let exactly the approved payment through once, holds resolved by people, and the
// metrics and decision log around them. The proxy only asks; the engine decides. The ledger's atomic
// Reserve is the final guard on the daily cap.
//
// The proxy only proxies: its admin listener (the approval API, the in-process guard's POST /v1/decide, the
// console's backend, health) is package proxy/admin, which reaches the proxy through admin.Core, the few
// methods of adminside.go; this package never imports it, and the shapes both speak are proxy/view.
//
// # Challenges (402 from a seller)
//
// The v2 PAYMENT-REQUIRED header is read first, else a JSON body with x402Version (at most 64 KiB read,
// a leading UTF-8 byte-order mark dropped as fetch drops it).
//   - Not x402 (no header, no x402Version member): passed unchanged and counted. A body over 64 KiB is
//     passed unchanged too, unless its first 64 KiB mention x402Version: then it looks like a challenge
//     that cannot be read, and like every undecodable challenge it is refused (403), because the agent
//     would otherwise pay it unguarded. So is a body that mentions x402Version but does not parse, and one
//     still in a content coding (Go's transport asks for gzip and undoes it; another coding came unasked).
//   - With a v2 header, a body that may be a v1 challenge but cannot be read is replaced by {} when the
//     challenge is narrowed or emptied, so no v1 client pays from options the engine never judged.
//   - The engine judges the host the proxy actually requested: the challenge's resource URLs are the
//     seller's own claims and are replaced by the request URL in the engine's input.
//   - allow: the amount is reserved and a ticket recorded (method, URL, scheme, network, payTo, amount; the
//     option itself for v2's `accepted`; expiry max(maxTimeoutSeconds, 60 s)) in one store write
//     (store.Tickets.ReserveTicket: counted at once and journaled; in the bolt store committed and fsynced
//     in the background, before the paid retry can take the ticket: the payment never leaves first); the
//     challenge goes on with `accepts` narrowed to the chosen option. A v1 body next to a v2 header is
//     narrowed to the entry with the same terms (or emptied).
//   - block: 403 {"decision","reasons","receipt"}; the agent never sees a challenge it could sign.
//   - Receipts: the engine decides unsigned; a refusal's receipt and a hold's stored decision are signed
//     (preflight.Engine.SignReceipt), an allowed challenge goes on with the receipt id alone.
//   - hold: a hold is created (or joined, or an approved one released) and the request waits up to
//     hold_wait. Approved: as allow, the daily cap still applies (an approval the cap would refuse is kept,
//     not used); denied: as block; no answer: 403 with X-Payguard-Hold and Retry-After. An approval is
//     spent by the one payment that goes through on it (its ticket names the hold), not by the challenge:
//     an agent that gave up while it waited finds the approval on its retry, for as long as the hold lives
//     (hold_ttl from its creation). Its people-facing side: proxy/admin, proxy/console and proxy/notify. Only a hold can be
//     approved: the engine runs again for every 402, so a block (blocklist, sanctions, caps) outranks an
//     earlier approval.
//   - A challenge answering a payment payguard released (verify or settle failed) is passed on with
//     nothing to pay, so no second amount is reserved; paying again takes a new request.
//
// # Payments (X-PAYMENT, PAYMENT-SIGNATURE)
//
// A payment-bearing request is forwarded only if it decodes, its one EIP-3009 or Permit2 authorization (never
// both) pays the payTo and amount it names (Permit2: in the named asset), that authorization (network,
// payer, nonce: the same signature in other bytes is the same payment) was not seen before (replay), and it
// matches an unused, unexpired ticket (v2: `accepted` equals the allowed option). Without a
// ticket the engine decides on what the payload names and the payment goes on only on allow (reserving). A
// v1 payload names no asset, so it cannot be priced without a ticket and is never allowed that way: inferring
// USDC would be unsafe, since the signature may be for another token. With a ticket, a v1 EIP-3009 payment is
// taken to be in the ticket's asset: payguard does not verify signatures, and the token is only in the
// signature's EIP-712 domain. A v1 client learns options only from the narrowed (or replaced) body, so it
// has none other to sign. Non-EVM payloads are refused: their recipient cannot be read. A payment header
// declared as a request trailer is refused, and no request trailer is passed upstream: a trailer arrives
// after the body, when the request is already on its way, so it would reach the seller unchecked.
//
// An upto payment (upto.go, docs/SPEC.md §4.6) is a Permit2 witness transfer of a maximum: besides the
// above, its spender must be the x402 upto proxy, its witness facilitator the option's facilitatorAddress,
// its window open and closing within maxTimeoutSeconds. A Permit2 exact payment's spender must be the x402
// exact proxy. batch-settlement and auth-capture are refused by the engine.
//
// # Settlement
//
// The settlement header on the way back commits the reservation on success (settle.go; upto: the settled
// amount, the rest released, and a settlement outside the authorization is an alarm that holds the seller,
// alarms.go); a failure or a missing header keeps it reserved (SPEC §11.4: the budget resets only with the UTC day). A ticket never taken gives its
// reservation back after it expires (store.Tickets): the 402 was looked at, not paid. The seller's response to a released
// payment carries X-Payguard-Decision: allow and X-Payguard-Receipt with the receipt id of the decision that
// allowed it (the ticket keeps it), so the agent can log what it paid under that decision.
//
// Every X-Payguard-* header (in any spelling, headers and trailers) is removed both ways; payguard adds
// X-Payguard-Decision, X-Payguard-Receipt and X-Payguard-Hold itself, and on a released payment's response
// X-Payguard-Scheme, X-Payguard-Authorized and X-Payguard-Settled.
//
// # x402 over MCP (mcp.go, mcpanswer.go, mcpsse.go, mcpjson.go; SPEC §11.10)
//
// MCP tool calls over HTTP carry x402 in JSON-RPC: terms in a payment-required tools/call result (or a
// JSON-RPC error 402), the payment in params._meta["x402/payment"], the settlement in
// result._meta["x402/payment-response"]. A JSON request body and the answer to a tools/call (JSON, or an
// event stream read event by event; GET streams too) are read when they mention x402, strictly (valid JSON,
// depth 32, no name twice ignoring case) and at most 64 KiB a message. Terms go through decideChallenge and
// are narrowed in every place, or replaced by the refusal; a payment goes through checkPayload; a settlement
// through commitSettlement: the HTTP path's own functions, for the endpoint mcp://<host>/tool/<name>. A body
// that names nothing of x402 is not parsed.
//
// # Header spellings and upgrades
//
// One classifier (headers.go) reads every header name as the most lenient common server stack would (case,
// "_" for "-", trailing junk): a payment header in its canonical spelling is decided, in any other spelling
// refused (403). So is a response whose x402 header comes in another spelling, and response trailers never
// carry x402 or payguard headers. A request that switches protocols is decided like any other; a 101 is
// spliced only for a request that asked for it and only to WebSocket (any other protocol is refused), and
// proxy.upgrades (upgrade.go) refuses upgrades to hosts that have answered 402 by default, since bytes
// after a 101 cannot be read.
package proxy
