package x402

// This file lists the package's functions as a contract for the rest of payguard; the bodies live in the
// files named in each comment. Do not change a signature without updating every caller.
//
// Codec (codec.go):
//   func DecodeHeaderJSON(value string, v any) error            // standard base64 (with padding) JSON, bounded
//   func EncodeHeaderJSON(v any) (string, error)                 // standard base64 JSON
//   func ParsePaymentRequired(body []byte) (*PaymentRequired, error)   // a JSON object, v1 or v2 (x402Version required)
//   func DecodePaymentRequiredHeader(value string) (*PaymentRequired, error) // v2 PAYMENT-REQUIRED
//   func (p *PaymentRequired) MarshalJSON() ([]byte, error)     // keeps Unknown members; v1 writes maxAmountRequired
//   func (p *PaymentRequired) Narrowed(i int) *PaymentRequired  // a copy whose Accepts holds only entry i
//   func (r *Requirement) MarshalJSON / UnmarshalJSON, (r *ResourceInfo) ..., (p *PaymentPayload) ... keep Unknown
//   func DecodePaymentPayloadHeader(value string) (*PaymentPayload, error)  // X-PAYMENT or PAYMENT-SIGNATURE
//   func (p *PaymentPayload) ExactEVM() (*ExactEVMPayload, error)
//   func (r Requirement) Equal(o Requirement) bool  // SDK's paymentRequirementsMatchAccepted: core fields equal, extra subset
//   func DecodeSettleResponseHeader(value string) (*SettleResponse, error)
//
// Networks (networks.go):
//   func CAIP2(network string) (string, bool)   // "base" -> "eip155:8453"; a CAIP-2 id is returned as is if well formed
//   func V1Name(caip2 string) (string, bool)    // "eip155:8453" -> "base"
//   func IsEVMNetwork(network string) bool      // eip155:* or a v1 EVM name
//
// Assets and addresses (assets.go):
//   func LookupUSDC(network, asset string) (Asset, bool) // network as v1 name or CAIP-2; EVM asset compared case-insensitively
//   func USDCOn(network string) (Asset, bool)
//   func IsEVMAddress(s string) bool                     // 0x + 40 hex
//   func SameAddress(a, b string) bool                   // EVM: case-insensitive; otherwise exact
//   func CanonicalAddress(s string) string               // EVM: lower case; otherwise unchanged
//
// Amounts (amount.go):
//   func ParseAtomic(s string) (uint64, error) // decimal digits only; errors wrap ErrAmountNegative,
//                                                // ErrAmountMalformed or ErrAmountOversized (> MaxAtomic)
//   const MaxAtomic                              // largest accepted atomic amount (1e18: $1e12 of USDC)
