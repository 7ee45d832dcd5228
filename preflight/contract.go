// Package preflight is payguard's one decision entry point: a PreflightInput goes in, facts are gathered
// (sanctions, domain, the caller's spend), policy.Evaluate decides, receipts signs, and a PreflightResult
// comes out. Every channel (proxy, HTTP API, MCP, CLI) calls Engine.Decide; none re-implements a rule.
package preflight

// Contract for the rest of payguard (bodies in input.go, engine.go, result.go):
//
//   // Input is SPEC §2's PreflightInput. Challenge is decoded with x402.ParsePaymentRequired.
//   type Input struct {
//       Challenge      *x402.PaymentRequired `json:"challenge,omitempty"`
//       Cart           *Cart                 `json:"cart,omitempty"`   // merchant_domain, total_usd (policy.USD, exact), pay_to, merchant_name
//       ResourceURL    string                `json:"resource_url,omitempty"`
//       ResourceMethod string                `json:"resource_method,omitempty"`
//       Rules          *policy.RulesPatch    `json:"rules,omitempty"`  // every rule optional; unknown names are an error
//       Context        *Context              `json:"context,omitempty"` // spent_today_usd (policy.USD), agent_id
//   }
//   func ParseInput(body []byte) (*Input, error)   // enforces SPEC §10 limits; errors are *InputError (channels answer 400/413)
//   type InputError struct{ Code, Message string } // Code e.g. "invalid_json", "too_deep", "too_many_options", "invalid_utf8", "field_too_long", "too_many_entries", "unknown_rule"
//
//   type Options struct {
//       Rules     policy.Rules        // the deployment's rules; Input.Rules overlays them
//       Sanctions screening.Sanctions // nil or !Ready() -> sanctions facts unknown
//       Domains   screening.Domains   // nil -> domain age and DNS unknown (offline)
//       Signer    Signer              // nil -> Decide returns ErrSigningUnavailable
//       Now       func() time.Time
//   }
//   type Signer interface { Sign(payload []byte) (jws string, err error) } // receipts.KeySet implements it
//   func New(opts Options) *Engine
//   func (e *Engine) Decide(ctx context.Context, in *Input) (*Result, error) // error only: ErrSigningUnavailable
//   func (e *Engine) DecideUnsigned(ctx context.Context, in *Input) (*Result, error) // receipt without input_sha256 and jws
//   func (e *Engine) SignReceipt(res *Result, in *Input) error                        // adds them; Decide = both
//
//   // Result is SPEC §6.1's PreflightResult.
//   type Result struct {
//       Decision         string            `json:"decision"`          // allow | hold | block
//       Reasons          []string          `json:"reasons"`
//       ChosenOption     *x402.Requirement `json:"chosen_option"`
//       ChosenIndex      int               `json:"-"`                 // index into Input.Challenge.Accepts, -1 for none/cart
//       OptionsEvaluated int               `json:"options_evaluated"`
//       Payee            *Payee            `json:"payee"`
//       Receipt          Receipt           `json:"receipt"`           // id, ts, input_sha256, decision, jws
//       DataAsOf         string            `json:"data_as_of"`
//       AmountMicros     int64             `json:"-"`                 // chosen amount in USD micro-dollars (0 when unpriced)
//   }
//
// As built (additive to the above):
//   - Cart.TotalProblem (json:"-"): total_usd missing, negative or not representable in micro-dollars is
//     a decision ("block: invalid payment amount" / "block: unsupported or malformed payment option"), not
//     an input error; a total_usd that is not a JSON number is an input error.
//   - InputError.HTTPStatus(): 413 for body_too_large, else 400. Codes also include "unknown_field",
//     "invalid_field", "invalid_challenge", "invalid_rules".
//   - MaxTextBytes (2048) bounds every text field; MaxBodyBytes, MaxDepth, MaxOptions as SPEC §10.
//   - Payee is {pay_to, network, merchant_domain, merchant_name, sanctions{screened, status, matches, note},
//     domain{checked, valid, registered_at, age_days, has_a, has_mx, note}}; null members are unknown.
//   - DataAsOf is "unknown" (DataUnknown) when no sanctions list is loaded.
//   - Receipt.InputSHA256 hashes the body as ParseInput received it; an Input built in code hashes its JSON.
//   - screen_sanctions with no list loaded holds ("hold: sanctions data unavailable"); see Engine.Decide.
//   - An Input built in code with more than MaxOptions options has only the first MaxOptions evaluated.
