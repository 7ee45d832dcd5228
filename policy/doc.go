// Package policy is payguard's rules: the Rules with their defaults (SPEC §3), the per-option and
// whole-payment checks, the choice of option and judged payee (SPEC §4), the reason texts (SPEC §5, written
// in reasons.go and nowhere else) and their precedence.
//
// It is pure: Evaluate takes Facts (the options as parsed, the rules, the spend, the screening and Index
// facts the engine gathered) and returns an Outcome, with no I/O and no clock of its own, so every channel
// and the client guards' decision vectors get the same answer for the same facts. Money is integers:
// USD is micro-dollars in an int64, parsed from JSON number text, and a float never decides a cap.
//
// A decision it does not know ranks as block (SPEC §4.5): nothing outside this package can turn an
// unknown into allow.
package policy
