package preflight

import (
	"time"

	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/x402"
)

// Result is SPEC §6.1's PreflightResult. Its JSON, without receipt.jws, is exactly the signed payload, so the
// receipt binds every returned field.
type Result struct {
	Decision string   `json:"decision"` // allow | hold | block
	Reasons  []string `json:"reasons"`
	// ReasonCodes are the reasons' stable codes (policy.Code*), in order: in process only, so that a channel
	// branches on them rather than on reason text. Not in the JSON (SPEC §6.1's fields, which the receipt
	// binds).
	ReasonCodes      []string          `json:"-"`
	ChosenOption     *x402.Requirement `json:"chosen_option"`
	ChosenIndex      int               `json:"-"` // index into Input.Challenge.Accepts; -1 for none or a cart
	OptionsEvaluated int               `json:"options_evaluated"`
	Payee            *Payee            `json:"payee"`
	Receipt          Receipt           `json:"receipt"`
	DataAsOf         string            `json:"data_as_of"` // sanctions list freshness (RFC 3339), or "unknown"
	// IndexEvidence is present when the engine consulted the Endpoint Index (SPEC: on responses that use
	// Index data); its data_as_of is the Index's freshness.
	IndexEvidence *IndexEvidence `json:"index_evidence,omitempty"`
	AmountMicros  int64          `json:"-"` // chosen amount in USD micro-dollars (0 when none)
}

// Receipt identifies one decision. JWS is the compact ES256 signature over the result without this member.
type Receipt struct {
	ID          string `json:"id"`           // "rcpt_" + 32 hex digits, random
	TS          string `json:"ts"`           // RFC 3339, UTC, seconds
	InputSHA256 string `json:"input_sha256"` // hex SHA-256 of the input body as received
	Decision    string `json:"decision"`
	JWS         string `json:"jws,omitempty"`
}

// Payee is what was learned about the judged payee (the chosen option's, or when none is acceptable the held
// option's a person may approve; see policy.Payee) and the merchant. It is null only when the input had no
// payment option at all. Unknown facts are stated as unknown (null, or "unknown"), never guessed.
type Payee struct {
	PayTo          string          `json:"pay_to"`  // the judged option's payTo: the chosen one, else a held one ("" when none)
	Network        string          `json:"network"` // that option's network as on the wire ("" for a cart)
	MerchantDomain string          `json:"merchant_domain"`
	MerchantName   string          `json:"merchant_name"`
	Sanctions      PayeeSanctions  `json:"sanctions"`
	Domain         PayeeDomainInfo `json:"domain"`
}

// Sanctions status values.
const (
	SanctionsClear    = "clear"
	SanctionsMatch    = "match"    // an exact address or exact name match
	SanctionsPossible = "possible" // a possible name match only
	SanctionsUnknown  = "unknown"  // not screened: see Note
)

// PayeeSanctions is the sanctions screening of the chosen payTo and the merchant name.
type PayeeSanctions struct {
	Screened bool                       `json:"screened"`
	Status   string                     `json:"status"`
	Matches  []screening.SanctionsMatch `json:"matches"`
	Note     string                     `json:"note,omitempty"` // why not screened, when it was not
}

// PayeeDomainInfo is the merchant domain's facts. Null members are unknown.
type PayeeDomainInfo struct {
	Checked      bool       `json:"checked"` // a domain checker was asked
	Valid        *bool      `json:"valid"`
	RegisteredAt *time.Time `json:"registered_at"`
	AgeDays      *int       `json:"age_days"`
	HasA         *bool      `json:"has_a"`
	HasMX        *bool      `json:"has_mx"`
	Note         string     `json:"note,omitempty"` // why a fact is unknown
}
