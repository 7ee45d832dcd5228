// Package x402 holds the x402 v1 and v2 wire types payguard reads and writes: the 402 challenge
// (PaymentRequired), the paying retry (PaymentPayload), the settlement response, their header and body
// encodings (standard base64 JSON), v1 network names and CAIP-2, the known USDC contracts, and atomic amounts.
//
// Decoding keeps every field it does not model, so a challenge narrowed by payguard and re-encoded still
// satisfies the official SDKs (which deep-compare `accepted` against the seller's requirements).
//
// Decisions worth knowing:
//
//   - Member names are matched exactly, as JavaScript does (encoding/json alone would let `"PayTo"` or
//     `"To"` stand in for `payTo`/`to`). A repeated member keeps its last value, as JSON.parse does.
//   - Members the types do not model are kept byte for byte (json.RawMessage) and written back; modelled
//     members are re-encoded from their Go values (the same JSON value). Encoding writes the modelled
//     members in the order the SDKs write them, then the unmodelled ones and the extension keys in name
//     order, so an SDK-produced challenge without extensions re-encodes to the identical bytes.
//   - Use EncodeHeaderJSON or the MarshalJSON methods for exact output: json.Marshal would HTML-escape and
//     re-compact the verbatim members (the same value, other bytes).
//   - Header values are decoded as the SDKs decode them: the standard base64 alphabet, padding optional
//     (atob); base64url, whitespace and bad lengths are errors. Values and documents are bounded
//     (MaxHeaderBytes, MaxBodyBytes, MaxDepth) and must be valid UTF-8; every decode error wraps ErrMalformed.
//   - A string member that Go cannot represent as JavaScript does (a lone surrogate escape, read as U+FFFD)
//     is an error rather than a silently different value.
//   - Atomic amounts are decimal digit strings; leading zeros are accepted ("010" is 10), see ParseAtomic.
package x402

// Header names on the wire.
const (
	HeaderPaymentRequired  = "PAYMENT-REQUIRED"   // v2 challenge (402), base64 JSON PaymentRequired
	HeaderPaymentSignature = "PAYMENT-SIGNATURE"  // v2 paying retry, base64 JSON PaymentPayload
	HeaderPaymentResponse  = "PAYMENT-RESPONSE"   // v2 settlement, base64 JSON SettleResponse
	HeaderXPayment         = "X-PAYMENT"          // v1 paying retry, base64 JSON PaymentPayload
	HeaderXPaymentResponse = "X-PAYMENT-RESPONSE" // v1 settlement, base64 JSON SettleResponse
)

// Protocol versions.
const (
	V1 = 1
	V2 = 2
)
