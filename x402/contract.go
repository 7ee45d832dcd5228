package x402

// This file lists the package's functions as a contract for the rest of payguard; the bodies live in the
// files named in each comment. Do not change a signature without updating every caller.
//
// Codec (codec.go, challenge.go, requirement.go, payload.go, settle.go, jsonobj.go):
//   func DecodeHeaderJSON(value string, v any) error            // standard base64 (padding optional, as atob) JSON, bounded
//   func EncodeHeaderJSON(v any) (string, error)                 // standard base64 with padding of JSON (no HTML escaping)
//   func ParsePaymentRequired(body []byte) (*PaymentRequired, error)   // a JSON object, v1 or v2 (x402Version required)
//   func DecodePaymentRequiredHeader(value string) (*PaymentRequired, error) // v2 PAYMENT-REQUIRED (x402Version 2)
//   func (p PaymentRequired) MarshalJSON() ([]byte, error)      // keeps Unknown members; v1 writes maxAmountRequired
//   func (p *PaymentRequired) UnmarshalJSON([]byte) error       // = ParsePaymentRequired
//   func (p *PaymentRequired) Narrowed(i int) *PaymentRequired  // a deep copy whose Accepts holds only entry i; nil if out of range
//   func (r Requirement) MarshalJSON / (r *Requirement) UnmarshalJSON, same for ResourceInfo, PaymentPayload,
//        SettleResponse, VerifyResponse, FacilitatorRequest: exact member names, Unknown kept verbatim
//   func DecodePaymentPayloadHeader(value string) (*PaymentPayload, error)  // X-PAYMENT or PAYMENT-SIGNATURE
//   func ParsePaymentPayload(data []byte) (*PaymentPayload, error)          // the same, from plain JSON (MCP _meta)
//   func (p *PaymentPayload) ExactEVM() (*ExactEVMPayload, error)           // errors wrap ErrNotExactEVM
//   func (r Requirement) Equal(o Requirement) bool  // SDK's paymentRequirementsMatchAccepted(required=r, accepted=o)
//   func JSONEqual(a, b []byte) bool                // structural JSON equality (member order aside)
//   func DecodeSettleResponseHeader(value string) (*SettleResponse, error)
//   var ErrMalformed                                // wrapped by every decode error
//   const MaxBodyBytes, MaxHeaderBytes = 64 KiB; MaxDepth = 32
//
// Networks (networks.go):
//   func CAIP2(network string) (string, bool)   // "base" -> "eip155:8453"; a CAIP-2 id is returned as is if well formed
//   func V1Name(caip2 string) (string, bool)    // "eip155:8453" -> "base"
//   func IsEVMNetwork(network string) bool      // eip155:* or a v1 EVM name
//   const SolanaMainnet, SolanaDevnet           // CAIP-2 ids
//
// Assets and addresses (assets.go):
//   func LookupUSDC(network, asset string) (Asset, bool) // network as v1 name or CAIP-2; EVM asset compared case-insensitively
//   func USDCOn(network string) (Asset, bool)
//   func KnownUSDC() []Asset                             // a copy of the table
//   func IsEVMAddress(s string) bool                     // 0x + 40 hex
//   func SameAddress(a, b string) bool                   // EVM: case-insensitive; otherwise exact
//   func CanonicalAddress(s string) string               // EVM: lower case; otherwise unchanged
//
// Amounts (amount.go):
//   func ParseAtomic(s string) (uint64, error) // decimal digits only (leading zeros allowed); errors wrap
//                                                // ErrAmountNegative, ErrAmountMalformed or ErrAmountOversized (> MaxAtomic)
//   const MaxAtomic uint64 = 1e18                // largest accepted atomic amount ($1e12 of USDC)
