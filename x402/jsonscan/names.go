package jsonscan

// knownNames are the member names the x402 wire and the preflight input use. A plain name found here is
// returned as this table's string instead of a copy of its bytes: every decoded challenge, payment and
// preflight input names the same dozen members, and each copy was one allocation (issue 36: the proxy decodes
// a challenge per 402). The lookup with string(b) as the key does not allocate; a name not in the table is
// copied as before. Only the allocation changes: the string is equal either way.
var knownNames = func() map[string]string {
	names := []string{
		// x402 challenges, requirements, payments and settlement answers
		"x402Version", "error", "resource", "url", "description", "mimeType", "accepts", "accepted",
		"scheme", "network", "amount", "maxAmountRequired", "asset", "payTo", "maxTimeoutSeconds", "extra",
		"name", "version", "outputSchema", "extensions", "payload", "signature", "authorization", "from", "to",
		"value", "validAfter", "validBefore", "nonce", "permit2Authorization", "transaction", "success",
		"errorReason", "errorMessage", "isValid", "invalidReason", "invalidMessage", "payer",
		"paymentPayload", "paymentRequirements",
		// the preflight input
		"challenge", "resource_url", "resource_method", "context", "spent_today_usd", "agent_id",
		"config_sha256", "merchant_name", "merchant_domain", "cart", "headers", "body", "method",
	}
	m := make(map[string]string, len(names))
	for _, n := range names {
		m[n] = n
	}
	return m
}()

// plainName is a plain string token's contents (printable ASCII, no escapes) as a string: the table's when
// it is a known name, else a copy.
func plainName(b []byte) string {
	if s, ok := knownNames[string(b)]; ok {
		return s
	}
	return string(b)
}
