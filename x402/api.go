// Package x402 holds the x402 v1 and v2 wire types payguard reads and writes: the 402 challenge
// (PaymentRequired), the paying retry (PaymentPayload), the settlement response, their header and body
// encodings (standard base64 JSON), v1 network names and CAIP-2, the known USDC contracts, and atomic amounts.
//
// Decoding keeps every field it does not model, so a challenge narrowed by payguard and re-encoded still
// satisfies the official SDKs (which deep-compare `accepted` against the seller's requirements).
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
