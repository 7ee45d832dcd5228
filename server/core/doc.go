// Package core is the one implementation of `payguard serve`'s paid operations, for every channel that sells
// them: the HTTP API (package server) and the MCP server (package server/mcp) are thin sibling renderers of
// it. An operation is prepared from its validated input (Check, Preflight, Endpoint: input errors and data
// availability, all before payment, never charged) and then sold (Sell): the free trial or the x402 payment
// (verified, not settled) → the work → if the work failed, nothing is settled → settle. Sell returns a typed
// Outcome (the work's result, the settlement, the trial count, a payment requirement or an error with its
// SPEC §9.1 code); the renderers only turn it into an HTTP answer or an MCP tool result (SPEC §8, §9).
package core
